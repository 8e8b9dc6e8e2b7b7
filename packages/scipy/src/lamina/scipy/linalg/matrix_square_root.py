"""``sqrtm``: the principal square root of a matrix by the Schur method of Björck and
Hammarling (1983): with ``A = Z·T·Zᴴ`` (T upper triangular), the upper-triangular U with
U² = T is found a column at a time, each from the bottom up, and ``sqrtm(A) = Z·U·Zᴴ``.
"""

from __future__ import annotations

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.scipy.linalg.schur import schur

__all__ = ["sqrtm"]


def _triangular_sqrt(t):
    """The upper-triangular square root of the upper-triangular ``t``."""
    root = jnp.sqrt(jnp.diagonal(t))
    n = root.shape[0]
    positions = jnp.arange(n)

    def column(j, u):
        def entry(step, u):
            i = j - 1 - step  # from the diagonal upwards
            between = (positions > i) & (positions < j)
            s = jnp.sum(jnp.where(between, u[i, :] * u[:, j], 0))
            value = jnp.where(t[i, j] == s, 0, (t[i, j] - s) / (root[i] + root[j]))
            return u.at[i, j].set(value)

        return lax.fori_loop(0, j, entry, u)

    return lax.fori_loop(0, n, column, jnp.diag(root))


@jit
def _sqrtm(a):
    t, z = schur(a, output="complex")
    u = _triangular_sqrt(t)
    highest = lax.Precision.HIGHEST
    return jnp.matmul(jnp.matmul(z, u, precision=highest), jnp.conj(z.T), precision=highest)


def sqrtm(A, blocksize=1):
    """The principal square root of the square matrix ``A``, complex (Schur method;
    ``blocksize`` above 1 is not supported)."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(A)
