"""Spence's function (the real dilogarithm) ``spence``, after Cephes' spence.c: a
rational approximation in w near x = 1, with the reflection and inversion formulas
carrying the rest of x > 0 there."""

import math

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.scipy.special.polynomials import rational

__all__ = ["spence"]

_NUM = [
    4.65128586073990045278e-5,
    7.31589045238094711071e-3,
    1.33847639578309018650e-1,
    8.79691311754530315341e-1,
    2.71149851196553469920e0,
    4.25697156008121755724e0,
    3.29771340985225106936e0,
    1.00000000000000000126e0,
]
_DEN = [
    6.90990488912553276999e-4,
    2.54043763932544379113e-2,
    2.82974860602568089943e-1,
    1.41172597751831069617e0,
    3.63800533345137075418e0,
    5.03278880143316990390e0,
    3.54771340985225096217e0,
    9.99999999999999998740e-1,
]
_PI2_6 = math.pi**2 / 6


@jit
def _spence_values(x):
    x0 = x
    inverted = x > 2.0
    x = lax.select(inverted, 1.0 / x, x)
    above = x > 1.5
    below = x < 0.5
    w = lax.select(above, 1.0 / x - 1.0, lax.select(below, -x, x - 1.0))
    y = -w * rational(_NUM, _DEN, w)
    y = lax.select(below, _PI2_6 - lax.log(x) * lax.log(1.0 - x) - y, y)
    y = lax.select(inverted | above, -0.5 * lax.square(lax.log(x)) - y, y)
    y = lax.select(x0 == 0.0, lax.full_like(x, _PI2_6), y)
    y = lax.select(x0 == 1.0, lax.full_like(x, 0.0), y)
    return lax.select(x0 < 0.0, lax.full_like(x, np.nan), y)


def spence(x):
    """Spence's function: the integral of ``log(t) / (1 - t)`` from 1 to x, for real
    x >= 0 (nan for x < 0). Takes float32 or float64 arrays only."""
    x = jnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported types.")
    return _spence_values(x)
