"""The modified Bessel functions of the first kind of orders 0 and 1, ``i0``, ``i1``,
and their exponentially scaled forms ``i0e = exp(-|x|) i0``, ``i1e = exp(-|x|) i1``
(lax's ``bessel_i0e`` and ``bessel_i1e``)."""

from __future__ import annotations

import lamina.lax as lax
from lamina.numpy import promote_args_inexact

__all__ = ["i0", "i0e", "i1", "i1e"]


def i0e(x):
    """``exp(-|x|) I_0(x)``."""
    (x,) = promote_args_inexact("i0e", x)
    return lax.bessel_i0e(x)


def i0(x):
    """``I_0(x)``, the modified Bessel function of order 0."""
    (x,) = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x):
    """``exp(-|x|) I_1(x)``."""
    (x,) = promote_args_inexact("i1e", x)
    return lax.bessel_i1e(x)


def i1(x):
    """``I_1(x)``, the modified Bessel function of order 1."""
    (x,) = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))
