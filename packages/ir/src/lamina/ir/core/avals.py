"""Abstract values: the types of the values in a Jaxpr (arrays of a shape and dtype,
tokens, and mutable references to arrays)."""

from __future__ import annotations

import math
import operator

import numpy as np

from lamina.ir import dtypes

__all__ = [
    "AbstractRef",
    "AbstractToken",
    "AbstractValue",
    "ShapedArray",
    "abstract_token",
    "axis_ordered",
    "is_extended_aval",
    "physical_aval",
    "register_aval_sharding",
    "set_vma_axis_order",
]


class AbstractValue:
    """The type of a value in a Jaxpr: what tracing knows without the data."""

    def str_short(self, short_dtypes: bool = False) -> str:
        raise NotImplementedError


def _canonical_shape(shape) -> tuple:
    if type(shape) is tuple:  # the common case: a tuple of sizes, as it is
        for d in shape:
            if type(d) is not int or d < 0:
                break
        else:
            return shape
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
    """An array of known shape and dtype; ``weak_type`` marks Python-scalar provenance;
    ``vma`` (in a ``shard_map`` body) names the manual mesh axes the value varies over."""

    __slots__ = ("dtype", "shape", "type_sharding", "vma", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False, vma=frozenset(), sharding=None):
        self.shape = _canonical_shape(shape)
        self.dtype = dtypes.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.vma = vma if type(vma) is frozenset else frozenset(vma)
        # The layout over a mesh with Explicit axes the type records (None: none).
        self.type_sharding = sharding

    ndim = property(lambda self: len(self.shape))

    @property
    def sharding(self):
        """The layout the type records (``jax.typeof(x).sharding``), as the sharding
        layer describes it (see :func:`register_aval_sharding`)."""
        if self.type_sharding is not None:
            return self.type_sharding
        if _aval_sharding[0] is None:
            raise AttributeError("ShapedArray.sharding needs lamina.sharding to be loaded")
        return _aval_sharding[0](self)

    @property
    def size(self) -> int:
        if any(_is_symbolic_dim(d) for d in self.shape):
            return math.prod(self.shape)  # a symbolic expression
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def update(
        self, shape=None, dtype=None, weak_type=None, vma=None, sharding=None
    ) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            self.vma if vma is None else vma,
            sharding if sharding is not None else self._kept_sharding(shape),
        )

    def _kept_sharding(self, shape):
        # A new shape drops the layout (its rank or splits may no longer fit).
        if shape is None or tuple(shape) == self.shape:
            return self.type_sharding
        return None

    def to_tangent_aval(self) -> ShapedArray:
        """The type of this type's tangents: itself for an inexact dtype, else float0
        (integers, booleans and extended dtypes such as PRNG keys)."""
        dtype = self.dtype
        if isinstance(dtype, dtypes.ExtendedDType) or dtype == dtypes.float0:
            return self.update(dtype=dtypes.float0)
        if not dtypes.issubdtype(dtype, np.inexact):
            return self.update(dtype=dtypes.float0)
        return self

    def __eq__(self, other):
        return (
            type(other) is ShapedArray
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
            and self.vma == other.vma
            and self.type_sharding == other.type_sharding
        )

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type, self.vma, self.type_sharding))

    def str_short(self, short_dtypes: bool = False) -> str:
        name = dtypes.short_dtype_name(self.dtype) if short_dtypes else self.dtype.name
        if isinstance(self.dtype, np.dtype) and self.dtype == dtypes.float0:
            name = "float0"
        dims = [str(d) for d in self.shape]
        if self.type_sharding is not None:
            dims = [d + _split_str(e) for d, e in zip(dims, _spec_entries(self), strict=False)]
        return f"{name}[{','.join(dims)}]{_vma_str(self.vma)}"

    def __str__(self):
        return ("~" if self.weak_type else "") + self.str_short()

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"


def _spec_entries(aval) -> tuple:
    entries = tuple(aval.type_sharding.spec)
    return entries + (None,) * (len(aval.shape) - len(entries))


def _split_str(entry) -> str:
    # ``16@x``: the dimension is split over ``x``; ``16@(x,y)`` over both.
    if entry is None:
        return ""
    if isinstance(entry, tuple):
        return f"@({','.join(str(n) for n in entry)})" if len(entry) > 1 else f"@{entry[0]}"
    return f"@{entry}"


# The order mesh axes are printed in (``{V:(x,y)}``): that of the last mesh a body
# was traced over, as JAX prints them in its mesh's order.
_axis_order: dict = {}


def set_vma_axis_order(names) -> None:
    """Print varying axes in the order of ``names`` (a mesh's axis names)."""
    _axis_order.update({n: i for i, n in enumerate(names)})


def axis_ordered(names) -> tuple:
    """``names`` in the order of the mesh last traced over."""
    return tuple(sorted(names, key=lambda n: (_axis_order.get(n, len(_axis_order)), str(n))))


def _vma_str(vma) -> str:
    if not vma:
        return ""
    names = axis_ordered(vma)
    text = ",".join(str(n) for n in names)
    return f"{{V:{text if len(names) == 1 else f'({text})'}}}"


# The function giving an aval's sharding: set by the sharding layer, which owns the
# sharding types (this layer cannot import them).
_aval_sharding: list = [None]


def register_aval_sharding(rule) -> None:
    """Make ``rule(aval)`` the answer of ``ShapedArray.sharding``."""
    _aval_sharding[0] = rule


# An aval's dtype is the dtype of a value that exists: promotion keeps it as it is.
dtypes.register_uncanonicalized_type(ShapedArray)


def is_extended_aval(aval) -> bool:
    """Whether ``aval`` is an array of an extended dtype (PRNG keys, say)."""
    if not isinstance(aval, ShapedArray):
        return False
    dtype = aval.dtype
    # NumPy's dtypes first: a plain isinstance, cheaper than the ABC's check.
    return not isinstance(dtype, np.dtype) and isinstance(dtype, dtypes.ExtendedDType)


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


class AbstractRef(AbstractValue):
    """The type of a mutable reference to an array of type ``inner_aval``
    (``Ref{f32[3]}``). Its shape and dtype are those of the array it refers to."""

    __slots__ = ("inner_aval", "kind", "memory_space")

    def __init__(self, inner_aval: AbstractValue, memory_space=None, kind=None):
        if not isinstance(inner_aval, AbstractValue):
            raise TypeError(f"AbstractRef needs an abstract value, got {inner_aval!r}")
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: len(self.inner_aval.shape))
    size = property(lambda self: self.inner_aval.size)
    weak_type = property(lambda self: getattr(self.inner_aval, "weak_type", False))

    def update(self, inner_aval=None, memory_space=None, kind=None) -> AbstractRef:
        return AbstractRef(
            self.inner_aval if inner_aval is None else inner_aval,
            self.memory_space if memory_space is None else memory_space,
            self.kind if kind is None else kind,
        )

    def __eq__(self, other):
        return (
            type(other) is AbstractRef
            and self.inner_aval == other.inner_aval
            and self.memory_space == other.memory_space
        )

    def __hash__(self):
        return hash((AbstractRef, self.inner_aval, self.memory_space))

    def str_short(self, short_dtypes: bool = False) -> str:
        inner = self.inner_aval.str_short(short_dtypes)
        space = "" if self.memory_space is None else f"<{self.memory_space}>"
        return f"Ref{space}{{{inner}}}"

    __str__ = __repr__ = str_short
