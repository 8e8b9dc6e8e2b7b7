"""Uniform draws: ``uniform`` (floats in ``[minval, maxval)``, from random mantissa
bits), ``randint`` (integers, from twice the dtype's bits reduced modulo the span),
``bernoulli`` and ``rademacher``. Each public function checks its arguments as JAX does,
then calls its jitted body (``_uniform``, ...), which performs JAX 0.10.2's operations in
JAX's order so that the samples are bit-identical to JAX's."""

from __future__ import annotations

from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.random.arguments import canonicalize_shape, check_shape, float_dtype, with_out_sharding
from lamina.random.keys import split_keys

__all__ = ["bernoulli", "rademacher", "randint", "uniform"]

UINT_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@with_out_sharding
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform samples in ``[minval, maxval)``."""
    key, _ = lax.check_prng_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    shape = canonicalize_shape(shape, "uniform")
    return _uniform(key, minval, maxval, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _uniform(key, minval, maxval, shape, dtype):
    check_shape("uniform", shape)
    minval = lax.broadcast_to_rank(lax.convert_element_type(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(lax.convert_element_type(maxval, dtype), len(shape))
    info = dtypes.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    # Too few mantissa bits to draw in nbits without bias: draw 8 and widen.
    rng_bits = 8 if nmant < 8 else nbits
    uint_dtype = np.dtype(UINT_DTYPES[nbits])
    bits = lax.random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, uint_dtype)
    # Random mantissa under the exponent of 1.0: a float uniform in [1, 2).
    mantissa = lax.shift_right_logical(bits, np.array(rng_bits - nmant, uint_dtype))
    one_bits = np.array(1.0, dtype).view(uint_dtype)
    floats = lax.bitcast_convert_type(lax.bitwise_or(mantissa, one_bits), dtype)
    floats = floats - np.array(1.0, dtype)
    scaled = lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval)
    return lax.max(minval, lax.reshape(scaled, shape))


@with_out_sharding
def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Integers uniform in ``[minval, maxval)``."""
    key, _ = lax.check_prng_key("randint", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype))
    shape = canonicalize_shape(shape, "randint")
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    jnp.check_arraylike("randint", minval, maxval)
    info = dtypes.iinfo(dtype)
    sampling_dtype = dtype
    if info.bits < 32:
        # Sampled in 32 bits so that narrow dtypes are not biased.
        sampling_dtype = np.dtype(np.int32)
        minval = lax.convert_element_type(jnp.asarray(minval), np.int32)
        minval = jnp.clip(minval, int(info.min), int(info.max))
        maxval = lax.convert_element_type(jnp.asarray(maxval), np.int32)
        maxval = jnp.clip(maxval, int(info.min), int(info.max) + 1)
    out = _randint(key, minval, maxval, shape, sampling_dtype)
    return lax.convert_element_type(out, dtype)


def _convert_and_clip_integer(val, dtype):
    """``val`` (integer) clipped to the range both its dtype and ``dtype`` hold, then
    converted to ``dtype``."""
    src, dst = dtypes.iinfo(val.dtype), dtypes.iinfo(dtype)
    lo = np.array(max(int(dst.min), int(src.min)), val.dtype)
    hi = np.array(min(int(dst.max), int(src.max)), val.dtype)
    return lax.convert_element_type(jnp.clip(val, lo, hi), dtype)


def _as_integer(x):
    x = jnp.asarray(x)  # Python numbers when jit is disabled
    if dtypes.issubdtype(x.dtype, np.integer):
        return x
    return lax.convert_element_type(x, dtypes.canonicalize_dtype(np.int64))


@partial(jit, static_argnums=(3, 4))
def _randint(key, minval, maxval, shape, dtype):
    check_shape("randint", shape, jnp.shape(minval), jnp.shape(maxval))
    minval, maxval = _as_integer(minval), _as_integer(maxval)
    # randint(key, shape, 0, 256, uint8): maxval above the dtype's range widens the span.
    top = _convert_and_clip_integer(np.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = maxval > top
    minval = lax.broadcast_to_rank(_convert_and_clip_integer(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(_convert_and_clip_integer(maxval, dtype), len(shape))
    nbits = dtypes.iinfo(dtype).bits
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    # Twice the bits of the dtype, reduced modulo the span, keeps the bias small.
    k1, k2 = split_keys(key, 2)
    higher_bits = lax.random_bits(k1, nbits, shape)
    lower_bits = lax.random_bits(k2, nbits, shape)
    unsigned = np.dtype(UINT_DTYPES[nbits])
    span = lax.convert_element_type(maxval - minval, unsigned)
    span = lax.select(maxval <= minval, lax.full_like(span, 1), span)
    span = lax.select(maxval_out_of_range & (maxval > minval), span + np.array(1, unsigned), span)
    # 2**nbits mod span, as (2**(nbits/2) mod span)**2 mod span to stay in range.
    multiplier = lax.rem(np.array(2 ** (nbits // 2), unsigned), span)
    multiplier = lax.rem(multiplier * multiplier, span)
    offset = lax.rem(higher_bits, span) * multiplier + lax.rem(lower_bits, span)
    offset = lax.rem(offset, span)
    return minval + lax.convert_element_type(offset, dtype)


@with_out_sharding
def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
    """Booleans, true with probability ``p``."""
    if shape is not None:
        shape = canonicalize_shape(shape, "bernoulli")
    if mode not in ("high", "low"):
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    key, _ = lax.check_prng_key("bernoulli", key)
    dtype = dtypes.dtype(p, canonicalize=True) if not hasattr(p, "aval") else p.aval.dtype
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = lax.convert_element_type(p, dtype)
    return _bernoulli(key, p, shape=shape, mode=mode)


@partial(jit, static_argnames=("shape", "mode"))
def _bernoulli(key, p, shape, mode):
    dtype = p.dtype
    if shape is None:
        shape = jnp.shape(p)
    else:
        check_shape("bernoulli", shape, jnp.shape(p))
    if mode == "high":
        u = _uniform(key, 0.0, 1.0, (2, *shape), dtype)
        u1 = lax.squeeze(lax.slice_in_dim(u, 0, 1), (0,))
        u2 = lax.squeeze(lax.slice_in_dim(u, 1, 2), (0,))
        # Spread the second draw below the first's resolution, 2**-nmant.
        u2 = u2 * 2 ** -dtypes.finfo(dtype).nmant
        return u2 < p - u1
    return _uniform(key, 0.0, 1.0, shape, dtype) < p


@with_out_sharding
def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """Random signs, -1 or 1, of an integer (or float) dtype."""
    key, _ = lax.check_prng_key("rademacher", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype))
    shape = canonicalize_shape(shape, "rademacher")
    return _rademacher(key, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _rademacher(key, shape, dtype):
    p = np.array(0.5, dtypes.default_float_dtype())
    samples = lax.convert_element_type(_bernoulli(key, p, shape=shape, mode="low"), dtype)
    return lax.convert_element_type(2 * samples - 1, dtype)
