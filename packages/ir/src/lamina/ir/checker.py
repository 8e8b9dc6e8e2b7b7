"""Well-formedness checks for Jaxprs.

``check_jaxpr`` verifies scoping (every variable bound once, before use), that the
output variables are bound, that each equation's output types agree with its
primitive's abstract evaluation where that rule is registered (else, for a primitive
known by name only or a collective over named axes, which needs the axis sizes of the
shard_map or pmap around it, that it binds one output unless it has multiple results),
and that every equation's effects are declared by its Jaxpr. It raises
``JaxprTypeError`` naming the offending equation.
"""

from __future__ import annotations

import numpy as np

from lamina.ir.core.avals import AbstractValue, ShapedArray
from lamina.ir.core.jaxpr import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    PpContext,
    pp_eqn,
    printed_names,
)
from lamina.ir.core.primitives import (
    Primitive,
    PrimitiveRegistry,
    abstract_eval_rules,
    collective_rules,
    default_registry,
)
from lamina.ir.effects import RefEffect

__all__ = ["JaxprTypeError", "check_jaxpr"]


class JaxprTypeError(TypeError):
    """A Jaxpr is ill-formed or ill-typed. ``eqn`` is the offending equation (the
    innermost, for one inside a sub-Jaxpr), or None for a problem of no equation."""

    eqn = None


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr, *, registry: PrimitiveRegistry | None = None) -> None:
    """Raise ``JaxprTypeError`` if ``jaxpr`` is ill-formed; with ``registry``, every
    primitive must be the one registered under its name."""
    if not isinstance(jaxpr, (Jaxpr, ClosedJaxpr)):
        raise TypeError(f"check_jaxpr expects a Jaxpr or ClosedJaxpr, got {type(jaxpr).__name__}")
    try:
        names = printed_names(jaxpr)  # errors name variables as print(jaxpr) does
    except Exception:  # the checker must report even when printing itself fails
        names = PpContext()
    _check(jaxpr, registry, names)


def _check(jaxpr: Jaxpr | ClosedJaxpr, registry, names: PpContext) -> None:
    if isinstance(jaxpr, ClosedJaxpr):
        _check_consts(jaxpr)
        jaxpr = jaxpr.jaxpr
    _Checker(jaxpr, registry, names).run()


def _check_consts(closed: ClosedJaxpr) -> None:
    for var, value in zip(closed.jaxpr.constvars, closed.consts, strict=True):
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        aval = var.aval
        if shape is None or not isinstance(aval, ShapedArray):
            continue
        if tuple(shape) != aval.shape or np.dtype(dtype) != aval.dtype:
            raise JaxprTypeError(
                f"constant of type {np.dtype(dtype).name}{list(shape)} bound to constvar "
                f"of type {aval.str_short()}"
            )


def _describe(eqn: JaxprEqn, index: int, names: PpContext) -> str:
    try:
        text = pp_eqn(eqn, names)
    except Exception:  # the checker must report even when printing itself fails
        text = f"{eqn.primitive} ..."
    return f"equation {index} ({text})"


def _types_agree(expected: AbstractValue, actual: AbstractValue) -> bool:
    # Weak typing is a promotion hint, not part of a value's type.
    if isinstance(expected, ShapedArray) and isinstance(actual, ShapedArray):
        return expected.shape == actual.shape and expected.dtype == actual.dtype
    return expected == actual


def _literal_error(lit: Literal) -> str | None:
    if not isinstance(lit.aval, ShapedArray):
        return f"literal {lit.val!r} has non-array type {lit.aval}"
    value = np.asarray(lit.val)
    if value.shape != lit.aval.shape:
        return f"literal {lit.val!r} has shape {value.shape}, but its type says {lit.aval}"
    return None


