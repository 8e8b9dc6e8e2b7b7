"""The core samplers on raw ``uint32[2]`` keys: ``uniform``, ``normal``, ``randint``,
``bernoulli`` and the transforms of one uniform draw (exponential, laplace, logistic,
cauchy, gumbel, ...). Each is a jitted function of the key and the parameter arrays,
with shape and dtype static, performing JAX 0.10.2's operations in JAX's order so the
samples are bit-identical to JAX's."""

from __future__ import annotations

from functools import partial

import numpy as np

from lamina.ir import dtypes
from lamina.lax import (
    add,
    bitcast_convert_type,
    bitwise_and,
    bitwise_or,
    broadcast_to_rank,
    clz,
    convert_element_type,
    erf_inv,
    full_like,
    log,
    log1p,
    mul,
    neg,
    rem,
    reshape,
    select,
    shift_left,
    shift_right_logical,
    sign,
    slice_in_dim,
    squeeze,
    sub,
    tan,
)
from lamina.lax import (
    max as lax_max,
)
from lamina.random._key_prims import random_bits, random_split
from lamina.random._ops import check_shape, clip, dtype_of, shape_of, where
from lamina.random._ops import sampler_jit as jit

__all__ = [
    "bernoulli_raw",
    "cauchy_raw",
    "exponential_raw",
    "gumbel_raw",
    "laplace_raw",
    "logistic_raw",
    "normal_raw",
    "rademacher_raw",
    "randint_raw",
    "split_keys",
    "uniform_raw",
]

UINT_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def split_keys(key, num: int):
    """``num`` raw subkeys of the raw key ``key``, as a list."""
    keys = random_split(key, (num,))
    return [squeeze(slice_in_dim(keys, i, i + 1), (0,)) for i in range(num)]


def _const(x, value):
    return np.array(value, dtype_of(x))


@partial(jit, static_argnums=(3, 4))
def uniform_raw(key, minval, maxval, shape, dtype):
    check_shape("uniform", shape)
    minval = broadcast_to_rank(convert_element_type(minval, dtype), len(shape))
    maxval = broadcast_to_rank(convert_element_type(maxval, dtype), len(shape))
    info = dtypes.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    # Too few mantissa bits to draw in nbits without bias: draw 8 and widen.
    rng_bits = 8 if nmant < 8 else nbits
    uint_dtype = np.dtype(UINT_DTYPES[nbits])
    bits = random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        bits = convert_element_type(bits, uint_dtype)
    # Random mantissa under the exponent of 1.0: a float uniform in [1, 2).
    mantissa = shift_right_logical(bits, np.array(rng_bits - nmant, uint_dtype))
    one_bits = np.array(1.0, dtype).view(uint_dtype)
    floats = bitcast_convert_type(bitwise_or(mantissa, one_bits), dtype) - np.array(1.0, dtype)
    return lax_max(minval, reshape(add(mul(floats, sub(maxval, minval)), minval), shape))


@partial(jit, static_argnums=(1, 2))
def _normal_real(key, shape, dtype):
    check_shape("normal", shape)
    # The largest float below 1 in magnitude: erf_inv(-1) would be -inf.
    lo = np.array(-1.0 + 2.0 ** -(dtypes.finfo(dtype).nmant + 1), dtype)
    u = uniform_raw(key, lo, np.array(1.0, dtype), shape, dtype)
    return np.array(np.sqrt(2), dtype) * erf_inv(u)


@partial(jit, static_argnums=(1, 2))
def normal_raw(key, shape, dtype):
    if not dtypes.issubdtype(dtype, np.complexfloating):
        return _normal_real(key, shape, dtype)
    key_re, key_im = split_keys(key, 2)
    real_dtype = np.dtype(np.array(0, dtype).real.dtype)
    re = convert_element_type(_normal_real(key_re, shape, real_dtype), dtype)
    im = convert_element_type(_normal_real(key_im, shape, real_dtype), dtype)
    return (re + 1j * im) / np.array(np.sqrt(2), dtype)


