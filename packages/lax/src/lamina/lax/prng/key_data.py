"""Typed keys from key data: the checks of raw ``uint32[..., *key_shape]`` key data,
``wrap_key_data`` (``jax.random.wrap_key_data``) and :func:`check_prng_key`, which
turns the typed or legacy raw key a function of ``jax.random`` is given into a typed
key, wrapping raw data with ``random_wrap`` in the default implementation as JAX does
(warning or failing as the option ``jax_legacy_prng_key`` says)."""

from __future__ import annotations

import warnings

import numpy as np

from lamina.interpreters import Array, config
from lamina.ir import ShapedArray
from lamina.lax.prng.key_primitives import random_wrap
from lamina.lax.prng.key_types import KeyTy, PRNGImpl, default_prng_impl, resolve_prng_impl

__all__ = ["check_key_data", "check_prng_key", "is_typed_key", "wrap_key_data"]


def is_typed_key(x) -> bool:
    """Whether ``x`` is a typed key array (or tracer), of dtype ``key<...>``."""
    aval = getattr(x, "aval", None)
    return isinstance(aval, ShapedArray) and isinstance(aval.dtype, KeyTy)


def check_key_data(impl: PRNGImpl, data) -> None:
    """JAX's errors for ``data`` that is not key data of ``impl``."""
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
    """``(typed key, was_typed)`` for a typed or raw key ``key``: raw key data is
    wrapped (``random_wrap``) in the default implementation, as JAX does."""
    if is_typed_key(key):
        typed_key, typed = key, True
    elif isinstance(key, (Array, np.ndarray, np.generic, int, float, bool, complex)):
        data = _as_array(key)
        impl = default_prng_impl()
        check_key_data(impl, data)
        typed_key, typed = random_wrap(data, impl), False
        _check_legacy_key_allowed()
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed_key.ndim:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{tuple(key.shape)} != (). Use jax.vmap for batching."
        )
    return typed_key, typed


_LEGACY_KEY_MESSAGE = (
    "Legacy uint32 key array passed as key to jax.random function. Please create keys "
    "using jax.random.key(). If use of a raw key array was intended, set "
    'jax_legacy_prng_key="allow".'
)


def _check_legacy_key_allowed() -> None:
    mode = config.jax_legacy_prng_key
    if mode == "error":
        raise ValueError(_LEGACY_KEY_MESSAGE)
    if mode == "warn":
        warnings.warn(_LEGACY_KEY_MESSAGE, stacklevel=4)
    elif config.jax_enable_custom_prng:
        warnings.warn(
            "Raw arrays as random keys to jax.random functions are deprecated. Assuming "
            "valid threefry2x32 key for now.",
            FutureWarning,
            stacklevel=4,
        )


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys overlaying ``key_bits_array`` (``uint32[..., *key_shape]``)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError(
                "Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data"
            )
        impl = dtype
    impl = resolve_prng_impl(impl)
    data = _as_array(key_bits_array)
    check_key_data(impl, data)
    return random_wrap(data, impl)
