"""The error function ``erf``, its complement ``erfc`` and its inverse ``erfinv``, for
real arguments (lax's ``erf``, ``erfc`` and ``erf_inv``)."""

from __future__ import annotations

import lamina.lax as lax
from lamina.numpy import promote_args_inexact

__all__ = ["erf", "erfc", "erfinv"]


def erf(x):
    """``2 / sqrt(pi)`` times the integral of ``exp(-t**2)`` from 0 to ``x``."""
    (x,) = promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x):
    """``1 - erf(x)``, accurate where ``erf(x)`` is near 1."""
    (x,) = promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x):
    """The ``y`` with ``erf(y) == x``, for ``-1 <= x <= 1``."""
    (x,) = promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)
