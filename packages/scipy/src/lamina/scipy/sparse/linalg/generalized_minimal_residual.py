"""`gmres`: restarted GMRES. Each restart builds an orthonormal Krylov basis by Arnoldi
steps and takes the least-squares solution in it, either at the end ('batched') or by
Givens rotations as the basis grows ('incremental', which can stop early)."""

from __future__ import annotations

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import device_put
from lamina.ir import dtypes
from lamina.ir.tree_util import tree_leaves, tree_map, tree_reduce, tree_structure
from lamina.lax import linalg as lax_linalg
from lamina.scipy.sparse.linalg import tree_vectors as tv


def _safe_normalize(x, thresh=None):
    """`(x / |x|, |x|)`, or zeros for both when `|x| <= thresh` (default: epsilon)."""
    size = tv.norm(x)
    dtype = tv.result_dtype(x)
    if thresh is None:
        thresh = dtypes.finfo(size.dtype).eps
    thresh = jnp.asarray(thresh).astype(dtype).real
    keep = size > thresh
    divisor = size.astype(dtype)
    unit = tree_map(lambda y: jnp.where(keep, y / divisor, 0.0), x)
    return unit, jnp.where(keep, size, 0.0)


def _overlaps(basis, v):
    """`basis^H v`: the overlap of `v` with each column (last axis) of the basis."""
    parts = tree_map(
        lambda X, y: tv.dot(X.reshape(-1, X.shape[-1]).T.conj(), y.reshape(-1)), basis, v
    )
    return tree_reduce(lambda a, b: a + b, parts)


def _arnoldi_step(k, A, M, V, H):
    """Put the next basis vector, `M A V[:, k]` orthonormalized against the basis, in
    `V[:, k + 1]` and its overlaps in row k of `H`; also says whether it vanished."""
    dtype = tv.result_dtype(V)
    eps = dtypes.finfo(dtype).eps
    v = M(A(tree_map(lambda X: X[..., k], V)))
    _, norm_before = _safe_normalize(v)
    # One classical Gram-Schmidt pass.
    h = _overlaps(V, v)
    v = tv.sub(v, tree_map(lambda X: tv.dot(X, h), V))
    unit, norm_after = _safe_normalize(v, thresh=eps * norm_before)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit)
    H = H.at[k, :].set(h.at[k + 1].set(norm_after.astype(dtype)))
    return V, H, norm_after == 0.0


def _rotate(v, i, cs, sn):
    """Apply the Givens rotation (cs, sn) to entries i and i + 1 of `v`."""
    x, y = v[i], v[i + 1]
    v = v.at[i].set(cs.conj() * x - sn.conj() * y)
    return v.at[i + 1].set(sn * x + cs * y)


def _givens(a, b):
    """The rotation (cs, sn) that zeroes b against a."""
    b_zero = abs(b) == 0
    a_smaller = abs(a) < abs(b)
    t = -jnp.where(a_smaller, a, b) / jnp.where(a_smaller, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_smaller, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_smaller, r, r * t))
    return cs, sn


def _basis(unit_residual, restart):
    return tree_map(
        lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual
    )


def _finish(A, M, b, x0, V, y):
    x = tv.add(x0, tree_map(lambda X: tv.dot(X[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(tv.sub(b, A(x))))
    return x, unit_residual, residual_norm


def _restart_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart, triangularizing the Hessenberg matrix by Givens rotations as it
    grows; stops when the residual estimate falls to `ptol`."""
    V = _basis(unit_residual, restart)
    dtype = tv.result_dtype(b)
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def keep_going(carry):
        k, err, *_ = carry
        return (k < restart) & (err > ptol)

    def step(carry):
        k, _, V, R, beta, givens = carry
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, *givens[i, :]), H[k, :])
        rotation = _givens(row[k], row[k + 1])
        givens = givens.at[k, :].set(jnp.stack(rotation))
        R = R.at[k, :].set(_rotate(row, k, *rotation))
        beta = _rotate(beta, k, *rotation)
        return k + 1, abs(beta[k + 1]), V, R, beta, givens

    _, _, V, R, beta, _ = lax.while_loop(keep_going, step, (0, residual_norm, V, R, beta, givens))
    y = lax_linalg.triangular_solve(R[:, :-1].T, beta[:-1, None], left_side=True, lower=False)[:, 0]
    return _finish(A, M, b, x0, V, y)


def _restart_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart building the whole basis (unless it breaks down), then solving the
    least-squares problem by the normal equations."""
    del ptol
    V = _basis(unit_residual, restart)
    dtype = tv.result_dtype(b)
    H = jnp.eye(restart, restart + 1, dtype=dtype)

    def keep_going(carry):
        _, _, breakdown, k = carry
        return (k < restart) & ~breakdown

    def step(carry):
        V, H, _, k = carry
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(keep_going, step, (V, H, False, 0))
    beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))
    # Least squares of H^T y = beta through the Cholesky factor of H^* H^T.
    a = H.T
    factor = lax_linalg.cholesky(tv.dot(a.T.conj(), a))
    rhs = tv.dot(a.T.conj(), beta)[:, None]
    z = lax_linalg.triangular_solve(factor, rhs, left_side=True, lower=True)
    y = lax_linalg.triangular_solve(
        factor, z, left_side=True, lower=True, transpose_a=True, conjugate_a=True
    )[:, 0]
    return _finish(A, M, b, x0, V, y)


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, restart_fn):
    """Restart from the last solution until the preconditioned residual is at most
    `atol` or `maxiter` restarts are done."""
    unit_residual, residual_norm = _safe_normalize(M(tv.sub(b, A(x0))))

    def keep_going(state):
        _, k, _, residual_norm = state
        return (k < maxiter) & (residual_norm > atol)

    def step(state):
        x, k, unit_residual, residual_norm = state
        x, unit_residual, residual_norm = restart_fn(
            A, b, x, unit_residual, residual_norm, ptol, restart, M
        )
        return x, k + 1, unit_residual, residual_norm

    x, *_ = lax.while_loop(keep_going, step, (x0, 0, unit_residual, residual_norm))
    return x


def gmres(
    A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None, solve_method="batched"
):
    """Solve `A x = b` by restarted GMRES, for any nonsingular `A` (a square matrix, a
    function `x -> A x`, or an object with `@`), `b` an array or pytree. Each restart
    builds a Krylov basis of `restart` vectors; at most `maxiter` restarts, stopping at
    `|r| <= max(tol |b|, atol)`. `M` approximates `A^-1`. `solve_method` is 'batched'
    or 'incremental'. Returns `(x, info)`, info -1 when x is NaN, else 0."""
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    A = tv.as_linear_map(A)
    M = tv.as_linear_map(tv.identity if M is None else M)
    b, x0 = device_put((b, x0))
    size = sum(leaf.size for leaf in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # SciPy's default
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(
            "x0 and b must have matching tree structure: "
            f"{tree_structure(x0)} vs {tree_structure(b)}"
        )
    b_norm = tv.norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    ptol = tv.norm(M(b)) * jnp.minimum(1.0, atol / b_norm)
    if solve_method == "incremental":
        restart_fn = _restart_incremental
    elif solve_method == "batched":
        restart_fn = _restart_batched
    else:
        raise ValueError(
            f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'"
        )

    def solve(A, b):
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, restart_fn)

    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    info = jnp.where(jnp.isnan(tv.norm(x)), -1, 0)
    return x, info
