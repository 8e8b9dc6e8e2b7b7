"""Limited-memory BFGS (Nocedal & Wright, algorithm 7.5; complex variables after Sorber,
Van Barel & De Lathauwer 2012), JAX's experimental method, in one `lax.while_loop`."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import value_and_grad
from lamina.ir import dtypes
from lamina.scipy.optimize.wolfe_search import line_search


def _dot(a, b):
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


class LBFGSResults(NamedTuple):
    """The loop state of `minimize_lbfgs`, and its result. status: 0 ok, 1 maxiter,
    2 maxfun, 3 maxgrad, 4 too little progress (ftol), 5 line search failed."""

    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    x_k: object
    f_k: object
    g_k: object
    s_history: object
    y_history: object
    rho_history: object
    gamma: object
    status: object
    ls_status: object


def _push(history, new):
    """Drop the oldest entry (row 0) of `history` and append `new` as its last row."""
    return jnp.concatenate([history[1:], new[None].astype(history.dtype)], axis=0)


def _direction(state):
    """The two-loop recursion: minus the inverse-Hessian estimate times the gradient."""
    dtype = state.rho_history.dtype
    memory = state.rho_history.shape[0]
    used = jnp.minimum(state.k, memory)
    q = -jnp.conj(state.g_k)

    def newest_first(j, carry):
        q, alphas = carry
        i = memory - 1 - j
        a_i = state.rho_history[i] * _dot(jnp.conj(state.s_history[i]), q).real.astype(dtype)
        return q - a_i * jnp.conj(state.y_history[i]), alphas.at[i].set(a_i)

    q, alphas = lax.fori_loop(0, used, newest_first, (q, jnp.zeros_like(state.rho_history)))
    q = state.gamma * q

    def oldest_first(j, q):
        i = memory - used + j
        b_i = state.rho_history[i] * _dot(state.y_history[i], q).real.astype(dtype)
        return q + (alphas[i] - b_i) * state.s_history[i]

    return lax.fori_loop(0, used, oldest_first, q)


def minimize_lbfgs(
    fun,
    x0,
    maxiter=None,
    norm=np.inf,
    maxcor=10,
    ftol=2.220446049250313e-09,
    gtol=1e-05,
    maxfun=None,
    maxgrad=None,
    maxls=20,
):
    """Minimize `fun` from `x0` by L-BFGS keeping `maxcor` corrections; stops when the
    gradient's `norm` is below `gtol`, or on a limit (iterations, evaluations, progress
    below `ftol`) or a failed line search."""
    n = len(x0)
    dtype = dtypes.dtype(x0)
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = n * 200
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad

    f_0, g_0 = value_and_grad(fun)(x0)
    state = LBFGSResults(
        converged=jnp.asarray(False),
        failed=jnp.asarray(False),
        k=0,
        nfev=1,
        ngev=1,
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        s_history=jnp.zeros((maxcor, n), dtype=dtype),
        y_history=jnp.zeros((maxcor, n), dtype=dtype),
        rho_history=jnp.zeros((maxcor,), dtype=dtype),
        gamma=1.0,
        status=0,
        ls_status=0,
    )

    def step(s):
        p_k = _direction(s)
        search = line_search(f=fun, xk=s.x_k, pk=p_k, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
        s_k = jnp.asarray(search.a_k).astype(p_k.dtype) * p_k
        y_k = search.g_k - s.g_k
        curvature = jnp.real(_dot(y_k, s_k))
        rho_k = jnp.reciprocal(curvature).astype(y_k.dtype)
        gamma = curvature / jnp.real(_dot(jnp.conj(y_k), y_k))
        # The last limit hit wins, in this order of precedence (lowest first).
        status = jnp.where(s.f_k - search.f_k < ftol, 4, 0)
        status = jnp.where(s.ngev >= maxgrad, 3, status)
        status = jnp.where(s.nfev >= maxfun, 2, status)
        status = jnp.where(s.k >= maxiter, 1, status)
        status = jnp.where(search.failed, 5, status)
        converged = jnp.linalg.norm(search.g_k, ord=norm) < gtol
        return LBFGSResults(
            converged=converged,
            failed=(status > 0) & ~converged,
            k=s.k + 1,
            nfev=s.nfev + search.nfev,
            ngev=s.ngev + search.ngev,
            x_k=(s.x_k + s_k).astype(s.x_k.dtype),
            f_k=search.f_k.astype(s.f_k.dtype),
            g_k=search.g_k.astype(s.g_k.dtype),
            s_history=_push(s.s_history, s_k),
            y_history=_push(s.y_history, y_k),
            rho_history=_push(s.rho_history, rho_k),
            gamma=gamma.astype(s.g_k.dtype),
            status=jnp.where(converged, 0, status),
            ls_status=search.status,
        )

    return lax.while_loop(lambda s: ~s.converged & ~s.failed, step, state)
