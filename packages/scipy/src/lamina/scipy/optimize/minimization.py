"""`minimize` and its `OptimizeResults`, as `jax.scipy.optimize` has them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from lamina import numpy as jnp
from lamina.interpreters import Array
from lamina.scipy.optimize.bfgs import minimize_bfgs
from lamina.scipy.optimize.lbfgs import minimize_lbfgs


class OptimizeResults(NamedTuple):
    """What `minimize` found.

    x: the solution; success: converged without a failed line search; status: 0
    converged, 1 out of iterations, 3 zoom failed, 4 saddle point, 5 line search out of
    iterations, -1 other; fun, jac: value and gradient at `x`; hess_inv: the inverse
    Hessian estimate (None for L-BFGS); nfev, njev: evaluations; nit: iterations.
    """

    x: Array
    success: bool | Array
    status: int | Array
    fun: Array
    jac: Array
    hess_inv: Array | None
    nfev: int | Array
    njev: int | Array
    nit: int | Array


def minimize(
    fun: Callable,
    x0: Array,
    args: tuple = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimize `fun(x, *args)` over the vector `x` starting at `x0`, by `method`
    ('BFGS' or 'l-bfgs-experimental-do-not-rely-on-this'); gradients come from autodiff.
    `options` are the method's settings (maxiter, gtol, norm, ...); `tol` is unused, as
    in JAX. Works under `jit` and `vmap`."""
    options = {} if options is None else options
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

    def objective(x):
        return fun(x, *args)

    name = method.lower()
    if name == "bfgs":
        found = minimize_bfgs(objective, x0, **options)
        hess_inv = found.H_k
    elif name == "l-bfgs-experimental-do-not-rely-on-this":
        found = minimize_lbfgs(objective, x0, **options)
        hess_inv = None
    else:
        raise ValueError(f"Method {method} not recognized")
    return OptimizeResults(
        x=found.x_k,
        success=found.converged & jnp.logical_not(found.failed),
        status=found.status,
        fun=found.f_k,
        jac=found.g_k,
        hess_inv=hess_inv,
        nfev=found.nfev,
        njev=found.ngev,
        nit=found.k,
    )
