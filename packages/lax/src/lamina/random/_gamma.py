"""Gamma-distributed samples: the ``random_gamma`` primitive (Marsaglia and Tsang's
rejection method with JAX's loop structure, in linear or log space, differentiated
implicitly through ``random_gamma_grad``) and the samplers built on it: ``gamma``,
``loggamma``, ``beta``, ``dirichlet``, ``chisquare``, ``f``, ``t``,
``generalized_normal`` and ``ball``."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from lamina.interpreters import ad, batching, default_backend, lower_fun, vmap
from lamina.ir import dtypes
from lamina.lax import (
    abs as lax_abs,
)
from lamina.lax import (
    bitwise_and,
    convert_element_type,
    div,
    exp,
    full_like,
    ge,
    le,
    log,
    mul,
    pow,
    random_gamma_grad,
    reduce_sum,
    reshape,
    select,
    sqrt,
    while_loop,
)
from lamina.lax import (
    map as lax_map,
)
from lamina.lax import (
    max as lax_max,
)
from lamina.lax._common import standard_primitive
from lamina.random._basic import (
    exponential_raw,
    normal_raw,
    rademacher_raw,
    split_keys,
    uniform_raw,
)
from lamina.random._key_prims import random_split
from lamina.random._ops import broadcast_to, check_shape, dtype_of, shape_of, softmax_last
from lamina.random._ops import sampler_jit as jit

__all__ = [
    "ball_raw",
    "beta_raw",
    "chisquare_raw",
    "dirichlet_raw",
    "f_raw",
    "gamma_raw",
    "generalized_normal_raw",
    "random_gamma_p",
    "t_raw",
]


def _gamma_one(key, alpha, log_space: bool):
    """One Gamma(alpha) sample (scalar ``alpha``), Marsaglia and Tsang's method.

    For alpha < 1 it samples Gamma(alpha + 1) and scales by U**(1/alpha) (in log space
    with ``log_space``, where small alphas would underflow)."""
    dtype = dtype_of(alpha)

    def c(v):
        return np.array(v, dtype)

    zero, one = c(0), c(1)
    boost_mask = ge(alpha, one)
    alpha_orig = alpha
    alpha = select(boost_mask, alpha, alpha + one)
    d = alpha - c(1.0 / 3.0)
    cc = div(c(1.0 / 3.0), sqrt(d))

    def rejected(state):
        _, x, v, u = state
        squeeze_test = ge(u, one - mul(c(0.0331), mul(x, x)))
        log_test = ge(log(u), x * c(0.5) + d * ((one - v) + log(v)))
        return bitwise_and(squeeze_test, log_test)

    def propose(state):
        def next_normal(kxv):
            k, subkey = split_keys(kxv[0], 2)
            x = normal_raw(subkey, (), dtype)
            return k, x, one + x * cc

        k, x_key, u_key = split_keys(state[0], 3)
        _, x, v = while_loop(lambda kxv: le(kxv[2], zero), next_normal, (x_key, zero, c(-1)))
        u = uniform_raw(u_key, 0.0, 1.0, (), dtype)
        return k, x * x, (v * v) * v, u

    key, subkey = split_keys(key, 2)
    _, _, v, _ = while_loop(rejected, propose, (key, zero, one, c(2)))
    if log_space:
        log_samples = -exponential_raw(subkey, (), dtype)
        log_boost = select(
            boost_mask | (log_samples == zero), zero, log_samples * div(one, alpha_orig)
        )
        return (log(d) + log(v)) + log_boost
    samples = 1 - uniform_raw(subkey, 0.0, 1.0, (), dtype)
    boost = select(boost_mask, one, pow(samples, div(one, alpha_orig)))
    return (d * v) * boost


def _gamma_impl(keys, a, *, log_space):
    """Samples for every element of ``a``; ``keys`` (typed, ``key<fry>[*batch]``)
    covers its leading ``batch`` axes and is split to one key per element."""
    a_shape = shape_of(a)
    keys_ndim = len(shape_of(keys))
    per_key = math.prod(a_shape[keys_ndim:])
    flat_keys = reshape(keys, (math.prod(a_shape[:keys_ndim]),))
    subkeys = vmap(lambda k: random_split(k, (per_key,)))(flat_keys)
    subkeys = reshape(subkeys, (math.prod(a_shape),))
    alphas = reshape(a, (math.prod(a_shape),))
    samples = vmap(partial(_gamma_one, log_space=log_space))(subkeys, alphas)
    return reshape(samples, a_shape)


def _random_gamma_abstract_eval(keys, a, *, log_space):
    if not dtypes.issubdtype(keys.dtype, dtypes.prng_key) or tuple(keys.shape) != tuple(
        a.shape[: keys.ndim]
    ):
        raise TypeError(
            "random_gamma expects typed keys of shape a.shape[:k], got "
            f"{keys.str_short()} for a of shape {a.shape}"
        )
    return a


random_gamma_p = standard_primitive(
    "random_gamma", _random_gamma_abstract_eval, lower_fun(_gamma_impl)
)


def _gamma_grad(sample, a, *, log_space):
    """d sample / d a at fixed uniform noise (implicit differentiation of the CDF)."""
    shape = shape_of(a)
    samples = reshape(sample, (math.prod(shape),))
    alphas = reshape(a, (math.prod(shape),))
    if log_space:
        # d log(sample) = d sample / sample; exp(log_sample) may underflow to 0.
        samples = exp(samples)
        tiny = full_like(samples, dtypes.finfo(dtype_of(samples)).tiny)
        samples = select(samples == np.array(0, dtype_of(samples)), tiny, samples)

        def grad_one(alpha, x):
            return random_gamma_grad(alpha, x) / x
    else:
        grad_one = random_gamma_grad
    if default_backend() == "cpu":
        # One element at a time on CPU, as JAX does there (its results differ in the
        # last bits from the vectorised evaluation).
        grads = lax_map(lambda args: grad_one(*args), (alphas, samples))
    else:
        grads = grad_one(alphas, samples)
    return reshape(grads, shape)


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


@partial(jit, static_argnames=("shape", "dtype", "log_space"))
def gamma_raw(key, a, shape, dtype, log_space=False):
    if shape is None:
        shape = shape_of(a)
    else:
        check_shape("gamma", shape, shape_of(a))
    a = convert_element_type(a, dtype)
    if shape_of(a) != tuple(shape):
        a = broadcast_to(a, shape)
    return random_gamma_p.bind(key, a, log_space=log_space)


@partial(jit, static_argnums=(3, 4))
def beta_raw(key, a, b, shape, dtype):
    if shape is None:
        from lamina.lax import broadcast_shapes

        shape = broadcast_shapes(shape_of(a), shape_of(b))
    else:
        check_shape("beta", shape, shape_of(a), shape_of(b))
    a = broadcast_to(convert_element_type(a, dtype), shape)
    b = broadcast_to(convert_element_type(b, dtype), shape)
    key_a, key_b = split_keys(key, 2)
    log_gamma_a = gamma_raw(key_a, a, shape, dtype, log_space=True)
    log_gamma_b = gamma_raw(key_b, b, shape, dtype, log_space=True)
    # gamma_a / (gamma_a + gamma_b), scaled by the larger to keep precision.
    log_max = lax_max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = exp(log_gamma_a - log_max)
    gamma_b_scaled = exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


@partial(jit, static_argnums=(2, 3))
def dirichlet_raw(key, alpha, shape, dtype):
    alpha_shape = shape_of(alpha)
    if len(alpha_shape) < 1:
        raise ValueError(
            f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(alpha_shape)}"
        )
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        check_shape("dirichlet", shape, alpha_shape[:-1])
    alpha = convert_element_type(alpha, dtype)
    # Gamma draws in log space: small alphas would underflow to zero.
    log_gamma = gamma_raw(key, alpha, (*shape, alpha_shape[-1]), dtype, log_space=True)
    return softmax_last(log_gamma)


@partial(jit, static_argnums=(2, 3))
def t_raw(key, df, shape, dtype):
    if shape is None:
        shape = shape_of(df)
    else:
        check_shape("t", shape, shape_of(df))
    df = convert_element_type(df, dtype)
    key_n, key_g = split_keys(key, 2)
    n = normal_raw(key_n, shape, dtype)
    half_df = div(df, np.array(2, dtype))
    g = gamma_raw(key_g, half_df, shape, dtype)
    return n * sqrt(half_df / g)


@partial(jit, static_argnums=(2, 3))
def chisquare_raw(key, df, shape, dtype):
    df = convert_element_type(df, dtype)
    two = np.array(2, dtype)
    log_g = gamma_raw(key, div(df, two), shape, dtype, log_space=True)
    return mul(exp(log_g), two)


@partial(jit, static_argnums=(3, 4))
def f_raw(key, dfnum, dfden, shape, dtype):
    dfden = convert_element_type(dfden, dtype)
    dfnum = convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = split_keys(key, 2)
    chi2_dfn = chisquare_raw(key_dfn, dfnum, shape, dtype)
    chi2_dfd = chisquare_raw(key_dfd, dfden, shape, dtype)
    return div(div(chi2_dfn, dfnum), div(chi2_dfd, dfden))


def _power(x, p):
    # jnp's x ** p: an integer exponent stays integer (lax.pow takes it as is).
    if dtypes.issubdtype(dtype_of(p), np.integer):
        return pow(x, p)
    return pow(x, convert_element_type(p, dtype_of(x)))


def _reciprocal(p):
    # 1 / p as jnp computes it: p as a (weak) float first.
    from lamina.lax.conversion import to_dtype

    aval = p.aval
    if not dtypes.issubdtype(aval.dtype, np.inexact):
        p = to_dtype(p, dtypes.default_float_dtype(), weak_type=aval.weak_type)
    return 1.0 / p


@partial(jit, static_argnums=(2, 3))
def generalized_normal_raw(key, p, shape, dtype):
    k1, k2 = split_keys(key, 2)
    g = gamma_raw(k1, _reciprocal(p), shape, dtype)
    r = rademacher_raw(k2, shape, dtype)
    return r * _power(g, _reciprocal(p))


@partial(jit, static_argnums=(2, 3, 4))
def ball_raw(key, p, d, shape, dtype):
    k1, k2 = split_keys(key, 2)
    g = generalized_normal_raw(k1, p, (*shape, d), dtype)
    e = exponential_raw(k2, shape, dtype)
    norm = _power(reduce_sum(_power(lax_abs(g), p), (len(shape),)) + e, _reciprocal(p))
    from lamina.lax import expand_dims

    return g / expand_dims(norm, (len(shape),))
