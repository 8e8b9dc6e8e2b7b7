"""`lamina.experimental.ode`: ``odeint``, an adaptive ODE solver (`jax.experimental.ode`).

The solver is the explicit Runge-Kutta method of Dormand and Prince (order 5 with an
embedded order-4 error estimate). Each step's size is chosen from the previous step's
error; a rejected step is retried with a smaller one. Between accepted steps the
solution is a 4th-order polynomial through both ends and the step's midpoint (dense
output), evaluated at each requested time. Gradients come from the adjoint method: the
backward pass integrates the ODE and its vector-Jacobian products backwards in time
between consecutive output times, so no step of the forward pass is stored.

States may be pytrees; the solver works on them flattened into one vector.
"""

from __future__ import annotations

import functools

import numpy as np

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import (
    closure_convert,
    custom_vjp,
    default_matmul_precision,
    jit,
    shaped_abstractify,
    vjp,
    vmap,
)
from lamina.ir import tree_util

__all__ = ["odeint"]

_HIGHEST = lax.Precision.HIGHEST

# The Dormand-Prince tableau: stage times (as fractions of the step), the stage
# coefficients, the order-5 weights and the difference of the order-5 and order-4
# weights (the error estimate). The seventh stage is the derivative at the step's end.
_STAGE_TIMES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0.0)
_STAGE_COEFFS = (
    (1 / 5, 0, 0, 0, 0, 0, 0),
    (3 / 40, 9 / 40, 0, 0, 0, 0, 0),
    (44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0),
    (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0),
)
_WEIGHTS = (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0)
_ERROR_WEIGHTS = (
    35 / 384 - 1951 / 21600,
    0,
    500 / 1113 - 22642 / 50085,
    125 / 192 - 451 / 720,
    -2187 / 6784 - -12231 / 42400,
    11 / 84 - 649 / 6300,
    -1.0 / 60.0,
)
# Weights giving the solution at the middle of a step from its stages (Shampine).
_MIDPOINT_WEIGHTS = (
    6025192743 / 30085553152 / 2,
    0,
    51252292925 / 65400821598 / 2,
    -2691868925 / 45128329728 / 2,
    187940372067 / 1594534317056 / 2,
    -1776094331 / 19743644256 / 2,
    11237099 / 235043384 / 2,
)


def _dot(a, b):
    return jnp.dot(a, b, precision=_HIGHEST)


def _highest_precision(fn):
    """``fn`` traced with every matrix product (``func``'s too) at the highest
    precision, as JAX's solver does."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with default_matmul_precision("highest"):
            return fn(*args, **kwargs)

    return wrapped


# ---------------------------------------------------------------- one step


def _dopri_step(f, y, fy, t, h):
    """One Dormand-Prince step of size ``h`` from ``(t, y)`` (``fy = f(y, t)``): returns
    the new state, its derivative, the error estimate and the seven stages."""
    times = jnp.array(_STAGE_TIMES, dtype=h.dtype)
    coeffs = jnp.array(_STAGE_COEFFS, dtype=fy.dtype)
    hy = h.astype(fy.dtype)

    def stage(i, k):
        yi = y + hy * _dot(coeffs[i - 1, :], k)
        return k.at[i, :].set(f(yi, t + h * times[i - 1]))

    k = jnp.zeros((7, fy.shape[0]), fy.dtype).at[0, :].set(fy)
    k = lax.fori_loop(1, 7, stage, k)
    y_next = hy * _dot(jnp.array(_WEIGHTS, dtype=fy.dtype), k) + y
    error = hy * _dot(jnp.array(_ERROR_WEIGHTS, dtype=fy.dtype), k)
    return y_next, k[-1], error, k


def _dense_output(y0, y1, k, h):
    """Coefficients (highest power first) of the quartic ``p`` on ``[0, 1]`` with
    ``p(0) = y0``, ``p(1) = y1``, ``p(1/2)`` the step's midpoint value and end slopes
    ``h * k[0]``, ``h * k[-1]``."""
    h = h.astype(y0.dtype)
    y_mid = y0 + h * _dot(jnp.array(_MIDPOINT_WEIGHTS, dtype=y0.dtype), k)
    k0, k1 = k[0], k[-1]
    # Each slope term is (coefficient * h) * slope, in JAX's order of operations.
    c4 = -2.0 * h * k0 + 2.0 * h * k1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    c3 = 5.0 * h * k0 - 3.0 * h * k1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c2 = -4.0 * h * k0 + h * k1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return jnp.asarray((c4, c3, c2, h * k0, y0))


# ---------------------------------------------------------------- step sizes


def _initial_step(f, t0, y0, f0, order, rtol, atol):
    """A first step size from the size of the state and of its first two derivatives
    (Hairer, Norsett and Wanner, Solving ODEs I, section II.4)."""
    dtype = jnp.result_type(y0, f0)
    if not jnp.issubdtype(dtype, jnp.inexact):
        dtype = jnp.result_type(float)
    y0, f0 = jnp.asarray(y0, dtype), jnp.asarray(f0, dtype)
    scale = (atol + jnp.abs(y0) * rtol).astype(dtype)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = f(y0 + h0.astype(dtype) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where(
        (d1 <= 1e-15) & (d2 <= 1e-15),
        jnp.maximum(1e-6, h0 * 1e-3),
        (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)),
    )
    return jnp.minimum(100.0 * h0, h1)


def _error_ratio(error, rtol, atol, y0, y1):
    """The root-mean-square of the error estimate relative to the tolerance."""
    tolerance = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    ratio = error / tolerance.astype(error.dtype)
    squared = ratio.real**2 + ratio.imag**2 if jnp.iscomplexobj(ratio) else ratio**2
    return jnp.sqrt(jnp.mean(squared))


def _next_step(h, ratio, safety=0.9, grow=10.0, shrink=0.2, order=5.0):
    """The step size after a step of size ``h`` with error ratio ``ratio``: scaled by
    ``safety * ratio**(-1/order)``, at most ``grow`` times larger and, after a rejected
    step, at most ``1/shrink`` times smaller."""
    floor = jnp.where(ratio < 1, 1.0, shrink)
    factor = jnp.minimum(grow, jnp.maximum(ratio ** (-1.0 / order) * safety, floor))
    return jnp.where(ratio == 0, h * grow, h * factor)


# ---------------------------------------------------------------- the solver


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
@_highest_precision
def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The solution (a flat state) at each time of ``ts``."""

    def f(y, t):
        return func(y, t, *args)

    def to_next_time(state, target):
        def unfinished(s):
            steps, _, _, t, h, _, _ = s
            return (t < target) & (steps < mxstep) & (h > 0)

        def attempt(s):
            steps, y, fy, t, h, t_prev, poly = s
            y_new, f_new, error, k = _dopri_step(f, y, fy, t, h)
            ratio = _error_ratio(error, rtol, atol, y, y_new)
            h_next = jnp.clip(_next_step(h, ratio), min=0.0, max=hmax)
            taken = [steps + 1, y_new, f_new, t + h, h_next, t, _dense_output(y, y_new, k, h)]
            retried = [steps + 1, y, fy, t, h_next, t_prev, poly]
            accept = ratio <= 1.0
            return [jnp.where(accept, a, b) for a, b in zip(taken, retried, strict=True)]

        _, *state = lax.while_loop(unfinished, attempt, [0, *state])
        _, _, t, _, t_prev, poly = state
        where = (target - t_prev) / (t - t_prev)
        return state, jnp.polyval(poly, where.astype(poly.dtype))

    f0 = f(y0, ts[0])
    h0 = jnp.clip(_initial_step(f, ts[0], y0, f0, 4, rtol, atol), min=0.0, max=hmax)
    start = [y0, f0, ts[0], h0, ts[0], jnp.array([y0] * 5)]
    _, ys = lax.scan(to_next_time, start, ts[1:])
    return jnp.concatenate((y0[None], ys))


