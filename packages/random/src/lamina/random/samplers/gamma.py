"""Gamma-distributed samples: the ``random_gamma`` primitive (Marsaglia and Tsang's
rejection method with JAX's loop structure, in linear or log space, differentiated
implicitly through ``random_gamma_grad``) and the samplers built on it: ``gamma``,
``loggamma``, ``beta``, ``dirichlet``, ``chisquare``, ``f``, ``t``,
``generalized_normal`` and ``ball``. Each public function checks its arguments as JAX
does, then calls its jitted body, in JAX 0.10.2's order of operations."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import (
    ad,
    batching,
    def_standard_impl,
    default_backend,
    jit,
    key_reuse,
    lower_fun,
    vmap,
)
from lamina.ir import Primitive, dtypes
from lamina.random.arguments import (
    canonicalize_shape,
    check_all_safe_to_cast,
    check_broadcast_shapes,
    check_shape,
    checked_float_sampling,
    concrete_index,
    float_dtype,
    optional_shape,
    with_out_sharding,
)
from lamina.random.keys import split_keys
from lamina.random.samplers.inverse_cdf import _exponential
from lamina.random.samplers.normal import _normal
from lamina.random.samplers.uniform import _rademacher, _uniform

__all__ = [
    "ball",
    "beta",
    "chisquare",
    "dirichlet",
    "f",
    "gamma",
    "generalized_normal",
    "loggamma",
    "random_gamma_p",
    "t",
]


def _gamma_one(key, alpha, log_space: bool):
    """One Gamma(alpha) sample (scalar ``alpha``), Marsaglia and Tsang's method.

    For alpha < 1 it samples Gamma(alpha + 1) and scales by U**(1/alpha) (in log space
    with ``log_space``, where small alphas would underflow)."""
    dtype = alpha.dtype

    def c(v):
        return np.array(v, dtype)

    zero, one = c(0), c(1)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, alpha + one)
    d = alpha - c(1.0 / 3.0)
    cc = lax.div(c(1.0 / 3.0), lax.sqrt(d))

    def rejected(state):
        _, x, v, u = state
        squeeze_test = lax.ge(u, one - lax.mul(c(0.0331), lax.mul(x, x)))
        log_test = lax.ge(lax.log(u), x * c(0.5) + d * ((one - v) + lax.log(v)))
        return lax.bitwise_and(squeeze_test, log_test)

    def propose(state):
        def next_normal(kxv):
            k, subkey = split_keys(kxv[0], 2)
            x = _normal(subkey, (), dtype)
            return k, x, one + x * cc

        k, x_key, u_key = split_keys(state[0], 3)
        _, x, v = lax.while_loop(
            lambda kxv: lax.le(kxv[2], zero), next_normal, (x_key, zero, c(-1))
        )
        u = _uniform(u_key, 0.0, 1.0, (), dtype)
        return k, x * x, (v * v) * v, u

    key, subkey = split_keys(key, 2)
    _, _, v, _ = lax.while_loop(rejected, propose, (key, zero, one, c(2)))
    if log_space:
        log_samples = -_exponential(subkey, (), dtype)
        log_boost = lax.select(
            boost_mask | (log_samples == zero), zero, log_samples * lax.div(one, alpha_orig)
        )
        return (lax.log(d) + lax.log(v)) + log_boost
    samples = 1 - _uniform(subkey, 0.0, 1.0, (), dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return (d * v) * boost


def _gamma_impl(keys, a, *, log_space):
    """Samples for every element of ``a``; ``keys`` (typed, ``key<...>[*batch]``)
    covers its leading ``batch`` axes and is split to one key per element. Threefry
    keys draw for all elements at once (``vmap``), other implementations one element
    after another (``lax.map``), as in JAX."""
    a_shape = jnp.shape(a)
    keys_ndim = jnp.ndim(keys)
    per_key = math.prod(a_shape[keys_ndim:])
    flat_keys = lax.reshape(keys, (math.prod(a_shape[:keys_ndim]),))
    subkeys = vmap(lambda k: lax.random_split(k, (per_key,)))(flat_keys)
    subkeys = lax.reshape(subkeys, (math.prod(a_shape),))
    alphas = lax.reshape(a, (math.prod(a_shape),))
    one = partial(_gamma_one, log_space=log_space)
    if keys.dtype.impl == lax.THREEFRY:
        samples = vmap(one)(subkeys, alphas)
    else:
        samples = lax.map(lambda args: one(*args), (subkeys, alphas))
    return lax.reshape(samples, a_shape)


def _random_gamma_abstract_eval(keys, a, *, log_space):
    if not dtypes.issubdtype(keys.dtype, dtypes.prng_key) or tuple(keys.shape) != tuple(
        a.shape[: keys.ndim]
    ):
        raise TypeError(
            "random_gamma expects typed keys of shape a.shape[:k], got "
            f"{keys.str_short()} for a of shape {a.shape}"
        )
    return a


random_gamma_p = Primitive("random_gamma")
random_gamma_p.def_abstract_eval(_random_gamma_abstract_eval)
random_gamma_p.def_lowering(lower_fun(_gamma_impl))
def_standard_impl(random_gamma_p)


def _gamma_grad(sample, a, *, log_space):
    """d sample / d a at fixed uniform noise (implicit differentiation of the CDF)."""
    shape = jnp.shape(a)
    samples = lax.reshape(sample, (math.prod(shape),))
    alphas = lax.reshape(a, (math.prod(shape),))
    if log_space:
        # d log(sample) = d sample / sample; exp(log_sample) may underflow to 0.
        samples = lax.exp(samples)
        tiny = lax.full_like(samples, dtypes.finfo(samples.dtype).tiny)
        samples = lax.select(samples == np.array(0, samples.dtype), tiny, samples)

        def grad_one(alpha, x):
            return lax.random_gamma_grad(alpha, x) / x
    else:
        grad_one = lax.random_gamma_grad
    if default_backend() == "cpu":
        # One element at a time on CPU, as JAX does there (its results differ in the
        # last bits from the vectorised evaluation).
        grads = lax.map(lambda args: grad_one(*args), (alphas, samples))
    else:
        grads = grad_one(alphas, samples)
    return lax.reshape(grads, shape)


def _gamma_jvp(primals, tangents, *, log_space):
    keys, a = primals
    _, a_dot = tangents
    ans = random_gamma_p.bind(keys, a, log_space=log_space)
    if type(a_dot) is ad.Zero:
        return ans, a_dot
    return ans, a_dot * _gamma_grad(ans, a, log_space=log_space)


def _gamma_batching(axis_data, vals, dims, *, log_space):
    size = axis_data.size
    keys, a = (batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims, strict=True))
    return random_gamma_p.bind(keys, a, log_space=log_space), 0


random_gamma_p.def_jvp(_gamma_jvp)
batching.batching_rules[random_gamma_p] = _gamma_batching
# Drawing gamma samples consumes the keys (for jax_debug_key_reuse).
key_reuse.key_reuse_signatures[random_gamma_p] = key_reuse.KeyReuseSignature(key_reuse.Sink(0))


@with_out_sharding
def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma(a) samples (scale 1)."""
    key, _ = lax.check_prng_key("gamma", key)
    dtype = float_dtype("gamma", dtype)
    return _gamma(key, a, optional_shape(shape, "gamma"), dtype)


