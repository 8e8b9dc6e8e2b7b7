"""Public samplers with parameters: the gamma family, the transforms of normal and
uniform draws, the multivariate ones and the index samplers (``permutation``,
``choice``, ``categorical``). Each checks its arguments as JAX does, then calls the
key-key sampler of :mod:`._gamma` or :mod:`._derived`."""

from __future__ import annotations

import math
import operator

import numpy as np

from lamina.interpreters import ConcretizationTypeError
from lamina.ir import dtypes
from lamina.lax import convert_element_type, slice_in_dim
from lamina.lax import reshape as lax_reshape
from lamina.random import _derived, _discrete, _gamma
from lamina.random._api_basic import float_dtype, randint
from lamina.random._keys import canonicalize_shape, check_prng_key
from lamina.random._ops import (
    asarray,
    broadcast_to,
    check_all_safe_to_cast,
    check_arraylike,
    check_broadcast_shapes,
    check_shape,
    dtype_of,
    promote_inexact,
    shape_of,
    take,
)

__all__ = [
    "ball",
    "beta",
    "binomial",
    "categorical",
    "chisquare",
    "choice",
    "dirichlet",
    "double_sided_maxwell",
    "f",
    "gamma",
    "generalized_normal",
    "geometric",
    "loggamma",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rayleigh",
    "t",
    "triangular",
    "truncated_normal",
    "wald",
    "weibull_min",
]


def _opt_shape(shape, name):
    return None if shape is None else canonicalize_shape(shape, name)


def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma(a) samples (scale 1)."""
    key, _ = check_prng_key("gamma", key)
    dtype = float_dtype("gamma", dtype)
    return _gamma.gamma_raw(key, a, _opt_shape(shape, "gamma"), dtype)


def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """The logarithms of Gamma(a) samples, accurate for small ``a``."""
    key, _ = check_prng_key("loggamma", key)
    dtype = float_dtype("gamma", dtype)
    return _gamma.gamma_raw(key, a, _opt_shape(shape, "loggamma"), dtype, log_space=True)


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta(a, b) samples."""
    key, _ = check_prng_key("beta", key)
    dtype = float_dtype("beta", dtype)
    check_all_safe_to_cast("beta", dtype, a, b)
    shape = check_broadcast_shapes("beta", shape, a, b)
    return _gamma.beta_raw(key, a, b, shape, dtype)


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet(alpha) samples along the last axis of ``alpha``."""
    key, _ = check_prng_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    return _gamma.dirichlet_raw(key, alpha, _opt_shape(shape, "dirichlet"), dtype)


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t samples with ``df`` degrees of freedom."""
    key, _ = check_prng_key("t", key)
    dtype = float_dtype("t", dtype)
    shape = check_broadcast_shapes("t", shape, df)
    check_all_safe_to_cast("t", dtype, df)
    return _gamma.t_raw(key, df, shape, dtype)


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square samples with ``df`` degrees of freedom."""
    key, _ = check_prng_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    shape = check_broadcast_shapes("chisquare", shape, df)
    check_all_safe_to_cast("chisquare", dtype, df)
    return _gamma.chisquare_raw(key, df, shape, dtype)


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F-distribution samples with ``dfnum`` and ``dfden`` degrees of freedom."""
    key, _ = check_prng_key("f", key)
    dtype = float_dtype("f", dtype)
    shape = check_broadcast_shapes("f", shape, dfnum, dfden)
    check_all_safe_to_cast("f", dtype, dfnum, dfden)
    return _gamma.f_raw(key, dfnum, dfden, shape, dtype)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Generalized normal samples (density proportional to exp(-|x|**p))."""
    shape = canonicalize_shape(shape, "generalized_normal")
    key, _ = check_prng_key("generalized_normal", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype))
    return _gamma.generalized_normal_raw(key, p, shape, dtype)


def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Points uniform in the unit ``p``-norm ball of dimension ``d``."""
    shape = canonicalize_shape(shape, "ball")
    key, _ = check_prng_key("ball", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype))
    d = _concrete_index(d, "The error occurred in jax.random.ball()")
    return _gamma.ball_raw(key, p, d, shape, dtype)


