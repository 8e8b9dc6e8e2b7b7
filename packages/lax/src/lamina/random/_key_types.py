"""PRNG key types: the implementation record (:class:`PRNGImpl`, Threefry the only one),
the key dtype ``key<fry>`` (:class:`KeyTy`, an extended dtype) and typed key arrays
(:class:`PRNGKeyArray`).

A typed key array overlays ``uint32[..., 2]`` key data. It is a pytree whose one leaf is
that data, so it passes through ``jit`` (as argument and result), ``vmap`` (over a
leading batch axis of keys), ``grad``, ``scan`` and ``while_loop`` as its data does.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from lamina.interpreters.array import Array
from lamina.ir import tree_util
from lamina.ir.dtype_kinds import ExtendedDType, prng_key, register_extended_dtype
from lamina.lax import reshape, slice_in_dim, squeeze
from lamina.lax._common import aval_of

__all__ = [
    "THREEFRY",
    "KeyTy",
    "PRNGImpl",
    "PRNGKeyArray",
    "PRNGSpec",
    "default_prng_impl",
    "key_dtype",
    "resolve_prng_impl",
]


class PRNGImpl(NamedTuple):
    """A PRNG implementation: the shape of its key data and its name and tag."""

    key_shape: tuple[int, ...]
    name: str
    tag: str

    def __str__(self) -> str:
        return self.tag


THREEFRY = PRNGImpl(key_shape=(2,), name="threefry2x32", tag="fry")
_IMPLS = {THREEFRY.name: THREEFRY}
# What JAX 0.10.2 registers; lamina implements the default one.
_JAX_IMPL_NAMES = ("philox2x32", "philox4x32", "threefry2x32", "rbg", "unsafe_rbg", "threefry4x32")


def default_prng_impl() -> PRNGImpl:
    return THREEFRY


class PRNGSpec:
    """What ``key_impl`` returns for an implementation that is not registered by name."""

    __slots__ = ("_impl",)

    def __init__(self, impl: PRNGImpl):
        self._impl = impl

    def __repr__(self) -> str:
        return f"PRNGSpec({self._impl.name!r})"

    def __str__(self) -> str:
        return str(self._impl)

    def __hash__(self) -> int:
        return hash(self._impl)

    def __eq__(self, other) -> bool:
        return isinstance(other, PRNGSpec) and self._impl == other._impl


class KeyTy(ExtendedDType):
    """The dtype of typed PRNG keys of one implementation, printed ``key<tag>``."""

    type = prng_key

    def __init__(self, impl: PRNGImpl):
        self._impl = impl

    @property
    def name(self) -> str:
        return f"key<{self._impl.tag}>"

    @property
    def itemsize(self) -> int:
        return math.prod(self._impl.key_shape) * 4

    def __eq__(self, other) -> bool:
        return type(other) is KeyTy and self._impl == other._impl

    def __hash__(self) -> int:
        return hash((KeyTy, self._impl))


register_extended_dtype(KeyTy(THREEFRY))


def resolve_prng_impl(spec) -> PRNGImpl:
    if spec is None:
        return default_prng_impl()
    if isinstance(spec, PRNGImpl):
        return spec
    if isinstance(spec, PRNGSpec):
        return spec._impl
    if isinstance(spec, KeyTy):
        return spec._impl
    if type(spec) is str:
        if spec in _IMPLS:
            return _IMPLS[spec]
        if spec in _JAX_IMPL_NAMES:
            raise ValueError(
                f'PRNG implementation "{spec}" is not available in lamina; only '
                '"threefry2x32" (the default) is implemented.'
            )
        names = ", ".join(f'"{s}"' for s in _JAX_IMPL_NAMES)
        raise ValueError(
            f'unrecognized PRNG implementation "{spec}". Did you mean one of: {names}?'
        )
    raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


def key_dtype(impl_spec=None) -> KeyTy:
    """The dtype of typed keys of the implementation ``impl_spec`` (default: Threefry)."""
    return KeyTy(resolve_prng_impl(impl_spec))


# ---------------------------------------------------------------- typed key arrays


class PRNGKeyArray(Array):
    """An array of PRNG keys (dtype ``key<fry>``) overlaying ``uint32[..., 2]`` data."""

    __array_priority__ = 100

    def __init__(self, impl: PRNGImpl, base_array):
        self._impl = impl
        self._base_array = base_array

    # Array-like attributes: the key shape is the data shape less its trailing key shape.
    dtype = property(lambda self: KeyTy(self._impl))
    shape = property(
        lambda self: tuple(aval_of(self._base_array).shape[: -len(self._impl.key_shape)])
    )
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    weak_type = False

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if any(i is Ellipsis for i in idx) or len(idx) > self.ndim:
            raise IndexError(f"Too many indices for key array of shape {self.shape}: {idx}")
        data = self._base_array
        axis = 0
        for i in idx:
            n = aval_of(data).shape[axis]
            if isinstance(i, slice):
                start, stop, step = i.indices(n)
                if step == 1:
                    data = slice_in_dim(data, start, max(start, stop), axis=axis)
                else:
                    from lamina.random._ops import take

                    picks = np.arange(start, stop, step, dtype=np.int32)
                    data = take(data, picks, axis)
                axis += 1
            else:
                j = operator.index(i)
                if not -n <= j < n:
                    raise IndexError(f"index {j} is out of bounds for axis {axis} with size {n}")
                j %= n
                data = squeeze(slice_in_dim(data, j, j + 1, axis=axis), (axis,))
        return PRNGKeyArray(self._impl, data)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        shape = list(shape)
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape[shape.index(-1)] = self.size // max(known, 1)
        return PRNGKeyArray(self._impl, reshape(self._base_array, (*shape, *self._impl.key_shape)))

    def ravel(self):
        return self.reshape(self.size)

    flatten = ravel

    def block_until_ready(self):
        self._base_array.block_until_ready()
        return self

    def copy(self):
        return PRNGKeyArray(self._impl, self._base_array)

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        from lamina.lax import eq, reduce_and

        same = eq(self._base_array, other._base_array)
        return reduce_and(same, (same.ndim - 1,))

    def __ne__(self, other):
        result = self.__eq__(other)
        if result is NotImplemented:
            return result
        from lamina.lax import bitwise_not

        return bitwise_not(result)

    __hash__ = None

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{self._base_array}"

    __str__ = __repr__


tree_util.register_pytree_node(
    PRNGKeyArray,
    lambda k: ((k._base_array,), k._impl),
    lambda impl, children: PRNGKeyArray(impl, children[0]),
)
