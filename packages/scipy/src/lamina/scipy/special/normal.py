"""The standard normal distribution function ``ndtr``, its inverse ``ndtri`` (Cephes'
rational approximations) and its logarithm ``log_ndtr`` (an asymptotic series in the far
left tail, ``-ndtr(-x)`` in the right one, with a custom derivative). They take float32
and float64 only, as JAX's do."""

from __future__ import annotations

import functools

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import custom_jvp

__all__ = ["log_ndtr", "ndtr", "ndtri"]


def _check_float(x, message: str) -> None:
    if lax.dtype(x) not in (np.float32, np.float64):
        raise TypeError(message.format(np.dtype(lax.dtype(x))))


_UNSUPPORTED = "x.dtype={} is not supported, see docstring for supported types."


def ndtr(x):
    """``P(X <= x)`` for a standard normal ``X``: ``erfc(-x / sqrt 2) / 2``."""
    x = jnp.asarray(x)
    _check_float(x, _UNSUPPORTED)
    return _ndtr(x)


def _ndtr(x):
    """``ndtr`` by ``1 + erf`` near 0 and ``erfc`` of the absolute value in the tails."""
    kind = lax.dtype(x).type
    half_sqrt_2 = kind(0.5 * np.sqrt(2.0))
    w = x * half_sqrt_2
    z = lax.abs(w)
    tail = lax.select(lax.gt(w, kind(0.0)), kind(2.0) - lax.erfc(z), lax.erfc(z))
    return kind(0.5) * lax.select(lax.lt(z, half_sqrt_2), kind(1.0) + lax.erf(w), tail)


def ndtri(p):
    """The ``x`` with ``ndtr(x) == p``: ``-inf`` at 0, ``inf`` at 1, nan outside
    ``[0, 1]``."""
    _check_float(p, _UNSUPPORTED)
    return _ndtri(p)


# Cephes' ndtri: P0/Q0 for |p - 1/2| small, P1/Q1 for exp(-32) < p <= exp(-2) (2 <= z < 8,
# z = sqrt(-2 log p)), P2/Q2 below exp(-32) (z >= 8). Leading coefficient first.
_P0 = (
    -5.99633501014107895267e1,
    9.80010754185999661536e1,
    -5.66762857469070293439e1,
    1.39312609387279679503e1,
    -1.23916583867381258016e0,
)
_Q0 = (
    1.0,
    1.95448858338141759834e0,
    4.67627912898881538453e0,
    8.63602421390890590575e1,
    -2.25462687854119370527e2,
    2.00260212380060660359e2,
    -8.20372256168333339912e1,
    1.59056225126211695515e1,
    -1.18331621121330003142e0,
)
_P1 = (
    4.05544892305962419923e0,
    3.15251094599893866154e1,
    5.71628192246421288162e1,
    4.40805073893200834700e1,
    1.46849561928858024014e1,
    2.18663306850790267539e0,
    -1.40256079171354495875e-1,
    -3.50424626827848203418e-2,
    -8.57456785154685413611e-4,
)
_Q1 = (
    1.0,
    1.57799883256466749731e1,
    4.53907635128879210584e1,
    4.13172038254672030440e1,
    1.50425385692907503408e1,
    2.50464946208309415979e0,
    -1.42182922854787788574e-1,
    -3.80806407691578277194e-2,
    -9.33259480895457427372e-4,
)
_P2 = (
    3.23774891776946035970e0,
    6.91522889068984211695e0,
    3.93881025292474443415e0,
    1.33303460815807542389e0,
    2.01485389549179081538e-1,
    1.23716634817820021358e-2,
    3.01581553508235416007e-4,
    2.65806974686737550832e-6,
    6.23974539184983293730e-9,
)
_Q2 = (
    1.0,
    6.02427039364742014255e0,
    3.67983563856160859403e0,
    1.37702099489081330271e0,
    2.16236993594496635890e-1,
    1.34204006088543189037e-2,
    3.28014464682127739104e-4,
    2.89247864745380683936e-6,
    6.79019408009981274425e-9,
)


