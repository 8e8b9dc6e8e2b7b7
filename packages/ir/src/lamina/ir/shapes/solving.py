"""Finding the values of dimension variables from the actual shapes of a function's
arguments, and checking those shapes against the specification and the constraints,
with JAX 0.10.2's messages.

The same procedure serves two evaluators (``ops``): Python integers (checking concrete
arguments before a call) and the ops of a StableHLO program (the ``shape_assertion``
checks at the top of an exported ``main``). An evaluator supplies ``ge(a, b)`` and
``eq(a, b)`` (truth values of its kind), ``divmod(a, k)`` and
``check(ok, message, inputs)``, which fails with ``message.format(*inputs)``; its values
support ``+``, ``-`` and ``*`` with each other and with ints.
"""

from __future__ import annotations

from lamina.ir.shapes.dim_expr import (
    DimExpr,
    UnexpectedDimVar,
    is_symbolic_dim,
    max_dim,
    min_dim,
)
from lamina.ir.shapes.scope import SymbolicScope

__all__ = ["IntOps", "solve_dim_vars"]

_SHAPE_ERRORS = "https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors"
_SOLVABLE = (
    "https://docs.jax.dev/en/latest/export/shape_poly.html"
    "#dimension-variables-must-be-solvable-from-the-input-shapes"
)


class IntOps:
    """The evaluator over Python ints: failed checks raise ``ValueError``."""

    @staticmethod
    def ge(a, b):
        return a >= b

    @staticmethod
    def eq(a, b):
        return a == b

    @staticmethod
    def divmod(a, k):
        return divmod(a, k)

    @staticmethod
    def check(ok, message, inputs):
        if not ok:
            raise ValueError(message.format(*inputs))

    maximum = staticmethod(max)
    minimum = staticmethod(min)


def _specs_text(in_avals, name) -> str:
    return ",".join(
        f"{name(i)}.shape = {tuple(a.shape)}"
        for i, a in enumerate(in_avals)
        if any(is_symbolic_dim(d) for d in a.shape)
    )


def _unknown_var(e, env) -> tuple[str, int] | None:
    """``(v, k)`` when ``e`` (with ``env``'s variables known) is ``k*v + rest`` with
    ``v`` the only unknown variable, appearing in that one linear term; else None."""
    unknown = e.variables() - env.keys()
    if len(unknown) != 1:
        return None
    (v,) = unknown
    found = None
    for t, k in e.terms:
        if v in t.variables():
            f = t.single_factor()
            if found is not None or f is None or f.var != v:
                return None
            found = (v, k)
    return found


class _Unchecked(IntOps):
    """The evaluator over symbolic dimensions that checks nothing."""

    @staticmethod
    def ge(a, b):
        return True

    eq = ge

    @staticmethod
    def check(ok, message, inputs):
        pass

    maximum = staticmethod(max_dim)
    minimum = staticmethod(min_dim)


