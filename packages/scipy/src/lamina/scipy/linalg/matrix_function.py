"""``funm``: a matrix function from a scalar one by Parlett's recurrence (Golub and Van
Loan, Algorithm 11.1.1) on the complex Schur form. With ``A = Z·T·Zᴴ``, F = f(T) is upper
triangular with f on its diagonal, and each superdiagonal of F follows from the ones
below it through F·T = T·F; ``funm(A) = Z·F·Zᴴ``.
"""

from __future__ import annotations

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.numpy import linalg as jnp_linalg
from lamina.scipy.linalg.schur import schur

__all__ = ["funm"]


@jit
def _parlett(f, t):
    """F's superdiagonals filled in from its diagonal ``f`` (a diagonal matrix), and the
    smallest |T[j, j] - T[i, i]| met (starting from |T[0, 0]|)."""
    n = t.shape[0]
    rows = jnp.arange(n)[:, None]
    offset = jnp.arange(n)[None, :] - rows
    d = jnp.diagonal(t)

    def superdiagonal(p, state):
        f, smallest = state
        # s[i] = Σ_k T[i, k]·F[k, i+p] - F[i, k]·T[k, i+p]: with superdiagonals ≥ p
        # of F still zero, the sum runs over i ≤ k ≤ i+p as the recurrence needs
        f_cols = jnp.roll(f, -p, axis=1)  # f_cols[k, i] = F[k, i+p]
        t_cols = jnp.roll(t, -p, axis=1)
        s = jnp.sum(t * f_cols.T - f * t_cols.T, axis=1)
        den = jnp.roll(d, -p) - d
        value = jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s)
        inside = rows[:, 0] < n - p
        smallest = jnp.minimum(smallest, jnp.min(jnp.where(inside, jnp.abs(den), jnp.inf)))
        return jnp.where(offset == p, value[:, None], f), smallest

    return lax.fori_loop(1, n, superdiagonal, (f, jnp.abs(t[0, 0])))


def funm(A, func, disp=True):
    """``func`` (a function of scalars, applied to the eigenvalues) as a function of the
    square matrix ``A``; complex. With ``disp=False`` also an estimate of the relative
    error."""
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    if not jnp.issubdtype(a.dtype, jnp.inexact):  # the real Schur form takes no integers
        raise TypeError(
            f"schur does not accept dtype {a.dtype} at position 0. Accepted dtypes at "
            "position 0 are subtypes of floating, complexfloating."
        )
    t, z = schur(a, output="complex")
    f = jnp.diag(func(jnp.diagonal(t))).astype(t.dtype)
    f, smallest = _parlett(f, t)
    f = z @ f @ z.conj().T
    if disp:
        return f
    tol = np.finfo(np.float32 if f.dtype == np.complex64 else np.float64).eps
    smallest = jnp.where(smallest == 0, tol, smallest)
    bound = jnp.minimum(1, jnp.maximum(tol, (tol / smallest) * jnp_linalg.norm(jnp.triu(t, 1), 1)))
    return f, jnp.where(jnp.any(jnp.isinf(f)), np.inf, bound)
