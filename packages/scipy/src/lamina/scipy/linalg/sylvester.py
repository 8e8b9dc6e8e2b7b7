"""``solve_sylvester``: X with A·X + X·B = C by the method of Bartels and Stewart. With
the complex Schur forms A = U·R·Uᴴ and Bᴴ = V·S·Vᴴ the equation becomes R·Y + Y·Sᴴ = Uᴴ·C·V
for Y = Uᴴ·X·V; as Sᴴ is lower triangular, Y's columns follow from the last one back,
each by one upper-triangular solve with R + Sᴴ[j, j]·I. ``method='eigen'`` works with
the eigendecompositions of A and B instead (faster, less accurate)."""

from __future__ import annotations

from functools import partial

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.scipy.linalg.schur import schur

__all__ = ["solve_sylvester"]


def _triangular_sylvester(r, lower, f):
    """Y with r·Y + Y·lower = f, for upper-triangular ``r`` and lower-triangular ``lower``."""
    m, n = f.shape
    eye = jnp.eye(m, dtype=f.dtype)

    def column(step, y):
        j = n - 1 - step
        rhs = f[:, j] - y @ lower[:, j]  # the columns after j are done, the rest are zero
        col = lax.linalg.triangular_solve(
            r + lower[j, j] * eye, rhs[:, None], left_side=True, lower=False
        )
        return y.at[:, j].set(col[:, 0])

    return lax.fori_loop(0, n, column, jnp.zeros_like(f))


def _schur_method(a, b, c):
    """X, and the eigenvalues of A and of B."""
    r, u = schur(a, output="complex")
    s, v = schur(b.conj().T, output="complex")
    f = u.conj().T @ c.astype(r.dtype) @ v
    x = u @ _triangular_sylvester(r, s.conj().T, f) @ v.conj().T
    return x, jnp.diagonal(r), jnp.diagonal(s).conj()


def _eigen_method(a, b, c):
    """X from the eigendecompositions of A and B (both must be diagonalizable)."""
    wa, va = jnp.linalg.eig(a)
    wb, vb = jnp.linalg.eig(b)
    y = jnp.linalg.solve(va, c.astype(wa.dtype) @ vb) / (wa[:, None] + wb[None, :])
    return va @ y @ jnp.linalg.inv(vb), wa, wb


def _sylvester_2d(a, b, c, *, method, tol):
    if method == "schur":
        x, wa, wb = _schur_method(a, b, c)
    elif method == "eigen":
        x, wa, wb = _eigen_method(a, b, c)
    else:
        raise ValueError(
            f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".'
        )
    if not jnp.iscomplexobj(c):
        x = x.real
    return jnp.where(jnp.any(jnp.abs(wa[:, None] + wb[None, :]) < tol), np.nan, x)


@partial(jit, static_argnames=["method"])
def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with A·X + X·B = C for each A (m×m), B (n×n) and C (m×n), batch axes
    broadcast; NaNs where an eigenvalue of A plus one of B is within ``tol`` of zero."""
    dtype = dtypes.to_inexact_dtype(jnp.result_type(A, B, C))
    a, b, c = (jnp.asarray(x).astype(dtype) for x in (A, B, C))
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(
            f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\nB: {b.shape}\nC: {c.shape}"
        )
    fun = partial(_sylvester_2d, method=method, tol=tol)
    return jnp.vectorize(fun, signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
