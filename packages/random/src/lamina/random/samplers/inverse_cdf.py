"""Samplers that transform uniform draws by the inverse of a distribution function:
``exponential``, ``laplace``, ``logistic``, ``cauchy``, ``gumbel`` (with more bits
spent on the tails in its ``"high"``/``"highest"`` modes), ``weibull_min``, ``pareto``,
``triangular``, ``rayleigh`` and ``geometric``. Each public function checks its
arguments as JAX does, then calls its jitted body, in JAX 0.10.2's order of
operations."""

from __future__ import annotations

from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.random.arguments import (
    canonicalize_shape,
    check_broadcast_shapes,
    check_shape,
    checked_float_sampling,
    float_dtype,
    promote_inexact,
    with_out_sharding,
)
from lamina.random.samplers.uniform import _uniform

__all__ = [
    "cauchy",
    "exponential",
    "geometric",
    "gumbel",
    "laplace",
    "logistic",
    "pareto",
    "rayleigh",
    "triangular",
    "weibull_min",
]


@with_out_sharding
def exponential(key, shape=(), dtype=None, *, out_sharding=None):
    """Exponential samples (rate 1)."""
    key, _ = lax.check_prng_key("exponential", key)
    dtype = float_dtype("exponential", dtype)
    return _exponential(key, canonicalize_shape(shape, "exponential"), dtype)


@partial(jit, static_argnums=(1, 2))
def _exponential(key, shape, dtype):
    check_shape("exponential", shape)
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))  # log of 1 - u, in (0, 1]


@with_out_sharding
def laplace(key, shape=(), dtype=None, *, out_sharding=None):
    """Laplace samples (location 0, scale 1)."""
    key, _ = lax.check_prng_key("laplace", key)
    dtype = float_dtype("laplace", dtype)
    return _laplace(key, canonicalize_shape(shape, "laplace"), dtype)


@partial(jit, static_argnums=(1, 2))
def _laplace(key, shape, dtype):
    check_shape("laplace", shape)
    u = _uniform(key, -1.0 + dtypes.finfo(dtype).epsneg, 1.0, shape, dtype)
    return lax.sign(u) * lax.log1p(lax.neg(abs(u)))


@with_out_sharding
def logistic(key, shape=(), dtype=None, *, out_sharding=None):
    """Logistic samples (location 0, scale 1)."""
    key, _ = lax.check_prng_key("logistic", key)
    dtype = float_dtype("logistic", dtype)
    return _logistic(key, canonicalize_shape(shape, "logistic"), dtype)


@partial(jit, static_argnums=(1, 2))
def _logistic(key, shape, dtype):
    check_shape("logistic", shape)
    x = _uniform(key, float(dtypes.finfo(dtype).tiny), 1.0, shape, dtype)
    return lax.log(x) - lax.log1p(lax.neg(x))


@with_out_sharding
def cauchy(key, shape=(), dtype=None, *, out_sharding=None):
    """Cauchy samples (location 0, scale 1)."""
    key, _ = lax.check_prng_key("cauchy", key)
    dtype = float_dtype("cauchy", dtype)
    return _cauchy(key, canonicalize_shape(shape, "cauchy"), dtype)


@partial(jit, static_argnums=(1, 2))
def _cauchy(key, shape, dtype):
    check_shape("cauchy", shape)
    u = _uniform(key, float(dtypes.finfo(dtype).eps), 1.0, shape, dtype)
    return lax.tan(np.array(np.pi, u.dtype) * (u - np.array(0.5, u.dtype)))


