"""Samplers built on normal draws: ``normal`` (by the inverse error function of a
uniform draw; complex dtypes take two), ``truncated_normal``, ``lognormal``,
``maxwell``, ``double_sided_maxwell``, ``wald``, ``multivariate_normal`` and
``orthogonal``. Each public function checks its arguments as JAX does, then calls its
jitted body, in JAX 0.10.2's order of operations."""

from __future__ import annotations

from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.lax import linalg as lax_linalg
from lamina.random.arguments import (
    canonicalize_shape,
    check_all_safe_to_cast,
    check_broadcast_shapes,
    check_shape,
    checked_float_sampling,
    concrete_index,
    float_dtype,
    optional_shape,
    promote_inexact_pair,
    with_out_sharding,
)
from lamina.random.keys import split_keys
from lamina.random.samplers.uniform import _rademacher, _uniform

__all__ = [
    "double_sided_maxwell",
    "lognormal",
    "maxwell",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "truncated_normal",
    "wald",
]


@with_out_sharding
def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal samples (complex dtypes: real and imaginary parts each of
    variance 1/2)."""
    key, _ = lax.check_prng_key("normal", key)
    shape = canonicalize_shape(shape, "normal")
    dtype = float_dtype("normal", dtype, np.inexact, "a float or complex")
    return _normal(key, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _normal(key, shape, dtype):
    if not dtypes.issubdtype(dtype, np.complexfloating):
        return _normal_real(key, shape, dtype)
    key_re, key_im = split_keys(key, 2)
    real_dtype = np.dtype(np.array(0, dtype).real.dtype)
    re = lax.convert_element_type(_normal_real(key_re, shape, real_dtype), dtype)
    im = lax.convert_element_type(_normal_real(key_im, shape, real_dtype), dtype)
    return (re + 1j * im) / np.array(np.sqrt(2), dtype)


@partial(jit, static_argnums=(1, 2))
def _normal_real(key, shape, dtype):
    check_shape("normal", shape)
    # The largest float below 1 in magnitude: erf_inv(-1) would be -inf.
    lo = np.array(-1.0 + 2.0 ** -(dtypes.finfo(dtype).nmant + 1), dtype)
    u = _uniform(key, lo, np.array(1.0, dtype), shape, dtype)
    return np.array(np.sqrt(2), dtype) * lax.erf_inv(u)


@with_out_sharding
def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal samples restricted to ``(lower, upper)``."""
    shape = optional_shape(shape, "truncated_normal")
    key, _ = lax.check_prng_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    return _truncated_normal(key, lower, upper, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _truncated_normal(key, lower, upper, shape, dtype):
    if shape is None:
        shape = lax.broadcast_shapes(jnp.shape(lower), jnp.shape(upper))
    else:
        check_shape("truncated_normal", shape, jnp.shape(lower), jnp.shape(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = _uniform(key, a, b, shape, dtype)
    out = sqrt2 * lax.erf_inv(u)
    # Rounding (or u == a) must not leave the open interval (lower, upper).
    lo = lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype))
    hi = lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype))
    return jnp.clip(out, lo, hi)


