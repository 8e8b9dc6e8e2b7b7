"""The key functions of ``jax.random``: ``key``, ``PRNGKey``, ``split``, ``fold_in``,
``bits``, ``key_data``, ``key_impl``, ``clone`` (``wrap_key_data`` and ``key_dtype`` are
lax's), and :func:`split_keys`, the samplers' way to split a key. Every function accepts
typed key arrays and legacy raw keys (``uint32`` key data, what ``PRNGKey`` returns, in
the default implementation); functions returning keys return the kind they were given,
or typed keys under the option ``jax_enable_custom_prng``."""

from __future__ import annotations

import numpy as np

from lamina import lax
from lamina.interpreters import config
from lamina.ir import dtypes
from lamina.random.arguments import canonicalize_shape, with_out_sharding

__all__ = [
    "PRNGKey",
    "bits",
    "clone",
    "fold_in",
    "key",
    "key_data",
    "key_impl",
    "split",
    "split_keys",
]


def _return_keys(typed: bool, keys):
    if typed or config.jax_enable_custom_prng:
        return keys
    return lax.random_unwrap(keys)


def _key(ctor_name: str, seed, impl_spec):
    impl = lax.resolve_prng_impl(impl_spec)
    if lax.is_typed_key(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(
            f"{ctor_name} accepts a scalar seed, but was given an array of shape "
            f"{np.shape(seed)} != (). Use jax.vmap for batching"
        )
    if isinstance(seed, int) and not isinstance(seed, bool):
        # Python ints go through int64 (as JAX does), then the default integer type.
        seed = np.asarray(np.int64(seed)).astype(dtypes.canonicalize_dtype(np.int64))
    dtype = lax.aval_of(seed).dtype
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    return lax.random_seed(seed, impl)


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (shape ``()``, dtype ``key<fry>`` for the default Threefry) made
    from an integer seed."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    return _key("key", seed, impl)


def PRNGKey(seed, *, impl=None):
    """A legacy raw PRNG key: the ``uint32`` data of ``key(seed)`` (the typed key
    itself under ``jax_enable_custom_prng``)."""
    return _return_keys(False, _key("PRNGKey", seed, impl))


def fold_in(key, data):
    """A new key from ``key`` and the integer scalar ``data`` (taken as ``uint32``)."""
    raw, typed = lax.check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(
            "fold_in accepts a scalar, but was given an array of"
            f"shape {np.shape(data)} != (). Use jax.vmap for batching."
        )
    if isinstance(data, int) and not 0 <= data <= 0xFFFFFFFF:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    msg = lax.convert_element_type(data, np.uint32)
    return _return_keys(typed, lax.random_fold_in(raw, msg))


def _split_shape(num) -> tuple[int, ...]:
    shape = tuple(num) if isinstance(num, (tuple, list)) else (num,)
    return canonicalize_shape(shape, "split")


def split(key, num=2):
    """``num`` new keys (or an array of keys of shape ``num``) from ``key``."""
    raw, typed = lax.check_prng_key("split", key)
    return _return_keys(typed, lax.random_split(raw, _split_shape(num)))


def split_keys(key, num: int):
    """``num`` subkeys of the typed key ``key``, as a list."""
    keys = lax.random_split(key, (num,))
    return [lax.squeeze(lax.slice_in_dim(keys, i, i + 1), (0,)) for i in range(num)]


@with_out_sharding
def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniform random bits: unsigned integers of ``dtype`` (default ``uint32``)."""
    raw, _ = lax.check_prng_key("bits", key)
    if dtype is None:
        dtype = dtypes.default_uint_dtype()
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    shape = canonicalize_shape(shape, "bits")
    return lax.random_bits(raw, np.dtype(dtype).itemsize * 8, shape)


def key_data(keys):
    """The ``uint32`` data under keys (typed, or raw ones wrapped first)."""
    typed_keys, _ = lax.check_prng_key("key_data", keys, allow_batched=True)
    return lax.random_unwrap(typed_keys)


def key_impl(keys):
    """The name of the PRNG implementation of ``keys``."""
    typed_keys, _ = lax.check_prng_key("key_impl", keys, allow_batched=True)
    impl = typed_keys.dtype.impl
    return impl.name if impl.name in lax.PRNG_IMPLS else lax.PRNGSpec(impl)


def clone(key):
    """A copy of ``key`` (for JAX's key-reuse checker, which lamina does not have)."""
    return lax.random_clone(key)
