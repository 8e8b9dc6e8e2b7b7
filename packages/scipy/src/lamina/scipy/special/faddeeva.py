"""The Faddeeva function ``wofz`` and the scaled complementary error function ``erfcx``.

``wofz`` uses Weideman's (1994) rational approximation with 32 terms in the upper half
plane, and the reflection ``w(-z) = 2 exp(-z^2) - w(z)`` below it. Real ``erfcx`` is
``exp(x^2) erfc(x)`` until ``exp(x^2)`` would overflow, then its asymptotic series.
"""

import math

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import custom_jvp, jit
from lamina.ir import dtypes
from lamina.scipy.special.polynomials import horner

__all__ = ["erfcx", "wofz"]

_N = 32
_L = math.sqrt(_N / math.sqrt(2.0))


def _weideman_coefficients(n: int, scale: float) -> np.ndarray:
    """The coefficients of Weideman's approximation, highest degree first: the Fourier
    coefficients of ``exp(-t^2) (L^2 + t^2)`` on ``t = L tan(theta / 2)``."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    t = scale * np.tan(k * np.pi / (2 * m))
    f = np.concatenate([[0.0], np.exp(-t * t) * (scale * scale + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return a[1 : n + 1][::-1]


_COEFFS = _weideman_coefficients(_N, _L)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


def _wofz_upper_half(z):
    re = lax.real(z)
    iz = lax.complex(-lax.imag(z), re)
    scale = lax.complex(lax.full_like(re, _L), lax.full_like(re, 0.0))
    denom = scale - iz
    ratio = (scale + iz) / denom
    poly = horner(_COEFFS, ratio)
    return (
        2 * poly / (denom * denom)
        + lax.complex(lax.full_like(re, _INV_SQRT_PI), lax.full_like(re, 0.0)) / denom
    )


@custom_jvp
@jit
def _wofz(z):
    upper = lax.imag(z) >= 0
    w = _wofz_upper_half(lax.select(upper, z, -z))
    return lax.select(upper, w, 2 * lax.exp(-(z * z)) - w)


def _wofz_tangent(g, ans, z):
    re = lax.real(z)
    two_i_over_sqrt_pi = lax.complex(lax.full_like(re, 0.0), lax.full_like(re, 2 * _INV_SQRT_PI))
    return g * (two_i_over_sqrt_pi - 2 * z * ans)


_wofz.defjvps(_wofz_tangent)


def _to_complex(fun_name, x):
    (x,) = jnp.promote_args_inexact(fun_name, x)
    if not dtypes.issubdtype(x.dtype, np.complexfloating):
        x = lax.complex(x, lax.full_like(x, 0.0))
    return x


def wofz(z):
    """The Faddeeva function ``exp(-z^2) erfc(-iz)``, complex-valued."""
    return _wofz(_to_complex("wofz", z))


def _asymptotic_coefficients(nterms: int) -> list[float]:
    """``(-1)^k (2k-1)!! / 2^k`` for k below ``nterms``, highest first."""
    coeffs, c = [], 1.0
    for k in range(nterms):
        coeffs.append(c)
        c *= -(2 * k + 1) / 2
    return coeffs[::-1]


@jit
def _erfcx_real(x):
    nterms = 9 if x.dtype == np.float64 else 5
    threshold = math.sqrt(math.log(float(dtypes.finfo(x.dtype).max)))
    large = x > threshold
    safe = lax.select(large, lax.full_like(x, 1.0), x)
    direct = lax.exp(lax.square(safe)) * lax.erfc(safe)
    series = horner(_asymptotic_coefficients(nterms), 1.0 / lax.square(x)) / (
        x * math.sqrt(math.pi)
    )
    return lax.select(large, series, direct)


@custom_jvp
def _erfcx(x):
    if x.dtype in (np.float32, np.float64):
        return _erfcx_real(x)
    return _erfcx_real(x.astype(np.float32)).astype(x.dtype)


_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - 2 * _INV_SQRT_PI))


def erfcx(x):
    """The scaled complementary error function ``exp(x^2) erfc(x)``; complex ``x``
    goes through ``wofz(ix)``."""
    (x,) = jnp.promote_args_inexact("erfcx", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return _wofz(lax.complex(-lax.imag(x), lax.real(x)))
    return _erfcx(x)