def _solve_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


@_highest_precision
def _solve_bwd(func, rtol, atol, mxstep, hmax, residuals, g):
    """The adjoint method: between consecutive output times, from the last backwards,
    integrate the state together with the cotangents of the state, of the start time
    and of ``args`` (in negated time, so that the solver still runs forwards)."""
    ys, ts, args = residuals

    def augmented(state, minus_t, *args):
        y, y_bar, _, _ = state
        y_dot, pullback = vjp(func, y, -minus_t, *args)
        return (-y_dot, *pullback(y_bar))

    def back_one_interval(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = _dot(func(ys[i], ts[i], *args), g[i]).real  # moving output time i
        t0_bar = t0_bar - t_bar
        interval = jnp.array([-ts[i], -ts[i - 1]])
        _, y_bar, t0_bar, args_bar = odeint(
            augmented,
            (ys[i], y_bar, t0_bar, args_bar),
            interval,
            *args,
            rtol=rtol,
            atol=atol,
            mxstep=mxstep,
            hmax=hmax,
        )
        y_bar, t0_bar, args_bar = tree_util.tree_map(lambda x: x[1], (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    start = (g[-1], 0.0, tree_util.tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), ts_bar_reversed = lax.scan(
        back_one_interval, start, jnp.arange(len(ts) - 1, 0, -1)
    )
    ts_bar = jnp.concatenate([jnp.array([t0_bar]), ts_bar_reversed[::-1]])
    return (y_bar, ts_bar, *args_bar)


_solve.defvjp(_solve_fwd, _solve_bwd)


# ---------------------------------------------------------------- pytree states


def _ravel(tree):
    """``tree``'s leaves as one vector (of their common dtype) and the inverse map."""
    leaves, treedef = tree_util.tree_flatten(tree)
    leaves = [jnp.asarray(x) for x in leaves]
    if not leaves:
        return jnp.zeros(0, jnp.float32), lambda flat: tree_util.tree_unflatten(treedef, [])
    dtype = jnp.result_type(*leaves)
    shapes = [x.shape for x in leaves]
    dtypes = [x.dtype for x in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    flat = jnp.concatenate([jnp.ravel(x).astype(dtype) for x in leaves])

    def unravel(flat):
        pieces, start = [], 0
        for shape, dt, size in zip(shapes, dtypes, sizes, strict=True):
            pieces.append(flat[start : start + size].reshape(shape).astype(dt))
            start += size
        return tree_util.tree_unflatten(treedef, pieces)

    return flat, unravel


@functools.partial(jit, static_argnums=(0, 1, 2, 3, 4))
@_highest_precision
def _solve_tree(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    flat_y0, unravel = _ravel(y0)

    def flat_func(y, t, *args):
        return _ravel(func(unravel(y), t, *args))[0]

    ys = _solve(flat_func, rtol, atol, mxstep, hmax, flat_y0, ts, *args)
    return vmap(unravel)(ys)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=jnp.inf, hmax=jnp.inf):
    """Solve ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0``; returns ``y`` at each
    time of ``t`` (increasing floats), stacked along a new leading axis of every leaf.

    ``y0`` may be a pytree of arrays (``func`` returns the same structure); ``args`` are
    arrays or pytrees of them, and may be differentiated. ``rtol``/``atol`` are the
    local error tolerances, ``mxstep`` bounds the steps between two output times and
    ``hmax`` the step size.
    """
    for arg in tree_util.tree_leaves(args):
        try:
            shaped_abstractify(arg)
        except TypeError:
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}."
            ) from None
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _solve_tree(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)
