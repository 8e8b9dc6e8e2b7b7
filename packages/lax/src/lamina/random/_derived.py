"""Samplers derived from uniform and normal draws, on raw keys: ``truncated_normal``,
``maxwell``, ``double_sided_maxwell``, ``weibull_min``, ``pareto``, ``lognormal``,
``triangular``, ``wald``, ``rayleigh``, ``geometric``, ``multivariate_normal``,
``orthogonal``, and the index samplers ``permutation``, ``choice`` and
``categorical``. Jitted, in JAX 0.10.2's order of operations."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from lamina.ir import dtypes
from lamina.lax import (
    argmax,
    broadcast_shapes,
    convert_element_type,
    cumsum,
    div,
    dot_general,
    erf,
    erf_inv,
    exp,
    expand_dims,
    floor,
    integer_pow,
    iota,
    le,
    log,
    log1p,
    mul,
    nextafter,
    pow,
    reduce_sum,
    reshape,
    select,
    sign,
    slice_in_dim,
    sort_key_val,
    sqrt,
    stop_gradient,
    top_k,
    transpose,
)
from lamina.lax import linalg as lax_linalg
from lamina.random._basic import (
    exponential_raw,
    gumbel_raw,
    normal_raw,
    rademacher_raw,
    split_keys,
    uniform_raw,
)
from lamina.random._key_prims import random_bits
from lamina.random._ops import broadcast_to, check_shape, clip, dtype_of, shape_of, where
from lamina.random._ops import sampler_jit as jit

__all__ = [
    "categorical_raw",
    "double_sided_maxwell_raw",
    "geometric_raw",
    "lognormal_raw",
    "maxwell_raw",
    "multivariate_normal_raw",
    "orthogonal_raw",
    "pareto_raw",
    "rayleigh_raw",
    "shuffle_raw",
    "triangular_raw",
    "truncated_normal_raw",
    "wald_raw",
    "weibull_min_raw",
]


@partial(jit, static_argnums=(3, 4))
def truncated_normal_raw(key, lower, upper, shape, dtype):
    if shape is None:
        shape = broadcast_shapes(shape_of(lower), shape_of(upper))
    else:
        check_shape("truncated_normal", shape, shape_of(lower), shape_of(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = convert_element_type(lower, dtype)
    upper = convert_element_type(upper, dtype)
    a = erf(lower / sqrt2)
    b = erf(upper / sqrt2)
    u = uniform_raw(key, a, b, shape, dtype)
    out = sqrt2 * erf_inv(u)
    # Rounding (or u == a) must not leave the open interval (lower, upper).
    lo = nextafter(stop_gradient(lower), np.array(np.inf, dtype))
    hi = nextafter(stop_gradient(upper), np.array(-np.inf, dtype))
    return clip(out, lo, hi)


@partial(jit, static_argnums=(1, 2))
def maxwell_raw(key, shape, dtype):
    x = normal_raw(key, (*shape, 3), dtype)
    return sqrt(reduce_sum(x * x, (len(shape),)))


@partial(jit, static_argnums=(3, 4))
def double_sided_maxwell_raw(key, loc, scale, shape, dtype):
    params_shape = broadcast_shapes(shape_of(loc), shape_of(scale))
    # As in JAX: an empty shape takes the parameters' shape, which is then appended.
    shape = (*(shape or params_shape), *params_shape)
    maxwell_key, sign_key = split_keys(key, 2)
    maxwell_rvs = maxwell_raw(maxwell_key, shape, dtype)
    random_sign = rademacher_raw(sign_key, shape, dtype)
    return random_sign * maxwell_rvs * scale + loc


@partial(jit, static_argnums=(3, 4))
def weibull_min_raw(key, scale, concentration, shape, dtype):
    u = uniform_raw(key, 0, 1, shape, dtype)
    x = -log1p(-u)
    exponent = 1.0 / concentration
    return _jnp_power(x, exponent) * scale


def _jnp_power(x, y):
    """``jnp.power`` of a float array and a (traced) float exponent."""
    shape = broadcast_shapes(shape_of(x), shape_of(y))
    dtype = dtypes.result_type(x, y)
    x = broadcast_to(convert_element_type(x, dtype), shape)
    return pow(x, broadcast_to(convert_element_type(y, dtype), shape))


@partial(jit, static_argnums=(2, 3))
def pareto_raw(key, b, shape, dtype):
    b = convert_element_type(b, dtype)
    e = exponential_raw(key, shape, dtype)
    return exp(e / b)


@partial(jit, static_argnums=(2, 3))
def lognormal_raw(key, sigma, shape, dtype):
    sigma = convert_element_type(sigma, dtype)
    return exp(normal_raw(key, shape, dtype) * sigma)


@partial(jit, static_argnums=(4, 5))
def triangular_raw(key, left, mode, right, shape, dtype):
    left = broadcast_to(convert_element_type(left, dtype), shape)
    right = broadcast_to(convert_element_type(right, dtype), shape)
    mode = broadcast_to(convert_element_type(mode, dtype), shape)
    fc = (mode - left) / (right - left)
    u = uniform_raw(key, 0.0, 1.0, shape, dtype)
    out1 = left + sqrt(u * (right - left) * (mode - left))
    out2 = right - sqrt((1 - u) * (right - left) * (right - mode))
    return select(u < fc, out1, out2)


@partial(jit, static_argnums=(2, 3))
def wald_raw(key, mean, shape, dtype):
    k1, k2 = split_keys(key, 2)
    mean = broadcast_to(convert_element_type(mean, dtype), shape)
    v = normal_raw(k1, shape, dtype)
    z = uniform_raw(k2, 0.0, 1.0, shape, dtype)
    y = integer_pow(v, 2)
    y_sq = integer_pow(y, 2)
    mean_sq = integer_pow(mean, 2)
    sqrt_term = sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return select(le(z, mean / (mean + x)), x, mean_sq / x)


@partial(jit, static_argnums=(2, 3))
def rayleigh_raw(key, scale, shape, dtype):
    u = uniform_raw(key, 0.0, 1.0, shape, dtype)
    scale = broadcast_to(convert_element_type(scale, dtype), shape)
    return mul(scale, sqrt(mul(log(u), np.array(-2, dtype))))


@partial(jit, static_argnums=(2, 3))
def geometric_raw(key, p, shape, dtype):
    u = uniform_raw(key, 0.0, 1.0, shape, dtype_of(p))
    # u == 0 becomes 1 (log(0) would be -inf), leaving every other sample as it was.
    u = where(u == 0, 1, u)
    log_one_minus_p = broadcast_to(log1p(-p), shape)
    g = floor(div(log(u), log_one_minus_p)) + 1
    return convert_element_type(g, dtype)


@partial(jit, static_argnums=(3, 4, 5))
def multivariate_normal_raw(key, mean, cov, shape, dtype, method):
    mean_shape, cov_shape = shape_of(mean), shape_of(cov)
    if len(mean_shape) < 1:
        raise ValueError(
            f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {len(mean_shape)}"
        )
    if len(cov_shape) < 2:
        raise ValueError(
            f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {len(cov_shape)}"
        )
    n = mean_shape[-1]
    if cov_shape[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
            f"cov.shape == {cov_shape}."
        )
    if shape is None:
        shape = broadcast_shapes(mean_shape[:-1], cov_shape[:-2])
    else:
        check_shape("normal", shape, mean_shape[:-1], cov_shape[:-2])
    if method == "svd":
        u, s, _ = lax_linalg.svd(cov, full_matrices=True)
        factor = u * sqrt(expand_dims(s, (len(shape_of(s)) - 1,)))
    elif method == "eigh":
        v, w = lax_linalg.eigh(cov)
        factor = v * sqrt(expand_dims(w, (len(shape_of(w)) - 1,)))
    else:
        factor = lax_linalg.cholesky(cov)
    samples = normal_raw(key, (*shape, n), dtype)
    return mean + _batched_matvec(factor, samples)


def _batched_matvec(factor, x):
    """``einsum('...ij,...j->...i', factor, x)``, contracted as jnp.einsum does."""
    f_shape, x_shape = shape_of(factor), shape_of(x)
    if len(f_shape) == 2:
        # No batch axes on the factor: one dot with x's axes kept in front.
        return dot_general(x, factor, (((len(x_shape) - 1,), (1,)), ((), ())))
    batch = broadcast_shapes(f_shape[:-2], x_shape[:-1])
    factor = broadcast_to(factor, (*batch, *f_shape[-2:]))
    x = broadcast_to(x, (*batch, x_shape[-1]))
    nb = len(batch)
    dims = (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    return dot_general(factor, x, dims)


@partial(jit, static_argnums=(1, 2, 3, 4))
def orthogonal_raw(key, n, m, shape, dtype):
    z = normal_raw(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = lax_linalg.qr(z, full_matrices=False)
    d = _diagonal(r)
    x = q * expand_dims(sign(d), (len(shape_of(d)) - 1,))
    if n < m:
        ndim = len(shape_of(x))
        return transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))
    return x


def _diagonal(r):
    """The diagonal of square matrices ``r[..., k, k]``: every (k+1)-th of k*k entries."""
    *batch, k, _ = shape_of(r)
    flat = reshape(r, (*batch, k * k))
    return slice_in_dim(flat, 0, k * k, stride=k + 1, axis=len(batch))


@partial(jit, static_argnums=(2,))
def shuffle_raw(key, x, axis):
    """``x`` shuffled along ``axis``: sorted by fresh random 32-bit keys, in as many
    rounds as make ties negligible (three times the bits of the size, as JAX)."""
    size = math.prod(shape_of(x))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, subkey = split_keys(key, 2)
        sort_keys = random_bits(subkey, 32, shape_of(x))
        _, x = sort_key_val(sort_keys, x, axis)
    return x


def arange(n):
    return iota(dtypes.canonicalize_dtype(np.int64), n)


@partial(jit, static_argnums=(2, 3, 4, 5, 6))
def categorical_raw(key, logits, shape, batch_shape, axis, replace, mode):
    prefix = shape[: len(shape) - len(batch_shape)]
    ndim = len(shape_of(logits))
    if replace:
        axis = axis - ndim if axis >= 0 else axis
        logits_shape = list(shape[len(shape) - len(batch_shape) :])
        logits_shape.insert(axis % ndim, shape_of(logits)[axis])
        noise = gumbel_raw(key, (*prefix, *logits_shape), dtype_of(logits), mode)
        x = noise + expand_dims(logits, tuple(range(len(prefix))))
        return argmax(x, axis % len(shape_of(x)), dtypes.canonicalize_dtype(np.int64))
    logits = logits + gumbel_raw(key, shape_of(logits), dtype_of(logits), mode)
    k = math.prod(prefix)
    axis = axis % ndim
    if k > shape_of(logits)[axis]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of "
            f"categories ({shape_of(logits)[axis]})."
        )
    perm = (*(i for i in range(ndim) if i != axis), axis)
    _, indices = top_k(transpose(logits, perm), k)
    dimensions = (len(shape_of(indices)) - 1, *range(len(shape_of(indices)) - 1))
    return reshape(indices, tuple(shape), dimensions)


@partial(jit, static_argnums=(2, 3, 4, 5))
def choice_with_p(key, p, shape, replace, n_inputs, mode):
    if replace:
        p_cuml = cumsum(p)
        total = slice_in_dim(p_cuml, n_inputs - 1, n_inputs)
        r = reshape(total, ()) * (1 - uniform_raw(key, 0.0, 1.0, shape, dtype_of(p_cuml)))
        # searchsorted(p_cuml, r), side 'left': how many cumulative sums are below r.
        below = expand_dims(p_cuml, tuple(range(len(shape)))) < expand_dims(r, (len(shape),))
        count = reduce_sum(convert_element_type(below, np.int32), (len(shape),))
        return convert_element_type(count, dtypes.canonicalize_dtype(np.int64))
    g = gumbel_raw(key, (n_inputs,), dtype_of(p), mode) + log(p)
    k = math.prod(shape)
    return convert_element_type(top_k(g, k)[1], dtypes.canonicalize_dtype(np.int64))