def _convert_and_clip_integer(val, dtype):
    """``val`` (integer) clipped to the range both its dtype and ``dtype`` hold, then
    converted to ``dtype``."""
    src, dst = dtypes.iinfo(dtype_of(val)), dtypes.iinfo(dtype)
    lo = _const(val, max(int(dst.min), int(src.min)))
    hi = _const(val, min(int(dst.max), int(src.max)))
    return convert_element_type(clip(val, lo, hi), dtype)


def _as_integer(x):
    if dtypes.issubdtype(dtype_of(x), np.integer):
        return x
    return convert_element_type(x, dtypes.canonicalize_dtype(np.int64))


@partial(jit, static_argnums=(3, 4))
def randint_raw(key, minval, maxval, shape, dtype):
    check_shape("randint", shape, shape_of(minval), shape_of(maxval))
    minval, maxval = _as_integer(minval), _as_integer(maxval)
    # randint(key, shape, 0, 256, uint8): maxval above the dtype's range widens the span.
    top = _convert_and_clip_integer(np.array(dtypes.iinfo(dtype).max, dtype), dtype_of(maxval))
    maxval_out_of_range = maxval > top
    minval = broadcast_to_rank(_convert_and_clip_integer(minval, dtype), len(shape))
    maxval = broadcast_to_rank(_convert_and_clip_integer(maxval, dtype), len(shape))
    nbits = dtypes.iinfo(dtype).bits
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    # Twice the bits of the dtype, reduced modulo the span, keeps the bias small.
    k1, k2 = split_keys(key, 2)
    higher_bits = random_bits(k1, nbits, shape)
    lower_bits = random_bits(k2, nbits, shape)
    unsigned = np.dtype(UINT_DTYPES[nbits])
    span = convert_element_type(maxval - minval, unsigned)
    span = select(maxval <= minval, full_like(span, 1), span)
    span = select(maxval_out_of_range & (maxval > minval), span + _const(span, 1), span)
    # 2**nbits mod span, as (2**(nbits/2) mod span)**2 mod span to stay in range.
    multiplier = rem(_const(span, 2 ** (nbits // 2)), span)
    multiplier = rem(multiplier * multiplier, span)
    offset = rem(higher_bits, span) * multiplier + rem(lower_bits, span)
    offset = rem(offset, span)
    return minval + convert_element_type(offset, dtype)


@partial(jit, static_argnames=("shape", "mode"))
def bernoulli_raw(key, p, shape, mode):
    dtype = dtype_of(p)
    if shape is None:
        shape = shape_of(p)
    else:
        check_shape("bernoulli", shape, shape_of(p))
    if mode == "high":
        u = uniform_raw(key, 0.0, 1.0, (2, *shape), dtype)
        u1 = squeeze(slice_in_dim(u, 0, 1), (0,))
        u2 = squeeze(slice_in_dim(u, 1, 2), (0,))
        # Spread the second draw below the first's resolution, 2**-nmant.
        u2 = u2 * 2 ** -dtypes.finfo(dtype).nmant
        return u2 < p - u1
    return uniform_raw(key, 0.0, 1.0, shape, dtype) < p


@partial(jit, static_argnums=(1, 2))
def rademacher_raw(key, shape, dtype):
    p = np.array(0.5, dtypes.default_float_dtype())
    samples = convert_element_type(bernoulli_raw(key, p, shape=shape, mode="low"), dtype)
    return convert_element_type(2 * samples - 1, dtype)


@partial(jit, static_argnums=(1, 2))
def exponential_raw(key, shape, dtype):
    check_shape("exponential", shape)
    u = uniform_raw(key, 0.0, 1.0, shape, dtype)
    return neg(log1p(neg(u)))  # log of 1 - u, in (0, 1]


@partial(jit, static_argnums=(1, 2))
def laplace_raw(key, shape, dtype):
    check_shape("laplace", shape)
    u = uniform_raw(key, -1.0 + dtypes.finfo(dtype).epsneg, 1.0, shape, dtype)
    return sign(u) * log1p(neg(abs(u)))


@partial(jit, static_argnums=(1, 2))
def logistic_raw(key, shape, dtype):
    check_shape("logistic", shape)
    x = uniform_raw(key, float(dtypes.finfo(dtype).tiny), 1.0, shape, dtype)
    return log(x) - log1p(neg(x))


@partial(jit, static_argnums=(1, 2))
def cauchy_raw(key, shape, dtype):
    check_shape("cauchy", shape)
    u = uniform_raw(key, float(dtypes.finfo(dtype).eps), 1.0, shape, dtype)
    return tan(_const(u, np.pi) * (u - _const(u, 0.5)))


def _safe_int_to_float(bits):
    """``float32`` values of the 64-bit fixed-point fractions ``bits`` (``uint32[2, ...]``:
    high and low words), exact to the last bit of the float."""
    info = dtypes.finfo(np.float32)
    lz = clz(bits)
    hiclz, loclz = (squeeze(slice_in_dim(lz, i, i + 1), (0,)) for i in (0, 1))
    hi, lo = (squeeze(slice_in_dim(bits, i, i + 1), (0,)) for i in (0, 1))
    hi_empty = hiclz == np.uint32(32)
    mantissa = bitwise_or(
        shift_left(hi, hiclz),
        where(hi_empty, shift_left(lo, loclz), shift_right_logical(lo, np.uint32(32) - hiclz)),
    )
    mantissa = shift_right_logical(mantissa, np.array(32 - info.nmant - 1, np.uint32))
    mantissa = bitwise_and(mantissa, np.array((1 << info.nmant) - 1, np.uint32))
    exponent = np.uint32(-info.minexp) - where(hi_empty, np.uint32(32) + loclz, hiclz)
    exponent = shift_left(exponent, np.array(info.nmant, np.uint32))
    exponent = bitwise_and(exponent, np.array((1 << 30) - (1 << (info.nmant - 1)), np.uint32))
    return bitcast_convert_type(bitwise_or(exponent, mantissa), np.float32)


@partial(jit, static_argnums=(1, 2, 3))
def gumbel_raw(key, shape, dtype, mode):
    check_shape("gumbel", shape)
    info = dtypes.finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        bits = random_bits(key, 32, (2, *shape))
        neg_bits = ~bits
        lo_bits = squeeze(slice_in_dim(neg_bits, 1, 2), (0,))
        # 1 - bits as a 64-bit fixed-point number: add 1 to the low word, carrying.
        carry = convert_element_type(lo_bits == np.uint32(0xFFFFFFFF), np.uint32)
        from lamina.lax import concatenate, expand_dims

        increment = concatenate(
            [expand_dims(carry, (0,)), expand_dims(full_like(lo_bits, 1), (0,))], 0
        )
        neg_bits = neg_bits + increment
        hi_bits = squeeze(slice_in_dim(bits, 0, 1), (0,))
        flip = hi_bits < np.uint32(1 << 31)
        x = _safe_int_to_float(where(expand_dims(flip, (0,)), bits, neg_bits))
        return where(flip, -log(-log1p(-x)), -log(-log(x)))
    if mode in ("high", "highest"):
        u = uniform_raw(key, 0.0, 1.0, (2, *shape), dtype)
        high = squeeze(slice_in_dim(u, 0, 1), (0,))
        low = squeeze(slice_in_dim(u, 1, 2), (0,))
        x = where(high >= 0.5, high, high + 2**-(info.nmant) * low + info.tiny)
        return -log(-log1p(-x))
    return -log(-log(uniform_raw(key, float(info.tiny), 1.0, shape, dtype)))
