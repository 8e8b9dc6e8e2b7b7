"""``bernoulli(n)``: the Bernoulli numbers ``B_0 ... B_n`` (``B_1 = -1/2``), from the
series ``B_2k = (-1)**(k+1) 2 (2k)! / (2 pi)**(2k) zeta(2k)`` (Chowla and Hartung)."""

from __future__ import annotations

import operator

import numpy as np

import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, Tracer

__all__ = ["bernoulli"]


def bernoulli(n: int):
    """The first ``n + 1`` Bernoulli numbers (``n`` a concrete non-negative integer)."""
    if isinstance(n, Tracer):
        raise ConcretizationTypeError(n, "Argument n of bernoulli")
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    first = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return first[: n + 1]
    numbers = jnp.zeros(n + 1).at[:3].set(first)
    m = jnp.arange(4, n + 1, 2, dtype=numbers.dtype)
    # 2 (2k)! / (2 pi)**(2k) with alternating sign, built up factor by factor.
    scale = (1.0 / np.pi**2) * jnp.cumprod(-(m - 1) * m / 4 / np.pi**2)
    # zeta(m) - 1, summed to k = 49 (2**-50 is below float64 resolution).
    k = jnp.arange(2, 50, dtype=numbers.dtype)
    zeta_tail = jnp.sum(k[:, None] ** -m[None, :], axis=0)
    return numbers.at[4::2].set(scale * (1 + zeta_tail))