class _Checker:
    def __init__(self, jaxpr: Jaxpr, registry: PrimitiveRegistry | None, names: PpContext):
        self.jaxpr = jaxpr
        self.registry = registry
        self.names = names
        self.bound: set = set()

    def name(self, var) -> str:
        return f"'{self.names.var_name(var)}'"

    def bind(self, var, where: str) -> None:
        if isinstance(var, DropVar):
            return
        if var in self.bound:
            raise JaxprTypeError(
                f"variable {self.name(var)} is bound twice, the second time in {where}"
            )
        self.bound.add(var)

    def read(self, atom, where: str) -> None:
        if isinstance(atom, Literal):
            problem = _literal_error(atom)
            if problem:
                raise JaxprTypeError(f"{problem}, in {where}")
        elif atom not in self.bound:
            raise JaxprTypeError(
                f"variable {self.name(atom)} is used before it is bound, in {where}"
            )

    def run(self) -> None:
        for var in self.jaxpr.constvars:
            self.bind(var, "the constvars")
        for var in self.jaxpr.invars:
            self.bind(var, "the invars")
        for index, eqn in enumerate(self.jaxpr.eqns):
            self.check_eqn(eqn, index)
        for atom in self.jaxpr.outvars:
            self.read(atom, "the outputs of the jaxpr")

    def check_eqn(self, eqn: JaxprEqn, index: int) -> None:
        try:
            self.check_eqn_alone(eqn, index)
        except JaxprTypeError as error:
            if error.eqn is None:
                error.eqn = eqn
            raise

    def check_eqn_alone(self, eqn: JaxprEqn, index: int) -> None:
        if not isinstance(eqn.primitive, Primitive):
            raise JaxprTypeError(
                f"equation {index} has {eqn.primitive!r} where a Primitive is expected"
            )
        where = _describe(eqn, index, self.names)
        if self.registry is not None and self.registry.lookup(eqn.primitive.name) is not (
            eqn.primitive
        ):
            raise JaxprTypeError(
                f"unknown primitive '{eqn.primitive.name}' in {where}: it is not in the "
                "registry; import the layer that defines it"
            )
        for atom in eqn.invars:
            self.read(atom, where)
        for sub in _sub_jaxprs(eqn.params):
            try:
                _check(sub, self.registry, self.names)
            except JaxprTypeError as error:
                outer = JaxprTypeError(f"{error}\n  inside a sub-jaxpr of {where}")
                outer.eqn = error.eqn or eqn
                raise outer from None
        # Effects on references the jaxpr allocates itself stay inside it.
        inputs = {id(v) for v in (*self.jaxpr.constvars, *self.jaxpr.invars)}
        undeclared = {
            e
            for e in eqn.effects - self.jaxpr.effects
            if not (isinstance(e, RefEffect) and id(e.input) not in inputs)
        }
        if undeclared:
            raise JaxprTypeError(
                f"{where} has effects {sorted(map(repr, undeclared))} that its jaxpr does not "
                "declare; add them to the jaxpr's effects"
            )
        self.check_types(eqn, where)
        for var in eqn.outvars:
            self.bind(var, where)

    def check_types(self, eqn: JaxprEqn, where: str) -> None:
        rule = abstract_eval_rules.get(eqn.primitive)
        if rule is None or _over_named_axes(eqn):
            # A primitive known by name only (JAX's declares whether it has one result),
            # or a collective over named axes, whose sizes come from the shard_map or
            # pmap around it: only the number of outputs is checked.
            known = rule is not None or default_registry.is_placeholder(eqn.primitive)
            if known and not (eqn.primitive.multiple_results or len(eqn.outvars) == 1):
                raise JaxprTypeError(
                    f"{where} binds {len(eqn.outvars)} outputs but '{eqn.primitive.name}' "
                    "has one result"
                )
            return
        try:
            out = rule(*(x.aval for x in eqn.invars), **eqn.params)
            if getattr(eqn.primitive, "effectful", False):
                out, _ = out
        except Exception as error:
            raise JaxprTypeError(
                f"abstract evaluation of '{eqn.primitive.name}' failed in {where}: {error}"
            ) from error
        expected = list(out) if eqn.primitive.multiple_results else [out]
        if len(expected) != len(eqn.outvars):
            raise JaxprTypeError(
                f"{where} binds {len(eqn.outvars)} outputs but '{eqn.primitive.name}' "
                f"produces {len(expected)}"
            )
        for position, (want, var) in enumerate(zip(expected, eqn.outvars, strict=True)):
            if not isinstance(want, AbstractValue):
                raise JaxprTypeError(
                    f"abstract evaluation of '{eqn.primitive.name}' gave {want!r} for output "
                    f"{position} of {where}, which is not a type"
                )
            if not _types_agree(want, var.aval):
                raise JaxprTypeError(
                    f"output {position} of {where} has type {var.aval.str_short(True)} but "
                    f"'{eqn.primitive.name}' produces {want.str_short(True)}"
                )


def _over_named_axes(eqn: JaxprEqn) -> bool:
    collective = collective_rules.get(eqn.primitive)
    try:
        return collective is not None and bool(collective[0](eqn.params))
    except Exception:  # params the rule cannot read: abstract evaluation reports them
        return False


def _sub_jaxprs(params: dict):
    stack = list(params.values())
    while stack:
        value = stack.pop()
        if isinstance(value, (Jaxpr, ClosedJaxpr)):
            yield value
        elif isinstance(value, (tuple, list)):
            stack.extend(value)
