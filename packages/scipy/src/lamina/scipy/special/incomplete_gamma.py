"""The regularized incomplete gamma functions ``gammainc`` (lower, ``P(a, x)``) and
``gammaincc`` (upper, ``Q(a, x)``), lax's ``igamma`` and ``igammac``."""

from __future__ import annotations

import lamina.lax as lax
from lamina.numpy import promote_args_inexact

__all__ = ["gammainc", "gammaincc"]


def gammainc(a, x):
    """``P(a, x)``, the integral of ``t**(a-1) exp(-t)`` from 0 to ``x`` over ``Gamma(a)``."""
    a, x = promote_args_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """``Q(a, x) = 1 - P(a, x)``, computed without the cancellation."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a, x)