def solve_dim_vars(in_avals, dim_of, ops, arg_name=None, *, constraints=True) -> dict:
    """The values of the dimension variables of ``in_avals``' shapes, read from the
    actual dimensions ``dim_of(i, j)`` (of argument i, axis j), with every check of
    the shapes and (unless ``constraints`` is false) of the scope's constraints made
    through ``ops``. ``ValueError`` when some variable cannot be solved for (only
    linear terms of one unknown are). Messages name argument i ``arg_name(i)``
    (default ``args[i]``)."""
    name = arg_name or (lambda i: f"args[{i}]")
    specs = _specs_text(in_avals, name)
    env: dict = {}
    obtained: list = []  # (var, value, spec, i, j, dim value)
    pending = [
        (i, j, d)
        for i, a in enumerate(in_avals)
        for j, d in enumerate(a.shape)
        if is_symbolic_dim(d)
    ]
    scope = pending[0][2].scope if pending else None

    def message(head: str, inputs: list) -> tuple[str, list]:
        inputs = list(inputs)

        def ref(v):
            for n, x in enumerate(inputs):
                if x is v:
                    return n
            inputs.append(v)
            return len(inputs) - 1

        got = "".join(
            f"'{v}' = {{{ref(val)}}} from specification '{spec}' for dimension "
            f"{name(i)}.shape[{j}] (= {{{ref(dim)}}}), "
            for v, val, spec, i, j, dim in obtained
        )
        text = (
            f"{head} Using the following polymorphic shapes specifications: {specs}. "
            f"Obtained dimension variables: {got}. Please see {_SHAPE_ERRORS} for more details."
        )
        return text, inputs

    bad_spec = "Input shapes do not match the polymorphic shapes specification."
    used = set()
    progress = True
    while progress:
        progress = False
        for i, j, d in pending:
            if (i, j) in used:
                continue
            found = _unknown_var(d, env)
            if found is None:
                continue
            v, k = found
            dim = dim_of(i, j)
            rest = d - k * DimExpr.from_var(v, d.scope)
            known = dim - _evaluate(rest, env, ops) if _nonzero(rest) else dim
            if k == 1:
                value = known
            else:
                value, remainder = ops.divmod(known, k)
                text, inputs = message(
                    f"{bad_spec} Division had remainder {{0}} when computing the value of '{v}'.",
                    [remainder],
                )
                ops.check(ops.eq(remainder, 0), text, inputs)
            env[v] = value
            obtained.append((v, value, d, i, j, dim))
            used.add((i, j))
            text, inputs = message(
                f"{bad_spec} Expected value >= 1 for dimension variable '{v}'.", [value]
            )
            ops.check(ops.ge(value, 1), text, inputs)
            progress = True
    unsolved = {v for _, _, d in pending for v in d.variables()} - env.keys()
    if unsolved:
        names = "{" + ", ".join(repr(v) for v in sorted(unsolved)) + "}"
        left = ", ".join(
            f"'{d}' for dimension size {name(i)}.shape[{j}]"
            for i, j, d in pending
            if (i, j) not in used
        )
        raise ValueError(
            f"Cannot solve for values of dimension variables {names}. "
            "We can only solve linear uni-variate constraints. "
            f"Using the following polymorphic shapes specifications: {specs}. "
            f"Unprocessed specifications: {left}. Please see {_SOLVABLE} for more details."
        )
    for i, a in enumerate(in_avals):
        for j, d in enumerate(a.shape):
            if (i, j) in used or not is_symbolic_dim(d):
                continue  # a constant dimension is the argument type's
            dim, expected = dim_of(i, j), _evaluate(d, env, ops)
            text, inputs = message(
                f"{bad_spec} Found inconsistency between dimension size "
                f"{name(i)}.shape[{j}] (= {{0}}) and the specification '{d}' (= {{1}}).",
                [dim, expected],
            )
            ops.check(ops.eq(dim, expected), text, inputs)
    if constraints and getattr(scope, "explicit_constraints", ()):
        _check_constraints(in_avals, scope, env, ops, message)
    return env


def _check_constraints(in_avals, scope, env, ops, message) -> None:
    """The checks of the scope's explicit constraints, in order, as JAX makes them: a
    constraint that holds whatever the argument shapes (its difference is constant once
    the variables are written in terms of the argument dimensions) is not checked."""
    synthetic = SymbolicScope()
    symbolic = solve_dim_vars(
        in_avals,
        lambda i, j: DimExpr.from_var(f"args[{i}].shape[{j}]", synthetic),
        _Unchecked,
        constraints=False,
    )
    for c in scope.explicit_constraints:
        if not is_symbolic_dim(
            _evaluate(c.diff, _Normalizing(symbolic, scope, _Unchecked), _Unchecked)
        ):
            continue
        value = _evaluate(c.diff, _Normalizing(env, scope, ops), ops)
        relation = "greater or equal" if c.cmp == ">=" else "equal"
        text, inputs = message(
            f"Input shapes do not match the symbolic shape constraint {c.debug_str}. "
            f"Expected '{c.diff}' to be {relation} to 0, but found {{0}}. ",
            [value],
        )
        ops.check(ops.ge(value, 0) if c.cmp == ">=" else ops.eq(value, 0), text, inputs)


class _Normalizing(dict):
    """Variable values; a variable that an equality rewrote away (so that no argument
    shape names it) takes the value of what it was rewritten to; any other is JAX's
    ``UnexpectedDimVar``."""

    def __init__(self, env, scope, ops):
        super().__init__(env)
        self.scope, self.ops = scope, ops

    def __missing__(self, var):
        e = DimExpr.from_var(var, self.scope)
        if is_symbolic_dim(e) and e.variables() == {var}:
            raise UnexpectedDimVar(var, self.keys())
        return _evaluate(e, self, self.ops)


def _nonzero(e) -> bool:
    return is_symbolic_dim(e) or e != 0


def _evaluate(e, env, ops):
    if not is_symbolic_dim(e):
        return e
    return e.evaluate(env, getattr(ops, "maximum", max), getattr(ops, "minimum", min))
