"""PRNG key types: the implementation record (:class:`PRNGImpl`: Threefry, ``rbg`` and
``unsafe_rbg``), the key dtypes ``key<fry>``, ``key<rbg>``, ``key<urbg>`` (:class:`KeyTy`,
an extended dtype) and typed key arrays (:class:`PRNGKeyArray`).

A typed key array is an array of an extended dtype such as ``key<fry>`` overlaying
``uint32[..., *impl.key_shape]`` key data (its physical data; see
:func:`lamina.interpreters.physical_value`). Transformations see one value of type
``key<fry>[...]``; lowering and execution see the data.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from lamina.interpreters import Array, config, tracing
from lamina.ir import ExtendedDType, ShapedArray, prng_key, register_extended_dtype
from lamina.lax.base.primitives import copy_p, reshape, transpose
from lamina.lax.base.reshaping import squeeze
from lamina.lax.operators import OPERATORS
from lamina.lax.prng import rbg, threefry
from lamina.lax.prng.key_indexing import index_keys

__all__ = [
    "PRNG_IMPLS",
    "PRNG_IMPLS_BY_TAG",
    "RBG",
    "THREEFRY",
    "UNSAFE_RBG",
    "KeyTy",
    "PRNGImpl",
    "PRNGKeyArray",
    "PRNGSpec",
    "default_prng_impl",
    "key_dtype",
    "resolve_prng_impl",
]


class PRNGImpl(NamedTuple):
    """A PRNG implementation: the shape of its ``uint32`` key data, the functions on one
    key's data (``seed(seed)``, ``split(key, shape)``, ``random_bits(key, bit_width,
    shape)``, ``fold_in(key, data)``), and its name and tag."""

    key_shape: tuple[int, ...]
    seed: Callable
    split: Callable
    random_bits: Callable
    fold_in: Callable
    name: str = "<unnamed>"
    tag: str = "?"

    def __hash__(self) -> int:
        return hash(self.tag)

    def __str__(self) -> str:
        return self.tag


THREEFRY = PRNGImpl(
    (2,), threefry.raw_seed, threefry.raw_split, threefry.raw_random_bits,
    threefry.raw_fold_in, name="threefry2x32", tag="fry",
)  # fmt: skip
RBG = PRNGImpl(
    (4,), rbg.rbg_seed, rbg.rbg_split, rbg.rbg_random_bits, rbg.rbg_fold_in,
    name="rbg", tag="rbg",
)  # fmt: skip
UNSAFE_RBG = PRNGImpl(
    (4,), rbg.rbg_seed, rbg.unsafe_rbg_split, rbg.rbg_random_bits, rbg.unsafe_rbg_fold_in,
    name="unsafe_rbg", tag="urbg",
)  # fmt: skip
# The implementations by name (what ``key_impl`` names rather than describes).
PRNG_IMPLS = {impl.name: impl for impl in (THREEFRY, RBG, UNSAFE_RBG)}
# By tag, as Jaxprs print them (``random_seed[impl=fry]``).
PRNG_IMPLS_BY_TAG = {impl.tag: impl for impl in PRNG_IMPLS.values()}
# What JAX 0.10.2 registers; lamina implements the three above.
_JAX_IMPL_NAMES = ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32")


def _not_available(name: str) -> ValueError:
    names = ", ".join(f'"{n}"' for n in PRNG_IMPLS)
    return ValueError(f'PRNG implementation "{name}" is not available in lamina; only {names} are.')


def default_prng_impl() -> PRNGImpl:
    """The implementation named by the option ``jax_default_prng_impl``."""
    name = config.jax_default_prng_impl
    if name not in PRNG_IMPLS:
        raise _not_available(name)
    return PRNG_IMPLS[name]


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
    """The dtype of typed PRNG keys of one implementation, printed ``key<tag>``; each
    key is stored as ``uint32[*impl.key_shape]``."""

    type = prng_key
    physical_element_dtype = np.dtype(np.uint32)

    def __init__(self, impl: PRNGImpl):
        self._impl = impl

    @property
    def name(self) -> str:
        return f"key<{self._impl.tag}>"

    @property
    def impl(self) -> PRNGImpl:
        return self._impl

    @property
    def physical_element_shape(self) -> tuple[int, ...]:
        return self._impl.key_shape

    @property
    def itemsize(self) -> int:
        return math.prod(self._impl.key_shape) * 4

    def wrap_physical(self, data):
        return PRNGKeyArray(self._impl, data)

    def __eq__(self, other) -> bool:
        return type(other) is KeyTy and self._impl == other._impl

    def __hash__(self) -> int:
        return hash((KeyTy, self._impl))


_key_dtypes = {impl: register_extended_dtype(KeyTy(impl)) for impl in PRNG_IMPLS.values()}


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
        if spec in PRNG_IMPLS:
            return PRNG_IMPLS[spec]
        if spec in _JAX_IMPL_NAMES:
            raise _not_available(spec)
        names = ", ".join(f'"{s}"' for s in _JAX_IMPL_NAMES)
        raise ValueError(
            f'unrecognized PRNG implementation "{spec}". Did you mean one of: {names}?'
        )
    raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


def key_dtype(impl_spec=None) -> KeyTy:
    """The dtype of typed keys of the implementation ``impl_spec`` (default: the
    default implementation)."""
    return KeyTy(resolve_prng_impl(impl_spec))


# ---------------------------------------------------------------- typed key arrays


class PRNGKeyArray(Array):
    """A concrete array of PRNG keys (dtype ``key<fry>``, say): one array of an extended
    dtype, whose physical data ``_base_array`` is ``uint32[*shape, *impl.key_shape]``.

    It is one value to ``jit``, ``vmap``, ``grad`` and every other transformation
    (not a pytree of its data); inside them keys are tracers of type ``key<...>[...]``.
    """

    __array_priority__ = 100
    __hash__ = None
    weak_type = False
    # What the key-reuse checker (jax_debug_key_reuse) has seen consumed: a bool, or a
    # bool mask over the keys.
    _consumed = False

    def __init__(self, impl: PRNGImpl, base_array):
        self._impl = impl
        self._base_array = base_array
        shape = tuple(base_array.shape[: -len(impl.key_shape)])
        self.aval = ShapedArray(shape, _key_dtypes.get(impl) or KeyTy(impl))

    dtype = property(lambda self: self.aval.dtype)
    shape = property(lambda self: self.aval.shape)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.itemsize)
    committed = property(lambda self: self._base_array.committed)

    @property
    def sharding(self):
        """The keys' layout: their data's, without the key data's own dimensions."""
        s = self._base_array.sharding
        spec = getattr(s, "spec", None)
        if spec is None or not hasattr(s, "update") or len(spec) <= self.ndim:
            return s
        return s.update(spec=type(spec)(*tuple(spec)[: self.ndim]))

    device = property(lambda self: self._base_array.device)
    T = property(lambda self: self.transpose())

    def devices(self) -> set:
        return self._base_array.devices()

    def is_deleted(self) -> bool:
        return self._base_array.is_deleted()

    def delete(self) -> None:
        self._base_array.delete()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx):
        return index_keys(self, idx)

    def reshape(self, *shape, order="C"):
        if order != "C":
            raise NotImplementedError(f"key array reshape with order={order!r}")
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        shape = [operator.index(d) for d in shape]
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape[shape.index(-1)] = self.size // max(known, 1)
        return reshape(self, tuple(shape))

    def squeeze(self, axis=None):
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        return squeeze(self, tuple(a % max(self.ndim, 1) for a in axes))

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        perm = tuple(axes) if axes else tuple(reversed(range(self.ndim)))
        return transpose(self, perm)

    def ravel(self, order="C"):
        return self.reshape(self.size, order=order)

    flatten = ravel

    def block_until_ready(self):
        self._base_array.block_until_ready()
        return self

    def copy(self):
        return copy_p.bind(self)

    def __reduce__(self):
        return (PRNGKeyArray, (self._impl, self._base_array))

    def __getattr__(self, name):
        # The array methods higher layers give every array (``.at`` from lamina.numpy,
        # say), for names this class does not define.
        impl = tracing.array_methods.get(name)
        if impl is None or name.startswith("__"):
            raise AttributeError(f"'PRNGKeyArray' object has no attribute {name!r}")
        if isinstance(impl, property):
            return impl.fget(self)
        return functools.partial(impl, self)

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
            "jax.random.key_data(arr) if you wish to extract the underlying integer array."
        )

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{self._base_array}"

    __str__ = __repr__


# Arithmetic and comparisons go to lax, whose dtype checks reject keys as JAX's do.
for _name, _method in OPERATORS.items():
    if _name not in PRNGKeyArray.__dict__:
        setattr(PRNGKeyArray, _name, _method)

# Traced key arrays have the same methods (written with lax, they work on tracers too).
KeyTy.array_methods = {
    name: PRNGKeyArray.__dict__[name]
    for name in ("__getitem__", "reshape", "squeeze", "transpose", "ravel", "flatten", "T")
}