def _ratio(p, q, x, kind):
    return jnp.polyval(np.array(p, kind), x) / jnp.polyval(np.array(q, kind), x)


def _ndtri(p):
    kind = lax.dtype(p).type
    p = jnp.asarray(p)
    # Work with the smaller of p and 1 - p above 1 - exp(-2); the sign is restored below.
    upper = p > kind(-np.expm1(-2.0))
    small = jnp.where(upper, kind(1.0) - p, p)
    # A 0 would make nan in branches not taken (and in their derivatives).
    small = jnp.where(small == kind(0.0), jnp.full(p.shape, kind(0.5)), small)
    w = small - kind(0.5)
    ww = lax.square(w)
    central = (w + w * ww * _ratio(_P0, _Q0, ww, kind)) * -kind(np.sqrt(2.0 * np.pi))
    z = lax.sqrt(kind(-2.0) * lax.log(small))
    start = z - lax.log(z) / z
    near_tail = start - _ratio(_P1, _Q1, 1 / z, kind) / z
    far_tail = start - _ratio(_P2, _Q2, 1 / z, kind) / z
    tail = jnp.where(z >= kind(8.0), far_tail, near_tail)
    x = jnp.where(small > kind(np.exp(-2.0)), central, tail)
    x = jnp.where(p > kind(1.0 - np.exp(-2.0)), x, -x)
    inf = jnp.full(p.shape, kind(np.inf))
    return jnp.where(p == kind(0.0), -inf, jnp.where(p == kind(1.0), inf, x))


# Where log_ndtr switches method: below LOWER the asymptotic series, above UPPER
# -ndtr(-x) (log(1 - e) ~ -e), between them log(ndtr(x)).
_SEGMENTS = {
    np.dtype(np.float32): (np.array(-10, np.float32), np.array(5, np.float32)),
    np.dtype(np.float64): (np.array(-20, np.float64), np.array(8, np.float64)),
}


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def log_ndtr(x, series_order: int = 3):
    """``log(ndtr(x))``, accurate far into both tails; ``series_order`` (0 to 30) terms of
    the asymptotic series serve below -20 (float64) or -10 (float32)."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = jnp.asarray(x)
    dtype = np.dtype(lax.dtype(x))
    if dtype not in _SEGMENTS:
        raise TypeError(f"x.dtype={dtype} is not supported.")
    lower, upper = _SEGMENTS[dtype]
    right = lax.gt(x, upper)
    # One ndtr serves both ends; clamping keeps the unused branches finite (x = 0 would
    # otherwise put log(0) into the series and nan into derivatives).
    values = _ndtr(jnp.where(right, -x, lax.max(x, lower)))
    left = _log_ndtr_series(lax.min(x, lower), series_order)
    return jnp.where(right, -values, jnp.where(lax.gt(x, lower), lax.log(values), left))


@log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    out = log_ndtr(x, series_order=series_order)
    return out, lax.mul(t, lax.exp(lax.sub(_normal_logpdf(x), out)))


def _normal_logpdf(x):
    kind = lax.dtype(x).type
    return lax.sub(lax.mul(kind(-0.5), lax.square(x)), kind(np.log(np.sqrt(2 * np.pi))))


def _log_ndtr_series(x, series_order: int):
    """``log ndtr(x)`` for ``x << -1``: ``log(exp(-x**2/2) / (-x sqrt(2 pi)))`` plus the
    log of ``1 + sum_n (-1)**n (2n-1)!! / x**(2n)`` over ``n <= series_order``."""
    kind = lax.dtype(x).type
    x2 = lax.square(x)
    log_scale = -kind(0.5) * x2 - lax.log(-x) - kind(0.5 * np.log(2.0 * np.pi))
    sums = [jnp.zeros_like(x), jnp.zeros_like(x)]  # the even and the odd terms
    power = x2
    for n in range(1, series_order + 1):
        sums[n % 2] = sums[n % 2] + kind(np.prod(np.arange(2 * n - 1, 1, -2))) / power
        power = power * x2
    return log_scale + lax.log(kind(1.0) + sums[0] - sums[1])
