"""BFGS (Nocedal & Wright, *Numerical Optimization*, algorithm 6.1) with a dense
inverse-Hessian estimate, run inside one `lax.while_loop`."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import value_and_grad
from lamina.scipy.optimize.wolfe_search import line_search


def _dot(a, b):
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


class BFGSResults(NamedTuple):
    """The loop state of `minimize_bfgs`, and its result."""

    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimize `fun` from `x0` (a vector) by BFGS until the `norm` of the gradient is
    below `gtol`, a line search fails, or `maxiter` iterations (200 per variable)."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    n = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    state = BFGSResults(
        converged=jnp.linalg.norm(g_0, ord=norm) < gtol,
        failed=False,
        k=0,
        nfev=1,
        ngev=1,
        nhev=0,
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        H_k=jnp.eye(n, dtype=x0.dtype),
        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2,
        status=0,
        line_search_status=0,
    )

    def keep_going(s):
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def step(s):
        p_k = -_dot(s.H_k, s.g_k)
        search = line_search(
            fun,
            s.x_k,
            p_k,
            old_fval=s.f_k,
            old_old_fval=s.old_old_fval,
            gfk=s.g_k,
            maxiter=line_search_maxiter,
        )
        s_k = search.a_k * p_k
        y_k = search.g_k - s.g_k
        rho_k = jnp.reciprocal(_dot(y_k, s_k))
        # H' = (I - rho s y^T) H (I - rho y s^T) + rho s s^T
        w = jnp.eye(n, dtype=rho_k.dtype) - rho_k * jnp.outer(s_k, y_k)
        h_next = _dot(_dot(w, s.H_k), w.T) + rho_k * jnp.outer(s_k, s_k)
        return BFGSResults(
            converged=jnp.linalg.norm(search.g_k, ord=norm) < gtol,
            failed=search.failed,
            k=s.k + 1,
            nfev=s.nfev + search.nfev,
            ngev=s.ngev + search.ngev,
            nhev=s.nhev,
            x_k=s.x_k + s_k,
            f_k=search.f_k,
            g_k=search.g_k,
            H_k=jnp.where(jnp.isfinite(rho_k), h_next, s.H_k),
            old_old_fval=s.f_k,
            status=s.status,
            line_search_status=search.status,
        )

    state = lax.while_loop(keep_going, step, state)
    # 0 converged, 1 out of iterations, 2 + the line search's status when it failed.
    status = jnp.where(
        state.converged,
        0,
        jnp.where(state.k == maxiter, 1, jnp.where(state.failed, 2 + state.line_search_status, -1)),
    )
    return state._replace(status=status)
