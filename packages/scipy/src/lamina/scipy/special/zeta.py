"""The Hurwitz zeta function ``zeta(x, q) = sum_n (n + q)**-x`` (lax's ``zeta``), whose
derivative is the derivative of the Euler-Maclaurin expansion of Johansson (2015,
formula 5), as JAX differentiates it. The Riemann case ``q=None`` is not supported."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import custom_jvp, jvp
from lamina.ir import dtypes
from lamina.numpy import promote_args_inexact

__all__ = ["zeta"]

_RIEMANN = (
    "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta function."
)


def _bernoulli_numbers(count: int) -> list[Fraction]:
    """``B_0 ... B_{count-1}`` exactly, from ``sum_j C(m+1, j) B_j = 0``."""
    numbers = [Fraction(1)]
    for m in range(1, count):
        numbers.append(-sum(math.comb(m + 1, j) * numbers[j] for j in range(m)) / (m + 1))
    return numbers


# B_{2k} / (2k)! for k = 1..16, the Euler-Maclaurin coefficients.
_EM_COEFFICIENTS = np.array(
    [float(b / math.factorial(2 * k)) for k, b in enumerate(_bernoulli_numbers(33)[2::2], 1)]
)


@custom_jvp
def zeta(x, q=None):
    """The Hurwitz zeta function of real ``x`` and ``q``."""
    if q is None:
        raise NotImplementedError(_RIEMANN)
    x, q = promote_args_inexact("zeta", x, q)
    return lax.zeta(x, q)


def _euler_maclaurin(x, q):
    """``zeta(x, q)`` as ``N`` terms of the sum, the integral of the rest, and ``M``
    correction terms (``N = M = 8`` in float32, 16 otherwise)."""
    s, a = promote_args_inexact("zeta", x, q)
    kind = a.dtype.type
    n = m = kind(8) if a.dtype == np.float32 else kind(16)
    s_, a_ = s[..., None], a[..., None]
    head = jnp.sum((a_ + jnp.arange(int(n), dtype=a.dtype)) ** -s_, -1)
    integral = (a + n) ** (kind(1) - s) / (s - kind(1))
    first = (a + n) ** -s
    # prod_{i <= 2j} (s + i) / (a + N)**(2j + 1) for j < M: every other partial product.
    ratios = (s_ + jnp.arange(2 * int(m), dtype=a.dtype)) / (a_ + n)
    products = jnp.clip(jnp.cumprod(ratios, -1)[..., ::2], max=dtypes.finfo(a.dtype).max)
    corrections = jnp.sum(products * _EM_COEFFICIENTS[: int(m)].astype(a.dtype), -1)
    return head + integral + first * (kind(0.5) + corrections)


@zeta.defjvp
def _zeta_jvp(primals, tangents):
    return jvp(_euler_maclaurin, primals, tangents)
