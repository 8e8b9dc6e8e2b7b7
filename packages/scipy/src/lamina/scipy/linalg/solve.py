"""Linear solves, the inverse and the determinant: ``solve``, ``solve_triangular``,
``inv``, ``det``."""

from functools import partial

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import jit, stop_gradient, vmap
from lamina.scipy.linalg.cholesky import cho_solve_with, cholesky
from lamina.scipy.linalg.operands import promote_inexact, solve_signature, triangular_solve

_ASSUME_A = ["gen", "sym", "her", "pos"]
_solve_general = jit(jnp.linalg.solve)
_inv = jit(jnp.linalg.inv)
_det = jit(jnp.linalg.det)


def _matvec(a, x):
    """``a @ x`` for matrices ``a`` (..., n, m) and vectors ``x`` (..., m), batches
    broadcast."""
    batch = jnp.broadcast_shapes(a.shape[:-2], x.shape[:-1])
    a = jnp.broadcast_to(a, (*batch, *a.shape[-2:]))
    x = jnp.broadcast_to(x, (*batch, x.shape[-1]))
    nb = list(range(len(batch)))
    dims = (([a.ndim - 1], [x.ndim - 1]), (nb, nb))
    return lax.dot_general(a, x, dims, precision=lax.Precision.HIGHEST)


@partial(jit, static_argnames=("lower",))
def _solve_positive(a, b, lower):
    a, b = promote_inexact(a, b)
    if not (
        a.ndim >= 2
        and b.ndim in (a.ndim, a.ndim - 1)
        and a.shape[-1] == a.shape[-2] == b.shape[a.ndim - 2]
    ):
        raise ValueError(
            "The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or "
            f"b=[..., m]; got a={a.shape} and b={b.shape}"
        )
    # The factors are computed once, outside differentiation; custom_linear_solve
    # reuses them for the derivatives.
    factor = cholesky(stop_gradient(a), lower=lower)
    vectors = "(n,n),(n)->(n)"
    solve_vector = partial(
        lax.custom_linear_solve,
        partial(_matvec, a),
        solve=lambda _, x: cho_solve_with(factor, x, lower, vectors),
        symmetric=True,
    )
    if a.ndim == b.ndim + 1:
        return solve_vector(b)
    return vmap(solve_vector, b.ndim - 1, max(a.ndim, b.ndim) - 1)(b)


def solve(
    a,
    b,
    lower=False,
    overwrite_a=False,
    overwrite_b=False,
    debug=False,
    check_finite=True,
    assume_a="gen",
):
    """x with ``a x = b``. ``assume_a="pos"`` solves through the Cholesky factorization
    of a (only the triangle named by ``lower`` is read); "gen", "sym" and "her" through
    LU. ``b`` is a vector or a (batch of) matrices."""
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a not in _ASSUME_A:
        raise ValueError(f"Expected assume_a to be one of {_ASSUME_A}; got {assume_a!r}")
    if assume_a != "pos":
        return _solve_general(a, b)
    return _solve_positive(jnp.asarray(a), jnp.asarray(b), bool(lower))


def _transpose_flags(trans):
    if trans == 0 or trans == "N":
        return False, False
    if trans == 1 or trans == "T":
        return True, False
    if trans == 2 or trans == "C":
        return True, True
    raise ValueError(f"Invalid 'trans' value {trans}")


def solve_triangular(
    a,
    b,
    trans=0,
    lower=False,
    unit_diagonal=False,
    overwrite_b=False,
    debug=None,
    check_finite=True,
):
    """x with ``op(a) x = b`` for triangular ``a`` (only the triangle named by
    ``lower`` is read); op is the identity (``trans`` 0 or "N"), the transpose (1, "T")
    or the conjugate transpose (2, "C")."""
    del overwrite_b, debug, check_finite
    transpose_a, conjugate_a = _transpose_flags(trans)
    return _solve_triangular(
        jnp.asarray(a), jnp.asarray(b), bool(lower), bool(unit_diagonal), transpose_a, conjugate_a
    )


@partial(jit, static_argnums=(2, 3, 4, 5))
def _solve_triangular(a, b, lower, unit_diagonal, transpose_a, conjugate_a):
    a, b = promote_inexact(a, b)
    tri = partial(
        triangular_solve,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    signature = solve_signature("solve_triangular", "a", a, b)
    return jnp.vectorize(tri, signature=signature)(a, b)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of each square matrix in ``a``."""
    del overwrite_a, check_finite
    return _inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of each square matrix in ``a``."""
    del overwrite_a, check_finite
    return _det(a)
