"""Counting functions on the gamma function: ``factorial``, ``comb`` (binomial
coefficients, with or without repetition) and the Pochhammer symbol ``poch``, all
float-valued (no exact integer arithmetic, as in JAX)."""

from __future__ import annotations

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import custom_jvp
from lamina.ir import dtypes
from lamina.numpy import promote_args_inexact
from lamina.scipy.special.gamma import digamma, gamma, gammaln

__all__ = ["comb", "factorial", "poch"]


def factorial(n, exact: bool = False):
    """``n! = Gamma(n + 1)``, 0 for negative ``n``; ``exact=True`` is not supported."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = promote_args_inexact("factorial", n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition: bool = False):
    """``N choose k`` (``N + k - 1 choose k`` with ``repetition``); 0 where ``k < 0``,
    ``N < 0`` or (without repetition) ``k > N``."""
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    valid = (k <= N) & (N >= 0) & (k >= 0)
    N = jnp.where(valid, N, 0.0)
    k = jnp.where(valid, k, 0.0)
    value = lax.exp(gammaln(N + 1) - gammaln(k + 1) - gammaln(N + 1 - k))
    return jnp.where(valid, value, 0.0)


@custom_jvp
def poch(z, m):
    """The rising factorial ``(z)_m = Gamma(z + m) / Gamma(z)``, 1 where ``m == 0``."""
    z, m = promote_args_inexact("poch", z, m)
    if dtypes.issubdtype(z.dtype, np.complexfloating):
        raise ValueError("jnp.poch does not support complex-valued inputs.")
    return jnp.where(m == 0.0, jnp.array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


poch.defjvps(
    lambda z_dot, out, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
    lambda m_dot, out, z, m: digamma(z + m) * poch(z, m) * m_dot,
)
