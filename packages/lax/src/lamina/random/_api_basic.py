"""Public samplers built on one uniform draw: ``uniform``, ``normal``, ``randint``,
``bernoulli``, ``rademacher``, ``exponential``, ``laplace``, ``logistic``, ``cauchy``,
``gumbel``; argument checking as in JAX, then the key-key samplers of
:mod:`lamina.random._basic`."""

from __future__ import annotations

import numpy as np

from lamina.ir import dtypes
from lamina.lax import convert_element_type
from lamina.random import _basic
from lamina.random._keys import canonicalize_shape, check_prng_key
from lamina.random._ops import asarray, clip, dtype_of

__all__ = [
    "bernoulli",
    "cauchy",
    "exponential",
    "gumbel",
    "laplace",
    "logistic",
    "normal",
    "rademacher",
    "randint",
    "uniform",
]


def float_dtype(name: str, dtype, kinds=np.floating, what="a float"):
    """The canonical ``dtype`` (default: the default float), checked to be of ``kinds``."""
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, kinds):
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return np.dtype(dtype)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform samples in ``[minval, maxval)``."""
    key, _ = check_prng_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    shape = canonicalize_shape(shape, "uniform")
    return _basic.uniform_raw(key, minval, maxval, shape, dtype)


def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal samples (complex dtypes: real and imaginary parts each of
    variance 1/2)."""
    key, _ = check_prng_key("normal", key)
    shape = canonicalize_shape(shape, "normal")
    dtype = float_dtype("normal", dtype, np.inexact, "a float or complex")
    return _basic.normal_raw(key, shape, dtype)


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Integers uniform in ``[minval, maxval)``."""
    key, _ = check_prng_key("randint", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype))
    shape = canonicalize_shape(shape, "randint")
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    from lamina.random._ops import check_arraylike

    check_arraylike("randint", minval, maxval)
    info = dtypes.iinfo(dtype)
    sampling_dtype = dtype
    if info.bits < 32:
        # Sampled in 32 bits so that narrow dtypes are not biased.
        sampling_dtype = np.dtype(np.int32)
        minval = clip(convert_element_type(asarray(minval), np.int32), int(info.min), int(info.max))
        maxval = clip(
            convert_element_type(asarray(maxval), np.int32), int(info.min), int(info.max) + 1
        )
    out = _basic.randint_raw(key, minval, maxval, shape, sampling_dtype)
    return convert_element_type(out, dtype)


def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
    """Booleans, true with probability ``p``."""
    if shape is not None:
        shape = canonicalize_shape(shape, "bernoulli")
    if mode not in ("high", "low"):
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    key, _ = check_prng_key("bernoulli", key)
    dtype = dtypes.dtype(p, canonicalize=True) if not hasattr(p, "aval") else dtype_of(p)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = convert_element_type(p, dtype)
    return _basic.bernoulli_raw(key, p, shape=shape, mode=mode)


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """Random signs, -1 or 1, of an integer (or float) dtype."""
    key, _ = check_prng_key("rademacher", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype))
    shape = canonicalize_shape(shape, "rademacher")
    return _basic.rademacher_raw(key, shape, dtype)


def _simple(name, raw_sampler, doc):
    def sampler(key, shape=(), dtype=None, *, out_sharding=None):
        key, _ = check_prng_key(name, key)
        dtype_ = float_dtype(name, dtype)
        return raw_sampler(key, canonicalize_shape(shape, name), dtype_)

    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = doc
    return sampler


exponential = _simple("exponential", _basic.exponential_raw, "Exponential samples (rate 1).")
laplace = _simple("laplace", _basic.laplace_raw, "Laplace samples (location 0, scale 1).")
logistic = _simple("logistic", _basic.logistic_raw, "Logistic samples (location 0, scale 1).")
cauchy = _simple("cauchy", _basic.cauchy_raw, "Cauchy samples (location 0, scale 1).")


def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Gumbel samples (location 0, scale 1); ``mode`` ``"high"``/``"highest"`` spend
    more bits for accuracy in the tails."""
    key, _ = check_prng_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    shape = canonicalize_shape(shape, "gumbel")
    if mode is None:
        mode = "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _basic.gumbel_raw(key, shape, dtype, mode)