@with_out_sharding
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):  # noqa: B008 (JAX's default)
    """Log-normal samples: ``exp(sigma * normal)``."""
    key, _ = lax.check_prng_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype, np.inexact, "a float or complex")
    shape = check_broadcast_shapes("lognormal", shape, sigma)
    check_all_safe_to_cast("lognormal", dtype, sigma)
    return _lognormal(key, sigma, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _lognormal(key, sigma, shape, dtype):
    sigma = lax.convert_element_type(sigma, dtype)
    return lax.exp(_normal(key, shape, dtype) * sigma)


@with_out_sharding
def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
    """Maxwell samples: the norms of 3-D standard normal vectors."""
    key, _ = lax.check_prng_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    return _maxwell(key, canonicalize_shape(shape, "maxwell"), dtype)


@partial(jit, static_argnums=(1, 2))
def _maxwell(key, shape, dtype):
    x = _normal(key, (*shape, 3), dtype)
    return lax.sqrt(lax.reduce_sum(x * x, (len(shape),)))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell samples with random signs, scaled by ``scale`` and shifted by ``loc``."""
    key, _ = lax.check_prng_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    shape = canonicalize_shape(shape, "double_sided_maxwell")
    return _double_sided_maxwell(key, loc, scale, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _double_sided_maxwell(key, loc, scale, shape, dtype):
    params_shape = lax.broadcast_shapes(jnp.shape(loc), jnp.shape(scale))
    # As in JAX: an empty shape takes the parameters' shape, which is then appended.
    shape = (*(shape or params_shape), *params_shape)
    maxwell_key, sign_key = split_keys(key, 2)
    maxwell_rvs = _maxwell(maxwell_key, shape, dtype)
    random_sign = _rademacher(sign_key, shape, dtype)
    return random_sign * maxwell_rvs * scale + loc


@with_out_sharding
def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) samples with mean ``mean`` and scale 1."""
    key, shape, dtype = checked_float_sampling("wald", key, shape, dtype, mean)
    return _wald(key, mean, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _wald(key, mean, shape, dtype):
    k1, k2 = split_keys(key, 2)
    mean = jnp.broadcast_to(lax.convert_element_type(mean, dtype), shape)
    v = _normal(k1, shape, dtype)
    z = _uniform(k2, 0.0, 1.0, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


@with_out_sharding
def multivariate_normal(
    key, mean, cov, shape=None, dtype=None, method="cholesky", *, out_sharding=None
):
    """Multivariate normal samples with mean ``mean`` and covariance ``cov``, factored
    by ``method``: ``'cholesky'``, ``'eigh'`` or ``'svd'``."""
    key, _ = lax.check_prng_key("multivariate_normal", key)
    mean, cov = promote_inexact_pair(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else dtypes.check_and_canonicalize_user_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(
            f"dtype argument to `multivariate_normal` must be a float dtype, got {dtype}"
        )
    shape = optional_shape(shape, "multivariate_normal")
    return _multivariate_normal(key, mean, cov, shape, np.dtype(dtype), method)


@partial(jit, static_argnums=(3, 4, 5))
def _multivariate_normal(key, mean, cov, shape, dtype, method):
    mean_shape, cov_shape = jnp.shape(mean), jnp.shape(cov)
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
        shape = lax.broadcast_shapes(mean_shape[:-1], cov_shape[:-2])
    else:
        check_shape("normal", shape, mean_shape[:-1], cov_shape[:-2])
    if method == "svd":
        u, s, _ = lax_linalg.svd(cov, full_matrices=True)
        factor = u * lax.sqrt(lax.expand_dims(s, (s.ndim - 1,)))
    elif method == "eigh":
        v, w = lax_linalg.eigh(cov)
        factor = v * lax.sqrt(lax.expand_dims(w, (w.ndim - 1,)))
    else:
        factor = lax_linalg.cholesky(cov)
    samples = _normal(key, (*shape, n), dtype)
    return mean + _batched_matvec(factor, samples)


def _batched_matvec(factor, x):
    """``einsum('...ij,...j->...i', factor, x)``, contracted as jnp.einsum does."""
    f_shape, x_shape = jnp.shape(factor), jnp.shape(x)
    if len(f_shape) == 2:
        # No batch axes on the factor: one dot with x's axes kept in front.
        return lax.dot_general(x, factor, (((len(x_shape) - 1,), (1,)), ((), ())))
    batch = lax.broadcast_shapes(f_shape[:-2], x_shape[:-1])
    factor = jnp.broadcast_to(factor, (*batch, *f_shape[-2:]))
    x = jnp.broadcast_to(x, (*batch, x_shape[-1]))
    nb = len(batch)
    dims = (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    return lax.dot_general(factor, x, dims)


@with_out_sharding
def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Random matrices with orthonormal columns (or rows), Haar distributed."""
    m_ = n if m is None else m
    shape = canonicalize_shape(shape, "orthogonal")
    key, _ = lax.check_prng_key("orthogonal", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype))
    n = concrete_index(n, "The error occurred in jax.random.orthogonal()")
    m_ = concrete_index(m_, "The error occurred in jax.random.orthogonal()")
    return _orthogonal(key, n, m_, shape, dtype)


@partial(jit, static_argnums=(1, 2, 3, 4))
def _orthogonal(key, n, m, shape, dtype):
    z = _normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = lax_linalg.qr(z, full_matrices=False)
    d = _diagonal(r)
    x = q * lax.expand_dims(lax.sign(d), (d.ndim - 1,))
    if n < m:
        ndim = x.ndim
        return lax.transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))
    return x


def _diagonal(r):
    """The diagonal of square matrices ``r[..., k, k]``: every (k+1)-th of k*k entries."""
    *batch, k, _ = jnp.shape(r)
    flat = lax.reshape(r, (*batch, k * k))
    return lax.slice_in_dim(flat, 0, k * k, stride=k + 1, axis=len(batch))
