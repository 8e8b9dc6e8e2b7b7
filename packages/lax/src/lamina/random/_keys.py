"""The key functions of ``jax.random`` (``key``, ``PRNGKey``, ``split``, ``fold_in``,
``bits``, ``key_data``, ``wrap_key_data``, ``key_impl``, ``key_dtype``, ``clone``) and the
key check every sampler starts with. Every function accepts typed key arrays (see
:mod:`._key_types`) and legacy raw keys (``uint32[2]`` arrays, what ``PRNGKey``
returns); functions returning keys return the kind they were given.
"""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters import Array
from lamina.ir import ShapedArray, dtypes
from lamina.lax._common import aval_of
from lamina.random._key_prims import (
    random_bits,
    random_clone,
    random_fold_in,
    random_seed,
    random_split,
    random_unwrap,
    random_wrap,
)
from lamina.random._key_types import (
    _IMPLS,
    THREEFRY,
    KeyTy,
    PRNGImpl,
    PRNGKeyArray,
    PRNGSpec,
    default_prng_impl,
    key_dtype,
    resolve_prng_impl,
)

__all__ = [
    "PRNGImpl",
    "PRNGKey",
    "PRNGKeyArray",
    "PRNGSpec",
    "bits",
    "check_prng_key",
    "clone",
    "default_prng_impl",
    "fold_in",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "split",
    "wrap_key_data",
]


def _is_typed_key(x) -> bool:
    aval = getattr(x, "aval", None)
    return isinstance(aval, ShapedArray) and isinstance(aval.dtype, KeyTy)


def _check_key_data(impl: PRNGImpl, data) -> None:
    if not all(hasattr(data, attr) for attr in ("ndim", "shape", "dtype")):
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data to have ndim, shape, "
            f"and dtype attributes. Got {data}"
        )
    if data.ndim < 1:
        raise TypeError(
            f"JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got "
            f"ndim={data.ndim}"
        )
    if tuple(data.shape[-len(impl.key_shape) :]) != impl.key_shape:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.shape to end with "
            f"{impl.key_shape}; got shape={tuple(data.shape)} for impl={impl!r}"
        )
    if data.dtype != np.uint32:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got "
            f"dtype={data.dtype}"
        )


def _as_array(x):
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x)
    return x


def check_prng_key(name: str, key, *, allow_batched: bool = False):
    """``(typed key, was_typed)`` for a typed or raw key ``key``: raw ``uint32[..., 2]``
    data is wrapped (``random_wrap``), as JAX does."""
    if _is_typed_key(key):
        typed_key, typed = key, True
    elif isinstance(key, (Array, np.ndarray, np.generic, int, float, bool, complex)):
        data = _as_array(key)
        _check_key_data(THREEFRY, data)
        typed_key, typed = random_wrap(data, THREEFRY), False
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed_key.ndim:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{tuple(key.shape)} != (). Use jax.vmap for batching."
        )
    return typed_key, typed


def _return_keys(typed: bool, keys):
    return keys if typed else random_unwrap(keys)


# ---------------------------------------------------------------- key functions


def canonicalize_shape(shape, name: str = "") -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints) as a tuple, with JAX's errors."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            "Shapes must be 1D sequences of concrete values of integer type, got "
            f"{tuple(shape) if isinstance(shape, (list, tuple)) else shape}."
        ) from None
    if any(d < 0 for d in out):
        raise ValueError(f"{name or 'shape'}: negative dimensions are not allowed, got {out}.")
    return out


def _key(ctor_name: str, seed, impl_spec):
    impl = resolve_prng_impl(impl_spec)
    if _is_typed_key(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(
            f"{ctor_name} accepts a scalar seed, but was given an array of shape "
            f"{np.shape(seed)} != (). Use jax.vmap for batching"
        )
    if isinstance(seed, int) and not isinstance(seed, bool):
        # Python ints go through int64 (as JAX does), then the default integer type.
        seed = np.asarray(np.int64(seed)).astype(dtypes.canonicalize_dtype(np.int64))
    dtype = aval_of(seed).dtype
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    return random_seed(seed, impl)


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (dtype ``key<fry>``, shape ``()``) made from an integer seed."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    return _key("key", seed, impl)


def PRNGKey(seed, *, impl=None):
    """A legacy raw PRNG key: the ``uint32[2]`` data of ``key(seed)``."""
    return random_unwrap(_key("PRNGKey", seed, impl))


def fold_in(key, data):
    """A new key from ``key`` and the integer scalar ``data`` (taken as ``uint32``)."""
    raw, typed = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(
            "fold_in accepts a scalar, but was given an array of"
            f"shape {np.shape(data)} != (). Use jax.vmap for batching."
        )
    if isinstance(data, int) and not 0 <= data <= 0xFFFFFFFF:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    from lamina.lax import convert_element_type

    return _return_keys(typed, random_fold_in(raw, convert_element_type(data, np.uint32)))


def split_shape(num) -> tuple[int, ...]:
    shape = tuple(num) if isinstance(num, (tuple, list)) else (num,)
    return canonicalize_shape(shape, "split")


def split(key, num=2):
    """``num`` new keys (or an array of keys of shape ``num``) from ``key``."""
    raw, typed = check_prng_key("split", key)
    return _return_keys(typed, random_split(raw, split_shape(num)))


def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniform random bits: unsigned integers of ``dtype`` (default ``uint32``)."""
    raw, _ = check_prng_key("bits", key)
    if dtype is None:
        dtype = dtypes.default_uint_dtype()
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    shape = canonicalize_shape(shape, "bits")
    return random_bits(raw, np.dtype(dtype).itemsize * 8, shape)


def key_data(keys):
    """The ``uint32[..., 2]`` data under keys (typed, or raw ones wrapped first)."""
    typed_keys, _ = check_prng_key("key_data", keys, allow_batched=True)
    return random_unwrap(typed_keys)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys overlaying ``key_bits_array`` (``uint32[..., 2]``)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError(
                "Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data"
            )
        impl = dtype
    impl = resolve_prng_impl(impl)
    data = _as_array(key_bits_array)
    _check_key_data(impl, data)
    return random_wrap(data, impl)


def key_impl(keys):
    """The name of the PRNG implementation of ``keys``."""
    if _is_typed_key(keys):
        impl = keys.dtype._impl
    else:
        check_prng_key("key_impl", keys, allow_batched=True)
        impl = THREEFRY
    return impl.name if impl.name in _IMPLS else PRNGSpec(impl)


def clone(key):
    """A copy of ``key`` (for JAX's key-reuse checker, which lamina does not have)."""
    return random_clone(key)
