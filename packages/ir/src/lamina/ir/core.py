"""Abstract values and the Jaxpr IR: variables, literals, equations, Jaxprs.

Variables are compared by identity, as binders are; whole Jaxprs are compared
structurally (up to renaming of variables), so a Jaxpr read back from its printed text
equals the original.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lamina.ir import dtypes
from lamina.ir.effects import Effect, no_effects

__all__ = [
    "AbstractToken",
    "AbstractValue",
    "ClosedJaxpr",
    "DropVar",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "ShapedArray",
    "SourceInfo",
    "Var",
    "abstract_token",
    "is_extended_aval",
    "new_jaxpr_eqn",
    "physical_aval",
]


class AbstractValue:
    """The type of a value in a Jaxpr: what tracing knows without the data."""

    def str_short(self, short_dtypes: bool = False) -> str:
        raise NotImplementedError


def _canonical_shape(shape) -> tuple:
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of dimensions, got {shape!r}") from None
    for d in dims:
        if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            if d < 0:
                raise ValueError(f"shape dimensions must be non-negative, got shape {dims}")
        elif not hasattr(d, "__index__") and not _is_symbolic_dim(d):
            raise TypeError(f"shape dimensions must be integers, got {d!r} in shape {dims}")
    return tuple(operator.index(d) if isinstance(d, np.integer) else d for d in dims)


def _is_symbolic_dim(d) -> bool:
    # Symbolic dimensions (shape polymorphism, added by the export layer) mark themselves.
    return getattr(d, "is_symbolic_dim", False)


class ShapedArray(AbstractValue):
    """An array of known shape and dtype; ``weak_type`` marks Python-scalar provenance."""

    __slots__ = ("dtype", "shape", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = _canonical_shape(shape)
        self.dtype = dtypes.dtype(dtype)
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def update(self, shape=None, dtype=None, weak_type=None) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def __eq__(self, other):
        return (
            type(other) is ShapedArray
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def str_short(self, short_dtypes: bool = False) -> str:
        name = dtypes.short_dtype_name(self.dtype) if short_dtypes else self.dtype.name
        return f"{name}[{','.join(str(d) for d in self.shape)}]"

    def __str__(self):
        return ("~" if self.weak_type else "") + self.str_short()

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"


def is_extended_aval(aval) -> bool:
    """Whether ``aval`` is an array of an extended dtype (PRNG keys, say)."""
    return isinstance(aval, ShapedArray) and isinstance(aval.dtype, dtypes.ExtendedDType)


def physical_aval(aval):
    """The type of the data that stands for ``aval`` on a device: an extended dtype's
    physical element shape appended to the shape, its physical dtype; other abstract
    values are returned as they are (``key<fry>[3]`` is ``u32[3,2]``)."""
    if not is_extended_aval(aval):
        return aval
    dt = aval.dtype
    return ShapedArray((*aval.shape, *dt.physical_element_shape), dt.physical_element_dtype)


class AbstractToken(AbstractValue):
    """The type of tokens, which thread ordering through side-effecting operations."""

    def str_short(self, short_dtypes: bool = False) -> str:
        return "Tok"

    def __eq__(self, other):
        return isinstance(other, AbstractToken)

    def __hash__(self):
        return hash(AbstractToken)

    def __repr__(self):
        return "AbstractToken()"


abstract_token = AbstractToken()

_var_ids = itertools.count()


class Var:
    """A binder in a Jaxpr. Identity is the variable; ``suffix`` decorates printed names."""

    __slots__ = ("_id", "aval", "suffix")

    def __init__(self, aval: AbstractValue, suffix: str = ""):
        if not isinstance(aval, AbstractValue):
            raise TypeError(f"Var needs an abstract value, got {aval!r}")
        self.aval = aval
        self.suffix = suffix
        self._id = next(_var_ids)

    def __lt__(self, other: Var) -> bool:
        return self._id < other._id

    def __repr__(self):
        return f"Var(id={self._id}){self.suffix}:{self.aval.str_short()}"


class DropVar(Var):
    """An output binder whose value is unused; printed as ``_``."""

    __slots__ = ()

    def __repr__(self):
        return f"_:{self.aval.str_short()}"


class Literal:
    """A constant scalar written inline in an equation, e.g. ``2.0:f32[]``."""

    __slots__ = ("aval", "val")

    def __init__(self, val, aval: AbstractValue):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val!r}:{self.aval.str_short(short_dtypes=True)})"


@dataclass(frozen=True)
class SourceInfo:
    """Where an equation came from: a traceback (list of frames) and a name stack."""

    traceback: tuple = ()
    name_stack: str = ""


_no_source_info = SourceInfo()


class JaxprEqn:
    """``outvars = primitive[params] invars``, with its effects and provenance."""

    __slots__ = ("ctx", "effects", "invars", "outvars", "params", "primitive", "source_info")

    def __init__(self, invars, outvars, primitive, params, effects, source_info, ctx=None):
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.primitive = primitive
        self.params = dict(params)
        self.effects = frozenset(effects)
        self.source_info = source_info
        self.ctx = ctx

    def replace(self, **changes) -> JaxprEqn:
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return JaxprEqn(**fields)

    def __repr__(self):
        from lamina.ir.pretty import pp_eqn

        return pp_eqn(self)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects, source_info=None):
    return JaxprEqn(invars, outvars, primitive, params, effects, source_info or _no_source_info)


class Jaxpr:
    """A closed-scope program: constants and inputs bound, equations in order, outputs."""

    __slots__ = ("_hash", "constvars", "debug_info", "effects", "eqns", "invars", "outvars")

    def __init__(
        self,
        constvars: Sequence[Var],
        invars: Sequence[Var],
        outvars: Sequence[Var | Literal],
        eqns: Sequence[JaxprEqn],
        effects: frozenset[Effect] = no_effects,
        debug_info: Any = None,
    ):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.effects = frozenset(effects)
        self.debug_info = debug_info
        self._hash = None

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def replace(self, **changes) -> Jaxpr:
        fields = {n: getattr(self, n) for n in self.__slots__ if n != "_hash"}
        fields.update(changes)
        return Jaxpr(**fields)

    def pretty_print(self, **settings) -> str:
        from lamina.ir.pretty import pp_jaxpr

        return pp_jaxpr(self, **settings)

    def __str__(self):
        return self.pretty_print()

    __repr__ = __str__

    def __eq__(self, other):
        from lamina.ir.equality import jaxprs_equal

        return isinstance(other, Jaxpr) and jaxprs_equal(self, other)

    def __hash__(self):
        if self._hash is None:
            from lamina.ir.equality import jaxpr_fingerprint

            self._hash = hash(jaxpr_fingerprint(self))
        return self._hash


class ClosedJaxpr:
    """A Jaxpr together with the values of its constvars."""

    __slots__ = ("consts", "jaxpr")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]):
        if len(jaxpr.constvars) != len(consts):
            raise ValueError(
                f"ClosedJaxpr got {len(consts)} constants for {len(jaxpr.constvars)} constvars"
            )
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    effects = property(lambda self: self.jaxpr.effects)
    literals = property(lambda self: self.consts)

    def map_jaxpr(self, f) -> ClosedJaxpr:
        return ClosedJaxpr(f(self.jaxpr), self.consts)

    def replace(self, *, jaxpr=None, consts=None) -> ClosedJaxpr:
        return ClosedJaxpr(
            self.jaxpr if jaxpr is None else jaxpr, self.consts if consts is None else consts
        )

    def pretty_print(self, **settings) -> str:
        return self.jaxpr.pretty_print(**settings)

    def __str__(self):
        return self.pretty_print()

    __repr__ = __str__

    def __eq__(self, other):
        from lamina.ir.equality import values_equal

        return (
            isinstance(other, ClosedJaxpr)
            and self.jaxpr == other.jaxpr
            and len(self.consts) == len(other.consts)
            and all(values_equal(a, b) for a, b in zip(self.consts, other.consts, strict=True))
        )

    def __hash__(self):
        return hash(self.jaxpr)