@with_out_sharding
def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """The logarithms of Gamma(a) samples, accurate for small ``a``."""
    key, _ = lax.check_prng_key("loggamma", key)
    dtype = float_dtype("gamma", dtype)
    return _gamma(key, a, optional_shape(shape, "loggamma"), dtype, log_space=True)


@partial(jit, static_argnames=("shape", "dtype", "log_space"))
def _gamma(key, a, shape, dtype, log_space=False):
    if shape is None:
        shape = jnp.shape(a)
    else:
        check_shape("gamma", shape, jnp.shape(a))
    a = lax.convert_element_type(a, dtype)
    if jnp.shape(a) != tuple(shape):
        a = jnp.broadcast_to(a, shape)
    return random_gamma_p.bind(key, a, log_space=log_space)


@with_out_sharding
def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta(a, b) samples."""
    key, _ = lax.check_prng_key("beta", key)
    dtype = float_dtype("beta", dtype)
    check_all_safe_to_cast("beta", dtype, a, b)
    shape = check_broadcast_shapes("beta", shape, a, b)
    return _beta(key, a, b, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _beta(key, a, b, shape, dtype):
    if shape is None:
        shape = lax.broadcast_shapes(jnp.shape(a), jnp.shape(b))
    else:
        check_shape("beta", shape, jnp.shape(a), jnp.shape(b))
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    key_a, key_b = split_keys(key, 2)
    log_gamma_a = _gamma(key_a, a, shape, dtype, log_space=True)
    log_gamma_b = _gamma(key_b, b, shape, dtype, log_space=True)
    # gamma_a / (gamma_a + gamma_b), scaled by the larger to keep precision.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = lax.exp(log_gamma_a - log_max)
    gamma_b_scaled = lax.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


@with_out_sharding
def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet(alpha) samples along the last axis of ``alpha``."""
    key, _ = lax.check_prng_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    return _dirichlet(key, alpha, optional_shape(shape, "dirichlet"), dtype)


