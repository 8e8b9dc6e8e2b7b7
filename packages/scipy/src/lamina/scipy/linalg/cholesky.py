"""The Cholesky factorization and solves with it: ``cholesky``, ``cho_factor``,
``cho_solve``."""

from functools import partial

import lamina.numpy as jnp
from lamina.interpreters import jit
from lamina.lax import linalg as lax_linalg
from lamina.scipy.linalg.operands import (
    check_square,
    promote_inexact,
    solve_signature,
    triangular_solve,
)


@partial(jit, static_argnames=("lower",))
def _cholesky(a, lower):
    (a,) = promote_inexact(a)
    if not lower:
        a = jnp.conj(jnp.matrix_transpose(a))
    check_square("The input to cholesky must be a square matrix. Got shape {shape}.", a)
    factor = lax_linalg.cholesky(a, symmetrize_input=False)
    return factor if lower else jnp.conj(jnp.matrix_transpose(factor))


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of each Hermitian positive-definite matrix in ``a``: upper
    triangular U with ``a = Uᴴ U``, or lower L with ``a = L Lᴴ`` when ``lower``.

    Only the triangle named by ``lower`` is read. ``overwrite_a`` and ``check_finite``
    are accepted and ignored."""
    del overwrite_a, check_finite
    return _cholesky(jnp.asarray(a), bool(lower))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)``: the Cholesky factor of ``a`` with the flag ``cho_solve`` takes."""
    del overwrite_a, check_finite
    return (cholesky(a, lower=lower), lower)


def cho_solve_with(c, b, lower, signature):
    """``cho_solve`` for promoted ``c`` and ``b`` under a given gufunc signature."""
    tri = partial(triangular_solve, lower=lower)
    first = partial(tri, transpose_a=not lower, conjugate_a=not lower)
    b = jnp.vectorize(first, signature=signature)(c, b)
    second = partial(tri, transpose_a=lower, conjugate_a=lower)
    return jnp.vectorize(second, signature=signature)(c, b)


@partial(jit, static_argnames=("lower",))
def _cho_solve(c, b, lower):
    c, b = promote_inexact(c, b)
    return cho_solve_with(c, b, lower, solve_signature("cho_solve", "c_and_lower", c, b))


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with ``a x = b``, given ``(c, lower) = cho_factor(a)``; ``b`` is a vector or a
    (batch of) matrices of right-hand sides."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    return _cho_solve(jnp.asarray(c), jnp.asarray(b), bool(lower))
