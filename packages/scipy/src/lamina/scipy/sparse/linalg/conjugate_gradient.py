"""`cg`: conjugate gradients for Hermitian positive definite `A`."""

from __future__ import annotations

from lamina import lax
from lamina import numpy as jnp
from lamina.scipy.sparse.linalg import tree_vectors as tv
from lamina.scipy.sparse.linalg.iterative_solve import solve_iteratively


def _cg_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=tv.identity):
    # Stop once |r|^2 <= max(tol^2 |b|^2, atol^2).
    bound = jnp.maximum(jnp.square(tol) * tv.vdot_real_tree(b, b), jnp.square(atol))
    r0 = tv.sub(b, A(x0))
    z0 = M(r0)
    dtype = tv.result_dtype(z0)
    gamma0 = tv.vdot_real_tree(r0, z0).astype(dtype)

    def keep_going(state):
        _, r, gamma, _, k = state
        # Without a preconditioner gamma is already |r|^2.
        rs = gamma.real if M is tv.identity else tv.vdot_real_tree(r, r)
        return (rs > bound) & (k < maxiter)

    def step(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / tv.vdot_real_tree(p, Ap).astype(dtype)
        x = tv.add(x, tv.scale(alpha, p))
        r = tv.sub(r, tv.scale(alpha, Ap))
        z = M(r)
        gamma_next = tv.vdot_real_tree(r, z).astype(dtype)
        p = tv.add(z, tv.scale(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1

    x, *_ = lax.while_loop(keep_going, step, (x0, r0, gamma0, z0, 0))
    return x


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve `A x = b` by conjugate gradients, `A` Hermitian positive definite (a square
    matrix, a function `x -> A x`, or an object with `@`), `b` an array or pytree.
    Stops at `|r| <= max(tol |b|, atol)` or after `maxiter` steps; `M` approximates
    `A^-1`. Returns `(x, None)`. Derivatives solve again with `cg` (implicitly)."""
    return solve_iteratively(
        _cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M, check_symmetric=True
    )
