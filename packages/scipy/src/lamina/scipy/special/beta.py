"""The beta function family: ``betaln``, ``beta`` and the regularized incomplete beta
function ``betainc`` (lax's ``betainc``)."""

from __future__ import annotations

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.ir import dtypes
from lamina.numpy import promote_args_inexact
from lamina.scipy.special.gamma import gammasgn

__all__ = ["beta", "betainc", "betaln"]

# The asymptotic series of del(x) = log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2)
# as cdflib's ALGDIV uses it.
_DEL_SERIES = (
    0.833333333333333e-01,
    -0.277777777760991e-02,
    0.793650666825390e-03,
    -0.595202931351870e-03,
    0.837308034031215e-03,
    -0.165322962780713e-02,
)


def _log_gamma_ratio(a, b):
    """``log Gamma(b) - log Gamma(a + b)`` for ``8 <= b`` and ``a <= b`` (cdflib's
    ALGDIV): Stirling's terms written so nothing cancels, plus ``del(b) - del(a + b)``."""
    h = a / b
    c = h / (1 + h)
    c2 = c * c
    # s[k] = 1 + c + ... + c**(2k), the partial sums the series of del(b) - del(a+b) needs.
    s = [1.0]
    for _ in range(5):
        s.append(1.0 + (c + c2 * s[-1]))
    t = (1.0 / b) ** 2
    w = _DEL_SERIES[5] * s[5]
    for coefficient, partial in zip(_DEL_SERIES[4::-1], s[4::-1], strict=True):
        w = w * t + coefficient * partial
    w = w * (c / b)
    u = (b + (a - 0.5)) * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
    """``log|B(a, b)|``, accurate also when ``b`` is large (cdflib's method)."""
    a, b = promote_args_inexact("betaln", a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    direct = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _log_gamma_ratio(a, b)
    return jnp.where(b < 8, direct, large_b)


def beta(a, b):
    """``B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)`` for real ``a``, ``b``."""
    a, b = promote_args_inexact("beta", a, b)
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError("beta does not support complex-valued inputs.")
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)``."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("betainc does not support complex-valued inputs.")
    return lax.betainc(a, b, x)