@with_out_sharding
def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Gumbel samples (location 0, scale 1); ``mode`` ``"high"``/``"highest"`` spend
    more bits for accuracy in the tails."""
    key, _ = lax.check_prng_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    shape = canonicalize_shape(shape, "gumbel")
    if mode is None:
        mode = "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel(key, shape, dtype, mode)


def _safe_int_to_float(bits):
    """``float32`` values of the 64-bit fixed-point fractions ``bits`` (``uint32[2, ...]``:
    high and low words), exact to the last bit of the float."""
    info = dtypes.finfo(np.float32)
    lz = lax.clz(bits)
    hiclz, loclz = (lax.squeeze(lax.slice_in_dim(lz, i, i + 1), (0,)) for i in (0, 1))
    hi, lo = (lax.squeeze(lax.slice_in_dim(bits, i, i + 1), (0,)) for i in (0, 1))
    hi_empty = hiclz == np.uint32(32)
    low_part = jnp.where(
        hi_empty,
        lax.shift_left(lo, loclz),
        lax.shift_right_logical(lo, np.uint32(32) - hiclz),
    )
    mantissa = lax.bitwise_or(lax.shift_left(hi, hiclz), low_part)
    mantissa = lax.shift_right_logical(mantissa, np.array(32 - info.nmant - 1, np.uint32))
    mantissa = lax.bitwise_and(mantissa, np.array((1 << info.nmant) - 1, np.uint32))
    exponent = np.uint32(-info.minexp) - jnp.where(hi_empty, np.uint32(32) + loclz, hiclz)
    exponent = lax.shift_left(exponent, np.array(info.nmant, np.uint32))
    exponent_mask = np.array((1 << 30) - (1 << (info.nmant - 1)), np.uint32)
    exponent = lax.bitwise_and(exponent, exponent_mask)
    return lax.bitcast_convert_type(lax.bitwise_or(exponent, mantissa), np.float32)


@partial(jit, static_argnums=(1, 2, 3))
def _gumbel(key, shape, dtype, mode):
    check_shape("gumbel", shape)
    info = dtypes.finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        bits = lax.random_bits(key, 32, (2, *shape))
        neg_bits = ~bits
        lo_bits = lax.squeeze(lax.slice_in_dim(neg_bits, 1, 2), (0,))
        # 1 - bits as a 64-bit fixed-point number: add 1 to the low word, carrying.
        carry = lax.convert_element_type(lo_bits == np.uint32(0xFFFFFFFF), np.uint32)
        increment = lax.concatenate(
            [lax.expand_dims(carry, (0,)), lax.expand_dims(lax.full_like(lo_bits, 1), (0,))], 0
        )
        neg_bits = neg_bits + increment
        hi_bits = lax.squeeze(lax.slice_in_dim(bits, 0, 1), (0,))
        flip = hi_bits < np.uint32(1 << 31)
        x = _safe_int_to_float(jnp.where(lax.expand_dims(flip, (0,)), bits, neg_bits))
        return jnp.where(flip, -lax.log(-lax.log1p(-x)), -lax.log(-lax.log(x)))
    if mode in ("high", "highest"):
        u = _uniform(key, 0.0, 1.0, (2, *shape), dtype)
        high = lax.squeeze(lax.slice_in_dim(u, 0, 1), (0,))
        low = lax.squeeze(lax.slice_in_dim(u, 1, 2), (0,))
        x = jnp.where(high >= 0.5, high, high + 2**-(info.nmant) * low + info.tiny)
        return -lax.log(-lax.log1p(-x))
    return -lax.log(-lax.log(_uniform(key, float(info.tiny), 1.0, shape, dtype)))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples."""
    key, _ = lax.check_prng_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    shape = canonicalize_shape(shape, "weibull_min")
    return _weibull_min(key, scale, concentration, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _weibull_min(key, scale, concentration, shape, dtype):
    u = _uniform(key, 0, 1, shape, dtype)
    x = -lax.log1p(-u)
    exponent = 1.0 / concentration
    return jnp.power(x, exponent) * scale


@with_out_sharding
def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto samples with shape parameter ``b``."""
    key, shape, dtype = checked_float_sampling("pareto", key, shape, dtype, b)
    return _pareto(key, b, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _pareto(key, b, shape, dtype):
    b = lax.convert_element_type(b, dtype)
    e = _exponential(key, shape, dtype)
    return lax.exp(e / b)


@with_out_sharding
def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular samples on ``[left, right]`` peaking at ``mode``."""
    key, shape, dtype = checked_float_sampling("triangular", key, shape, dtype, left, mode, right)
    return _triangular(key, left, mode, right, shape, dtype)


@partial(jit, static_argnums=(4, 5))
def _triangular(key, left, mode, right, shape, dtype):
    left = jnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
    right = jnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
    mode = jnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
    fc = (mode - left) / (right - left)
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


@with_out_sharding
def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh samples with scale ``scale``."""
    key, shape, dtype = checked_float_sampling("rayleigh", key, shape, dtype, scale)
    return _rayleigh(key, scale, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _rayleigh(key, scale, shape, dtype):
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    scale = jnp.broadcast_to(lax.convert_element_type(scale, dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), np.array(-2, dtype))))


@with_out_sharding
def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Geometric samples: the number of Bernoulli(p) trials up to the first success."""
    key, _ = lax.check_prng_key("geometric", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype))
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = check_broadcast_shapes("geometric", shape, p)
    jnp.check_arraylike("geometric", p)
    return _geometric(key, promote_inexact(p), shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _geometric(key, p, shape, dtype):
    u = _uniform(key, 0.0, 1.0, shape, p.dtype)
    # u == 0 becomes 1 (log(0) would be -inf), leaving every other sample as it was.
    u = jnp.where(u == 0, 1, u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1
    return lax.convert_element_type(g, dtype)
