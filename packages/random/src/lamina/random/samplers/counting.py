"""Counting samplers: ``poisson`` (Knuth's method below rate 10, Hormann's transformed
rejection above), ``binomial`` (inversion for small means, BTRS rejection otherwise)
and ``multinomial`` (a scan of binomials), with JAX 0.10.2's loops and constants."""

from __future__ import annotations

from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.random.arguments import (
    canonicalize_shape,
    check_shape,
    float_dtype,
    optional_shape,
    promote_inexact,
    promote_inexact_pair,
    with_out_sharding,
)
from lamina.random.keys import split_keys
from lamina.random.samplers.uniform import _uniform

__all__ = ["binomial", "multinomial", "poisson"]


def _any(x):
    return lax.reduce_or(x, tuple(range(x.ndim)))


def _isnan(x):
    return x != x


@with_out_sharding
def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson samples with rate ``lam``."""
    key, _ = lax.check_prng_key("poisson", key)
    if key.dtype.impl != lax.THREEFRY:
        raise NotImplementedError(
            f"`poisson` is only implemented for the threefry2x32 RNG, not {key.dtype.impl}"
        )
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype))
    shape = jnp.shape(lam) if shape is None else canonicalize_shape(shape, "poisson")
    lam = lax.convert_element_type(jnp.broadcast_to(jnp.asarray(lam), shape), np.float32)
    return _poisson(key, lam, shape, dtype)


def _poisson_knuth(key, lam, shape, dtype, max_iters):
    def body(carry):
        i, k, rng, log_prod = carry
        rng, subkey = split_keys(rng, 2)
        k = lax.select(log_prod > -lam, k + 1, k)
        u = _uniform(subkey, 0.0, 1.0, shape, np.dtype(np.float32))
        return i + 1, k, rng, log_prod + lax.log(u)

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return _any(log_prod > -lam) & (i < max_iters)

    k_init = lax.full_like(lam, 0, dtype, shape)
    log_rate_init = lax.full_like(lam, 0, np.float32, shape)
    k = lax.while_loop(cond, body, (np.int32(0), k_init, key, log_rate_init))[1]
    return lax.convert_element_type(k - 1, dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split_keys(key, 3)
        u = _uniform(subkey_0, 0.0, 1.0, shape, lam.dtype) - 0.5
        v = _uniform(subkey_1, 0.0, 1.0, shape, lam.dtype)
        u_shifted = 0.5 - lax.abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t
        accept = accept1 | (lax.bitwise_not(reject) & accept2)
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return _any(lax.bitwise_not(accepted)) & (i < max_iters)

    k_init = lax.full_like(lam, -1, lam.dtype, shape)
    accepted = lax.full_like(lam, False, np.dtype(np.bool_), shape)
    k = lax.while_loop(cond, body, (np.int32(0), k_init, accepted, key))[1]
    return lax.convert_element_type(k, dtype)


@partial(jit, static_argnums=(2, 3))
def _poisson(key, lam, shape, dtype):
    # Knuth's method below rate 10 (and for NaN), transformed rejection above.
    use_knuth = _isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
    max_iters = np.array(dtypes.iinfo(dtype).max, dtype)
    result = lax.select(
        use_knuth,
        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters),
    )
    return lax.select(lam == 0, lax.full_like(result, 0), result)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial samples: successes in ``n`` trials of probability ``p`` (as floats)."""
    key, _ = lax.check_prng_key("binomial", key)
    jnp.check_arraylike("binomial", n, p)
    dtype = float_dtype("binomial", dtype)
    return _binomial(key, n, p, optional_shape(shape, "binomial"), dtype)