def _softmax_last(x):
    """The softmax of ``x`` along its last axis, computed as JAX's samplers compute it."""
    axis = x.ndim - 1
    x_max = lax.max(np.array(-np.inf, x.dtype), lax.reduce_max(x, (axis,)))
    x_max = lax.stop_gradient(lax.expand_dims(x_max, (axis,)))
    unnormalized = lax.exp(x - x_max)
    return unnormalized / lax.expand_dims(lax.reduce_sum(unnormalized, (axis,)), (axis,))


@partial(jit, static_argnums=(2, 3))
def _dirichlet(key, alpha, shape, dtype):
    alpha_shape = jnp.shape(alpha)
    if len(alpha_shape) < 1:
        raise ValueError(
            f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(alpha_shape)}"
        )
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        check_shape("dirichlet", shape, alpha_shape[:-1])
    alpha = lax.convert_element_type(alpha, dtype)
    # Gamma draws in log space: small alphas would underflow to zero.
    log_gamma = _gamma(key, alpha, (*shape, alpha_shape[-1]), dtype, log_space=True)
    return _softmax_last(log_gamma)


@with_out_sharding
def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t samples with ``df`` degrees of freedom."""
    key, shape, dtype = checked_float_sampling("t", key, shape, dtype, df)
    return _t(key, df, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _t(key, df, shape, dtype):
    if shape is None:
        shape = jnp.shape(df)
    else:
        check_shape("t", shape, jnp.shape(df))
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = split_keys(key, 2)
    n = _normal(key_n, shape, dtype)
    half_df = lax.div(df, np.array(2, dtype))
    g = _gamma(key_g, half_df, shape, dtype)
    return n * lax.sqrt(half_df / g)


@with_out_sharding
def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square samples with ``df`` degrees of freedom."""
    key, shape, dtype = checked_float_sampling("chisquare", key, shape, dtype, df)
    return _chisquare(key, df, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _chisquare(key, df, shape, dtype):
    df = lax.convert_element_type(df, dtype)
    two = np.array(2, dtype)
    log_g = _gamma(key, lax.div(df, two), shape, dtype, log_space=True)
    return lax.mul(lax.exp(log_g), two)


@with_out_sharding
def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F-distribution samples with ``dfnum`` and ``dfden`` degrees of freedom."""
    key, shape, dtype = checked_float_sampling("f", key, shape, dtype, dfnum, dfden)
    return _f(key, dfnum, dfden, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _f(key, dfnum, dfden, shape, dtype):
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = split_keys(key, 2)
    chi2_dfn = _chisquare(key_dfn, dfnum, shape, dtype)
    chi2_dfd = _chisquare(key_dfd, dfden, shape, dtype)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


def _power(x, p):
    # jnp's x ** p: an integer exponent stays integer (lax.pow takes it as is).
    if dtypes.issubdtype(p.dtype, np.integer):
        return lax.pow(x, p)
    return lax.pow(x, lax.convert_element_type(p, x.dtype))


def _reciprocal(p):
    # 1 / p as jnp computes it: p as a (weak) float first.
    aval = p.aval
    if not dtypes.issubdtype(aval.dtype, np.inexact):
        p = lax.to_dtype(p, dtypes.default_float_dtype(), weak_type=aval.weak_type)
    return 1.0 / p


@with_out_sharding
def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Generalized normal samples (density proportional to exp(-|x|**p))."""
    shape = canonicalize_shape(shape, "generalized_normal")
    key, _ = lax.check_prng_key("generalized_normal", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype))
    return _generalized_normal(key, p, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _generalized_normal(key, p, shape, dtype):
    k1, k2 = split_keys(key, 2)
    g = _gamma(k1, _reciprocal(p), shape, dtype)
    r = _rademacher(k2, shape, dtype)
    return r * _power(g, _reciprocal(p))


@with_out_sharding
def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Points uniform in the unit ``p``-norm ball of dimension ``d``."""
    shape = canonicalize_shape(shape, "ball")
    key, _ = lax.check_prng_key("ball", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype))
    d = concrete_index(d, "The error occurred in jax.random.ball()")
    return _ball(key, p, d, shape, dtype)


@partial(jit, static_argnums=(2, 3, 4))
def _ball(key, p, d, shape, dtype):
    k1, k2 = split_keys(key, 2)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype)
    norm = _power(lax.reduce_sum(_power(lax.abs(g), p), (len(shape),)) + e, _reciprocal(p))
    return g / lax.expand_dims(norm, (len(shape),))