def _concrete_index(x, context):
    if hasattr(x, "aval") and not hasattr(x, "_value") and type(x).__name__.endswith("Tracer"):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {x}\n{context}"
        )
    return operator.index(x)


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal samples restricted to ``(lower, upper)``."""
    shape = _opt_shape(shape, "truncated_normal")
    key, _ = check_prng_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    return _derived.truncated_normal_raw(key, lower, upper, shape, dtype)


def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
    """Maxwell samples: the norms of 3-D standard normal vectors."""
    key, _ = check_prng_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    return _derived.maxwell_raw(key, canonicalize_shape(shape, "maxwell"), dtype)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell samples with random signs, scaled by ``scale`` and shifted by ``loc``."""
    key, _ = check_prng_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    shape = canonicalize_shape(shape, "double_sided_maxwell")
    return _derived.double_sided_maxwell_raw(key, loc, scale, shape, dtype)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples."""
    key, _ = check_prng_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    shape = canonicalize_shape(shape, "weibull_min")
    return _derived.weibull_min_raw(key, scale, concentration, shape, dtype)


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto samples with shape parameter ``b``."""
    key, _ = check_prng_key("pareto", key)
    dtype = float_dtype("pareto", dtype)
    shape = check_broadcast_shapes("pareto", shape, b)
    check_all_safe_to_cast("pareto", dtype, b)
    return _derived.pareto_raw(key, b, shape, dtype)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):  # noqa: B008 (JAX's default)
    """Log-normal samples: ``exp(sigma * normal)``."""
    key, _ = check_prng_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype, np.inexact, "a float or complex")
    shape = check_broadcast_shapes("lognormal", shape, sigma)
    check_all_safe_to_cast("lognormal", dtype, sigma)
    return _derived.lognormal_raw(key, sigma, shape, dtype)


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular samples on ``[left, right]`` peaking at ``mode``."""
    key, _ = check_prng_key("triangular", key)
    dtype = float_dtype("triangular", dtype)
    shape = check_broadcast_shapes("triangular", shape, left, mode, right)
    check_all_safe_to_cast("triangular", dtype, left, mode, right)
    return _derived.triangular_raw(key, left, mode, right, shape, dtype)


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) samples with mean ``mean`` and scale 1."""
    key, _ = check_prng_key("wald", key)
    dtype = float_dtype("wald", dtype)
    shape = check_broadcast_shapes("wald", shape, mean)
    check_all_safe_to_cast("wald", dtype, mean)
    return _derived.wald_raw(key, mean, shape, dtype)


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh samples with scale ``scale``."""
    key, _ = check_prng_key("rayleigh", key)
    dtype = float_dtype("rayleigh", dtype)
    shape = check_broadcast_shapes("rayleigh", shape, scale)
    check_all_safe_to_cast("rayleigh", dtype, scale)
    return _derived.rayleigh_raw(key, scale, shape, dtype)


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Geometric samples: the number of Bernoulli(p) trials up to the first success."""
    key, _ = check_prng_key("geometric", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype))
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = check_broadcast_shapes("geometric", shape, p)
    check_arraylike("geometric", p)
    return _derived.geometric_raw(key, promote_inexact(p), shape, dtype)


