"""The LU factorization with partial pivoting and solves with it: ``lu``,
``lu_factor``, ``lu_solve``."""

from functools import partial

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import jit
from lamina.lax import linalg as lax_linalg
from lamina.scipy.linalg.operands import promote_inexact, solve_signature


@partial(jit, static_argnames=("permute_l",))
def _lu(a, permute_l):
    (a,) = promote_inexact(a)
    factors, _, permutation = lax_linalg.lu(a)
    m, n = a.shape
    k = min(m, n)
    p = jnp.real(jnp.asarray(permutation[None, :] == jnp.arange(m)[:, None], a.dtype))
    l = jnp.tril(factors, -1)[:, :k] + jnp.eye(m, k, dtype=a.dtype)
    u = jnp.triu(factors)[:k, :]
    if permute_l:
        return jnp.matmul(p, l, precision=lax.Precision.HIGHEST), u
    return p, l, u


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """``(p, l, u)`` with ``a = p @ l @ u`` for one m×n matrix: p a permutation
    matrix (real), l m×k unit lower triangular, u k×n upper triangular, k = min(m, n).
    With ``permute_l`` returns ``(p @ l, u)``."""
    del overwrite_a, check_finite
    return _lu(jnp.asarray(a), bool(permute_l))


@jit
def _lu_factor(a):
    (a,) = promote_inexact(a)
    factors, pivots, _ = lax_linalg.lu(a)
    return factors, pivots


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)``: L (unit diagonal, not stored) and U packed in one matrix, and
    LAPACK's pivots (row i was swapped with row ``piv[i]``)."""
    del overwrite_a, check_finite
    return _lu_factor(jnp.asarray(a))


def _solve_one(factors, permutation, b, trans):
    """x with op(A) x = b for one matrix, where ``A[permutation] = L U``."""
    tri = partial(lax_linalg.triangular_solve, factors, left_side=True)
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if trans == 0:
        x = tri(b[permutation], lower=True, unit_diagonal=True)
        x = tri(x, lower=False)
    else:
        conj = trans == 2
        x = tri(b, lower=False, transpose_a=True, conjugate_a=conj)
        x = tri(x, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=conj)
        x = x[jnp.argsort(permutation)]
    return x[:, 0] if vector else x


@partial(jit, static_argnames=("trans",))
def _lu_solve(factors, pivots, b, trans):
    factors, b = promote_inexact(factors, b)
    permutation = lax_linalg.lu_pivots_to_permutation(pivots, factors.shape[-2])
    signature = solve_signature("lu_solve", "lu_and_piv", factors, b, "(n)")
    solve = jnp.vectorize(partial(_solve_one, trans=trans), signature=signature)
    return solve(factors, permutation, b)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with ``a x = b`` (``trans`` 0), ``aᵀ x = b`` (1) or ``aᴴ x = b`` (2), given
    ``(lu, piv) = lu_factor(a)``."""
    del overwrite_b, check_finite
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    factors, pivots = lu_and_piv
    return _lu_solve(jnp.asarray(factors), jnp.asarray(pivots), jnp.asarray(b), int(trans))
