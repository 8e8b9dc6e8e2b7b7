"""Counting samplers: ``poisson`` (Knuth's method below rate 10, Hormann's transformed
rejection above), ``binomial`` (inversion for small means, BTRS rejection otherwise)
and ``multinomial`` (a scan of binomials), with JAX 0.10.2's loops and constants."""

from __future__ import annotations

from functools import partial

import numpy as np

from lamina.ir import dtypes
from lamina.lax import abs as lax_abs
from lamina.lax import (
    bitwise_not,
    broadcast_shapes,
    ceil,
    clamp,
    convert_element_type,
    cumsum,
    floor,
    full_like,
    is_finite,
    lgamma,
    log,
    log1p,
    reduce_or,
    scan,
    select,
    sqrt,
    while_loop,
)
from lamina.random._basic import split_keys, uniform_raw
from lamina.random._key_prims import random_split
from lamina.random._ops import broadcast_to, check_shape, dtype_of, promote_inexact, shape_of, take
from lamina.random._ops import sampler_jit as jit

__all__ = ["binomial_raw", "multinomial_raw", "poisson_raw"]


def _any(x):
    return reduce_or(x, tuple(range(len(shape_of(x)))))


def _isnan(x):
    return x != x


def _poisson_knuth(key, lam, shape, dtype, max_iters):
    def body(carry):
        i, k, rng, log_prod = carry
        rng, subkey = split_keys(rng, 2)
        k = select(log_prod > -lam, k + 1, k)
        u = uniform_raw(subkey, 0.0, 1.0, shape, np.dtype(np.float32))
        return i + 1, k, rng, log_prod + log(u)

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return _any(log_prod > -lam) & (i < max_iters)

    k_init = full_like(lam, 0, dtype, shape)
    log_rate_init = full_like(lam, 0, np.float32, shape)
    k = while_loop(cond, body, (np.int32(0), k_init, key, log_rate_init))[1]
    return convert_element_type(k - 1, dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    log_lam = log(lam)
    b = 0.931 + 2.53 * sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split_keys(key, 3)
        u = uniform_raw(subkey_0, 0.0, 1.0, shape, dtype_of(lam)) - 0.5
        v = uniform_raw(subkey_1, 0.0, 1.0, shape, dtype_of(lam))
        u_shifted = 0.5 - lax_abs(u)
        k = floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t
        accept = accept1 | (bitwise_not(reject) & accept2)
        return i + 1, select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return _any(bitwise_not(accepted)) & (i < max_iters)

    k_init = full_like(lam, -1, dtype_of(lam), shape)
    accepted = full_like(lam, False, np.dtype(np.bool_), shape)
    k = while_loop(cond, body, (np.int32(0), k_init, accepted, key))[1]
    return convert_element_type(k, dtype)


@partial(jit, static_argnums=(2, 3))
def poisson_raw(key, lam, shape, dtype):
    # Knuth's method below rate 10 (and for NaN), transformed rejection above.
    use_knuth = _isnan(lam) | (lam < 10)
    lam_knuth = select(use_knuth, lam, full_like(lam, 0.0))
    lam_rejection = select(use_knuth, full_like(lam, 1e5), lam)
    max_iters = np.array(dtypes.iinfo(dtype).max, dtype)
    result = select(
        use_knuth,
        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters),
    )
    return select(lam == 0, full_like(result, 0), result)


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
    dtype = dtype_of(k)
    use_table = k <= 9
    k = clamp(np.array(0.0, dtype), k, np.array(9.0, dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    index = convert_element_type(floor(k), np.int32)
    table = take(np.array(_STIRLING_TAIL, dtype), index, 0)
    return select(use_table, table, approx)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    log1minusprob = log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = split_keys(key, 2)
        num_geom_out = select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform_raw(subkey, 0.0, 1.0, shape, dtype_of(prob))
        geom = ceil(log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond(carry):
        i, geom_sum = carry[0], carry[2]
        return _any(geom_sum <= count) & (i < max_iters)

    zeros = full_like(prob, 0, dtype_of(prob), shape)
    k = while_loop(cond, body, (np.int32(0), zeros, zeros, key))[1]
    return convert_element_type(k - 1, dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
    stddev = sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split_keys(key, 3)
        u = uniform_raw(subkey_0, 0.0, 1.0, shape, dtype_of(prob))
        v = uniform_raw(subkey_1, 0.0, 1.0, shape, dtype_of(prob))
        u = u - 0.5
        us = 0.5 - lax_abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = log(v * alpha / (a / (us * us) + b))
        ub = (
            (m + 0.5) * log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * log(r * (count - k + 1) / (k + 1))
            + _stirling_approx_tail(m)
            + _stirling_approx_tail(count - m)
            - _stirling_approx_tail(k)
            - _stirling_approx_tail(count - k)
        )
        accept = accept1 | (bitwise_not(reject) & (v <= ub))
        return i + 1, select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, accepted = carry[0], carry[2]
        return _any(bitwise_not(accepted)) & (i < max_iters)

    k_init = full_like(prob, -1, dtype_of(prob), shape)
    accepted = full_like(prob, False, np.dtype(np.bool_), shape)
    k = while_loop(cond, body, (np.int32(0), k_init, accepted, key))[1]
    return convert_element_type(k, dtype)


@partial(jit, static_argnums=(3, 4))
def binomial_raw(key, count, prob, shape, dtype):
    if shape is None:
        shape = broadcast_shapes(shape_of(count), shape_of(prob))
    else:
        check_shape("binomial", shape, shape_of(count), shape_of(prob))
    prob = promote_inexact(prob)
    count = broadcast_to(convert_element_type(count, dtype_of(prob)), shape)
    prob = broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = _isnan(count) | (count < 0.0)
    count_inf = bitwise_not(is_finite(count)) & bitwise_not(_isnan(count))
    q_is_nan = _isnan(q)
    q_l_0 = q < 0.0
    q = select(q_is_nan | q_l_0, full_like(q, 0.01), q)
    # Inversion for small means n*q (and invalid counts), BTRS rejection otherwise.
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = floor(count)  # float counts as numpy.random.binomial takes them
    count_inv = select(use_inversion, count, full_like(count, 0.0))
    count_btrs = select(use_inversion, full_like(count, 1e4), count)
    q_btrs = select(use_inversion, full_like(q, 0.5), q)
    max_iters = np.array(dtypes.finfo(dtype).max, dtype)
    samples = select(
        use_inversion,
        _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
        _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters),
    )
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = select(invalid, full_like(samples, np.nan, dtype), samples)
    samples = select(count_inf & bitwise_not(invalid), full_like(samples, np.inf, dtype), samples)
    keep = p_lt_half | count_nan_or_neg | q_is_nan | count_inf
    return select(keep, samples, convert_element_type(count, dtype) - samples)


@partial(jit, static_argnums=(3, 4, 5))
def multinomial_raw(key, n, p, shape, dtype, unroll):
    if shape is None:
        shape = shape_of(p)
    n = broadcast_to(n, shape[:-1])
    p = broadcast_to(p, shape)

    def step(remainder, ratio_key):
        ratio, key = ratio_key
        from lamina.random._ops import clip

        count = binomial_raw(key, remainder, clip(ratio, 0, 1), None, dtype_of(remainder))
        return remainder - count, count

    from lamina.lax import transpose

    ndim = len(shape)
    p = transpose(p, (ndim - 1, *range(ndim - 1)))
    remaining = cumsum(p, 0, reverse=True)
    from lamina.random._ops import where

    ratios = p / where(remaining == 0, 1, remaining)
    keys = random_split(key, (shape_of(ratios)[0],))
    _, counts = scan(step, n, (ratios, keys), unroll=unroll)
    return convert_element_type(transpose(counts, (*range(1, ndim), 0)), dtype)
