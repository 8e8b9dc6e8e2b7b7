"""`bicgstab`: the stabilized biconjugate gradient method for general `A`."""

from __future__ import annotations

from functools import partial

from lamina import lax
from lamina import numpy as jnp
from lamina.ir.tree_util import tree_map
from lamina.scipy.sparse.linalg import tree_vectors as tv
from lamina.scipy.sparse.linalg.iterative_solve import solve_iteratively


def _bicgstab_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=tv.identity):
    bound = jnp.maximum(jnp.square(tol) * tv.vdot_real_tree(b, b), jnp.square(atol))

    def keep_going(state):
        _, r, *_, k = state
        # k < 0 marks a breakdown (-10: rho = 0, -11: alpha or omega = 0).
        return (tv.vdot_real_tree(r, r) > bound) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = tv.vdot_tree(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = tv.add(r, tv.scale(beta, tv.sub(p, tv.scale(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_next / tv.vdot_tree(rhat, q)
        s = tv.sub(r, tv.scale(alpha, q))
        # Stop half way when s is already small enough.
        half = tv.vdot_real_tree(s, s) < bound
        shat = M(s)
        t = A(shat)
        omega = tv.vdot_tree(t, s) / tv.vdot_tree(t, t)
        choose = partial(tree_map, partial(jnp.where, half))
        x_half = tv.add(x, tv.scale(alpha, phat))
        x = choose(x_half, tv.add(x_half, tv.scale(omega, shat)))
        r = choose(s, tv.sub(s, tv.scale(omega, t)))
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_next == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_next, p, q, k

    r0 = tv.sub(b, A(x0))
    one = jnp.ones((), tv.result_dtype(b))
    state = (x0, r0, r0, one, one, one, r0, r0, 0)
    x, *_ = lax.while_loop(keep_going, step, state)
    return x


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve `A x = b` by BiCGSTAB, for any nonsingular `A` (a square matrix, a function
    `x -> A x`, or an object with `@`), `b` an array or pytree. Stops at
    `|r| <= max(tol |b|, atol)` or after `maxiter` steps; `M` approximates `A^-1`.
    Returns `(x, None)`. Derivatives solve again with `bicgstab` (implicitly)."""
    return solve_iteratively(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
