"""Symbolic scopes: the constraints shared by the dimension expressions of one
function's argument shapes, and ``symbolic_shape``, which reads shapes in a scope."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

from lamina.ir.shapes.dim_expr import MOD, DimExpr, Term, is_symbolic_dim
from lamina.ir.shapes.shape_spec import parse_shape_spec
from lamina.ir.tracebacks import is_lamina_file

__all__ = ["SymbolicConstraint", "SymbolicScope", "symbolic_shape"]


@dataclass(frozen=True)
class SymbolicConstraint:
    """``e1 >= e2`` (``cmp`` is ``">="``) or ``e1 == e2``, as the user wrote it."""

    debug_str: str
    cmp: str
    e1: Any
    e2: Any
    diff: Any  # e1 - e2, computed before this constraint's own rule applied


def _user_location() -> str:
    frame = sys._getframe(1)
    while frame is not None and is_lamina_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return "unknown"
    col = 0
    try:
        positions = list(frame.f_code.co_positions())
        col = positions[frame.f_lasti // 2][2] or 0
    except (AttributeError, IndexError):
        pass
    return f"{frame.f_code.co_filename}:{frame.f_lineno}:{col} ({frame.f_code.co_name})"


def _constant(e) -> int | None:
    return e.constant_value() if is_symbolic_dim(e) else e


class SymbolicScope:
    """The scope of symbolic dimension expressions, holding their constraints.

    Expressions that meet (in arithmetic, comparisons, or the shapes of one function's
    arguments) must share one scope. ``constraints`` are strings ``e1 >= e2``,
    ``e1 <= e2`` or ``e1 == e2``; an equality's left side must be one term (times a
    constant), which is then rewritten to its right side wherever it appears.
    """

    def __init__(self, constraints_str=()):
        if isinstance(constraints_str, str):
            raise ValueError(
                f"The symbolic constraints should be a sequence of strings. Got {constraints_str!r}"
            )
        self._location = _user_location()
        self.explicit_constraints: list[SymbolicConstraint] = []
        # t -> (after, k): ``k * t == after``, applied as expressions are built.
        self.normalization_rules: dict[Term, tuple[Any, int]] = {}
        # ``c >= 0`` for each inequality (and what equalities of max/min imply).
        self.inequalities: list[DimExpr] = []
        # bounds of single terms read from the inequalities on them
        self.term_bounds: dict[Term, tuple[float, float]] = {}
        for c in constraints_str:
            self._add_constraint_str(c)

    def __str__(self):
        text = f"{id(self)} created at {self._location}"
        if self.explicit_constraints:
            text += " with constraints:\n" + "\n".join(
                f"  {c.debug_str}" for c in self.explicit_constraints
            )
        return text

    __repr__ = __str__

    def _add_constraint_str(self, c_str) -> None:
        if not isinstance(c_str, str):
            raise ValueError(f"SymbolicScope constraint must be a string: got {c_str!r}")
        for op in ("==", ">=", "<="):
            pos = c_str.find(op)
            if pos >= 0:
                break
        else:
            raise ValueError("Constraint parsing error: must contain one of '==' or '>=' or '<='")
        left, right = c_str[:pos], c_str[pos + 2 :]
        (e1,) = parse_shape_spec(left, None, repr(left), self)
        (e2,) = parse_shape_spec(right, None, repr(right), self)
        if op == "<=":
            e1, e2 = e2, e1
        cmp = "==" if op == "==" else ">="
        self._add_constraint(SymbolicConstraint(c_str, cmp, e1, e2, e1 - e2))

    def _add_constraint(self, c: SymbolicConstraint) -> None:
        if not is_symbolic_dim(c.diff):
            if (c.cmp == "==" and c.diff != 0) or (c.cmp == ">=" and c.diff < 0):
                raise ValueError(f"Unsatisfiable explicit constraint: {c.debug_str}")
            return
        if c.cmp == ">=":
            self._add_inequality(c.diff)
        else:
            self._add_equality(c)
        self.explicit_constraints.append(c)

    def _add_equality(self, c: SymbolicConstraint) -> None:
        if not is_symbolic_dim(c.e1) or len(c.e1.terms) != 1:
            raise ValueError(
                f"Invalid equality constraint: {c.e1} == {c.e2}. "
                "The left-hand-side must be of the form `term * coefficient`."
            )
        ((before, k),) = c.e1.terms
        if before in self.normalization_rules:
            raise NotImplementedError(
                f"Found multiple equality constraints with the same left-hand-side: {before}"
            )
        f = before.single_factor()
        derived = None
        if (
            f is not None
            and f.operation == MOD
            and k == 1
            and c.e2 == 0
            and (m := _constant(f.operands[1])) is not None
        ):
            # mod(e, m) == 0 implies m * floordiv(e, m) == e (its difference taken, as
            # JAX's, before the rule below would fold it to 0).
            q = m * DimExpr.from_operation("floordiv", *f.operands, scope=self)
            e = f.operands[0]
            derived = SymbolicConstraint(f"{q} == {e}", "==", q, e, q - e)
        self.normalization_rules[before] = (c.e2, k)
        if f is not None and f.operation is not None and f.operation != MOD:
            # max(a, b) == e implies e >= a and e >= b (min: e <= a, e <= b).
            for opnd in f.operands:
                d = c.e2 - k * opnd if f.operation == "max" else k * opnd - c.e2
                if is_symbolic_dim(d):
                    self._add_inequality(d)
        if derived is not None:
            self._add_constraint(derived)

    def _add_inequality(self, diff) -> None:
        self.inequalities.append(diff)
        nonconst = [(t, k) for t, k in diff.terms if not t.is_constant]
        if len(nonconst) == 1:
            (t, k), c = nonconst[0], diff.terms[-1][1] if diff.terms[-1][0].is_constant else 0
            lb, ub = self.term_bounds.get(t, (-math.inf, math.inf))
            if k > 0:
                lb = max(lb, math.ceil(-c / k))
            else:
                ub = min(ub, math.floor(c / -k))
            self.term_bounds[t] = (lb, ub)


def symbolic_shape(shape_spec, *, constraints=(), scope=None, like=None) -> tuple:
    """The dimensions of a shape specification such as ``"b, 2*n"``: integers and
    symbolic expressions, in ``scope`` (or a new scope with ``constraints``); ``like``
    fills the placeholders ``_`` and ``...``."""
    spec_repr = repr(shape_spec)
    if shape_spec is None:
        shape_spec = "..."
    elif not isinstance(shape_spec, str):
        raise ValueError(f"polymorphic shape spec should be None or a string. Found {spec_repr}.")
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    return parse_shape_spec(shape_spec, like, spec_repr, scope)
