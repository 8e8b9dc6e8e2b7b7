"""Polynomials as 1-D coefficient arrays, highest power first: arithmetic
(``polyadd``, ``polyval``, ...) and what needs linear algebra (``roots``,
``polyfit``)."""

from lamina.numpy.polynomial.arithmetic import (
    poly,
    polyadd,
    polyder,
    polydiv,
    polyint,
    polymul,
    polysub,
    polyval,
)
from lamina.numpy.polynomial.fitting import (
    polyfit,
    roots,
)

__all__ = [
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "roots",
]