def multivariate_normal(
    key, mean, cov, shape=None, dtype=None, method="cholesky", *, out_sharding=None
):
    """Multivariate normal samples with mean ``mean`` and covariance ``cov``, factored
    by ``method``: ``'cholesky'``, ``'eigh'`` or ``'svd'``."""
    key, _ = check_prng_key("multivariate_normal", key)
    mean, cov = _promote_inexact_pair(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = dtype_of(mean) if dtype is None else dtypes.check_and_canonicalize_user_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(
            f"dtype argument to `multivariate_normal` must be a float dtype, got {dtype}"
        )
    shape = _opt_shape(shape, "multivariate_normal")
    return _derived.multivariate_normal_raw(key, mean, cov, shape, np.dtype(dtype), method)


def _promote_inexact_pair(a, b):
    a, b = asarray(a), asarray(b)
    dtype = dtypes.to_inexact_dtype(dtypes.result_type(a, b))
    return convert_element_type(a, dtype), convert_element_type(b, dtype)


def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Random matrices with orthonormal columns (or rows), Haar distributed."""
    m_ = n if m is None else m
    shape = canonicalize_shape(shape, "orthogonal")
    key, _ = check_prng_key("orthogonal", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype))
    n = _concrete_index(n, "The error occurred in jax.random.orthogonal()")
    m_ = _concrete_index(m_, "The error occurred in jax.random.orthogonal()")
    return _derived.orthogonal_raw(key, n, m_, shape, dtype)


def _canonical_axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    """A random permutation of ``range(x)`` (integer ``x``) or of ``x`` along ``axis``."""
    key, _ = check_prng_key("permutation", key)
    check_arraylike("permutation", x)
    ndim = len(shape_of(x))
    axis = _canonical_axis(axis, ndim or 1)
    if not ndim:
        if not dtypes.issubdtype(dtype_of(x), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        n = _concrete_index(x, "argument x of jax.random.permutation()")
        return _derived.shuffle_raw(key, _derived.arange(n), axis)
    x = asarray(x)
    if independent or ndim == 1:
        return _derived.shuffle_raw(key, x, axis)
    ind = _derived.shuffle_raw(key, _derived.arange(shape_of(x)[axis]), 0)
    return take(x, ind, axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples from ``a`` (or ``range(a)``), with or without replacement, uniformly or
    with probabilities ``p``."""
    key, _ = check_prng_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    check_arraylike("choice", a)
    arr = asarray(a)
    a_shape = shape_of(arr)
    if not a_shape:
        n_inputs = _concrete_index(a, "The error occurred in jax.random.choice()")
    else:
        axis = _canonical_axis(axis, len(a_shape))
        n_inputs = a_shape[axis]
    shape = tuple(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        from lamina.lax import full

        return full(shape, 0, dtype_of(arr))
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) "
            "when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if not a_shape else take(arr, ind, axis)
        else:
            perm = permutation(key, n_inputs if not a_shape else arr, axis)
            result = slice_in_dim(perm, 0, n_draws, axis=axis)
    else:
        check_arraylike("choice", p)
        p_arr = promote_inexact(p)
        if shape_of(p_arr) != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {shape_of(p_arr)} and a.shape[axis] is {n_inputs}."
            )
        ind = _derived.choice_with_p(key, p_arr, shape, replace, n_inputs, mode or "low")
        result = ind if not a_shape else take(arr, ind, axis)
    out_shape = shape if not a_shape else (*a_shape[:axis], *shape, *a_shape[axis + 1 :])
    return lax_reshape(result, out_shape)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *, out_sharding=None):
    """Indices drawn along ``axis`` with log-probabilities ``logits`` (Gumbel-max)."""
    key, _ = check_prng_key("categorical", key)
    check_arraylike("categorical", logits)
    logits = asarray(logits)
    logits_shape = shape_of(logits)
    batch_shape = tuple(np.delete(np.array(logits_shape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = canonicalize_shape(shape, "categorical")
        check_shape("categorical", shape, batch_shape)
    return _derived.categorical_raw(key, logits, shape, batch_shape, axis, replace, mode or "low")


def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson samples with rate ``lam``."""
    key, _ = check_prng_key("poisson", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype))
    shape = shape_of(lam) if shape is None else canonicalize_shape(shape, "poisson")
    lam = convert_element_type(broadcast_to(asarray(lam), shape), np.float32)
    return _discrete.poisson_raw(key, lam, shape, dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial samples: successes in ``n`` trials of probability ``p`` (as floats)."""
    key, _ = check_prng_key("binomial", key)
    check_arraylike("binomial", n, p)
    dtype = float_dtype("binomial", dtype)
    return _discrete.binomial_raw(key, n, p, _opt_shape(shape, "binomial"), dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts over the last axis of ``p`` for ``n`` trials."""
    key, _ = check_prng_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = _promote_inexact_pair(n, p)
    dtype = float_dtype("multinomial", dtype)
    shape = None if shape is None else canonicalize_shape(shape, "multinomial")
    return _discrete.multinomial_raw(key, n, p, shape, dtype, unroll)
