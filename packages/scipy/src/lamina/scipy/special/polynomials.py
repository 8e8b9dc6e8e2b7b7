"""Horner evaluation of fixed-coefficient polynomials and rational functions, the
building block of the Cephes-style approximations."""

import numpy as np

from lamina import lax

__all__ = ["horner", "rational"]


def horner(coeffs, x):
    """The polynomial with ``coeffs`` (highest degree first) at ``x``, in ``x``'s dtype."""
    coeffs = np.asarray(coeffs, dtype=np.float64)
    acc = lax.full_like(x, coeffs[0])
    for c in coeffs[1:]:
        acc = acc * x + np.asarray(c, dtype=x.dtype)
    return acc


def rational(num, den, x):
    """``horner(num, x) / horner(den, x)``."""
    return horner(num, x) / horner(den, x)