_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_approx_tail(k):
    dtype = k.dtype
    use_table = k <= 9
    k = lax.clamp(np.array(0.0, dtype), k, np.array(9.0, dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    index = lax.convert_element_type(lax.floor(k), np.int32)
    table = jnp.asarray(np.array(_STIRLING_TAIL, dtype))[index]
    return lax.select(use_table, table, approx)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    log1minusprob = lax.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = split_keys(key, 2)
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(subkey, 0.0, 1.0, shape, prob.dtype)
        geom = lax.ceil(lax.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond(carry):
        i, geom_sum = carry[0], carry[2]
        return _any(geom_sum <= count) & (i < max_iters)

    zeros = lax.full_like(prob, 0, prob.dtype, shape)
    k = lax.while_loop(cond, body, (np.int32(0), zeros, zeros, key))[1]
    return lax.convert_element_type(k - 1, dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
    stddev = lax.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = lax.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split_keys(key, 3)
        u = _uniform(subkey_0, 0.0, 1.0, shape, prob.dtype)
        v = _uniform(subkey_1, 0.0, 1.0, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - lax.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = lax.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = lax.log(v * alpha / (a / (us * us) + b))
        ub = (
            (m + 0.5) * lax.log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * lax.log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * lax.log(r * (count - k + 1) / (k + 1))
            + _stirling_approx_tail(m)
            + _stirling_approx_tail(count - m)
            - _stirling_approx_tail(k)
            - _stirling_approx_tail(count - k)
        )
        accept = accept1 | (lax.bitwise_not(reject) & (v <= ub))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, accepted = carry[0], carry[2]
        return _any(lax.bitwise_not(accepted)) & (i < max_iters)

    k_init = lax.full_like(prob, -1, prob.dtype, shape)
    accepted = lax.full_like(prob, False, np.dtype(np.bool_), shape)
    k = lax.while_loop(cond, body, (np.int32(0), k_init, accepted, key))[1]
    return lax.convert_element_type(k, dtype)


@partial(jit, static_argnums=(3, 4))
def _binomial(key, count, prob, shape, dtype):
    if shape is None:
        shape = lax.broadcast_shapes(jnp.shape(count), jnp.shape(prob))
    else:
        check_shape("binomial", shape, jnp.shape(count), jnp.shape(prob))
    prob = promote_inexact(prob)
    count = jnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = _isnan(count) | (count < 0.0)
    count_inf = lax.bitwise_not(lax.is_finite(count)) & lax.bitwise_not(_isnan(count))
    q_is_nan = _isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
    # Inversion for small means n*q (and invalid counts), BTRS rejection otherwise.
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = lax.floor(count)  # float counts as numpy.random.binomial takes them
    count_inv = lax.select(use_inversion, count, lax.full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = np.array(dtypes.finfo(dtype).max, dtype)
    samples = lax.select(
        use_inversion,
        _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
        _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters),
    )
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, lax.full_like(samples, np.nan, dtype), samples)
    infinite = count_inf & lax.bitwise_not(invalid)
    samples = lax.select(infinite, lax.full_like(samples, np.inf, dtype), samples)
    keep = p_lt_half | count_nan_or_neg | q_is_nan | count_inf
    return lax.select(keep, samples, lax.convert_element_type(count, dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts over the last axis of ``p`` for ``n`` trials."""
    key, _ = lax.check_prng_key("multinomial", key)
    jnp.check_arraylike("multinomial", n, p)
    n, p = promote_inexact_pair(n, p)
    dtype = float_dtype("multinomial", dtype)
    shape = None if shape is None else canonicalize_shape(shape, "multinomial")
    return _multinomial(key, n, p, shape, dtype, unroll)


@partial(jit, static_argnums=(3, 4, 5))
def _multinomial(key, n, p, shape, dtype, unroll):
    if shape is None:
        shape = jnp.shape(p)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.broadcast_to(p, shape)

    def step(remainder, ratio_key):
        ratio, key = ratio_key
        count = _binomial(key, remainder, jnp.clip(ratio, 0, 1), None, remainder.dtype)
        return remainder - count, count

    ndim = len(shape)
    p = lax.transpose(p, (ndim - 1, *range(ndim - 1)))
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = lax.random_split(key, (jnp.shape(ratios)[0],))
    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return lax.convert_element_type(lax.transpose(counts, (*range(1, ndim), 0)), dtype)
