"""The inexact line search of `jax.scipy.optimize`: a step satisfying the strong Wolfe
conditions, found by doubling the step and then zooming into the bracketing interval
(Nocedal & Wright, *Numerical Optimization*, algorithms 3.5 and 3.6)."""

from __future__ import annotations

from typing import NamedTuple

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import value_and_grad
from lamina.ir import dtypes

# Zoom gives up after this many steps, or when the interval is narrower than the floor.
ZOOM_MAXITER = 30
DELTA_CUBIC, DELTA_QUADRATIC = 0.2, 0.1


def _dot(a, b):
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


class LineSearchResults(NamedTuple):
    """The outcome of `line_search`.

    failed: the strong Wolfe conditions were not met; nit: iterations; nfev, ngev:
    function and gradient evaluations; k: the final iteration counter; a_k: the step;
    f_k, g_k: value and gradient at the step; status: 0 ok, 1 zoom failed, 3 maxiter.
    """

    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


class _Point(NamedTuple):
    """A trial step with its value, directional derivative and gradient."""

    a: object
    phi: object
    dphi: object
    g: object


def _select(pred, new, old):
    """Field by field `new if pred else old` of two NamedTuples of one type (a field
    that is None in `old` stays None)."""
    return type(old)(
        *(o if o is None else jnp.where(pred, n, o) for n, o in zip(new, old, strict=True))
    )


def _cubic_minimizer(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    rb = fb - fa - fpa * db
    rc = fc - fa - fpa * dc
    denom = (db * dc) ** 2 * (db - dc)
    cubic = (dc**2 * rb - db**2 * rc) / denom
    quad = (-(dc**3) * rb + db**3 * rc) / denom
    radical = quad * quad - 3.0 * cubic * fpa
    return a + (-quad + jnp.sqrt(radical)) / (3.0 * cubic)


def _quadratic_minimizer(a, fa, fpa, b, fb):
    """The minimizer of the parabola through (a, fa) with slope fpa and (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db * db)
    return a - fpa / (2.0 * curvature)


class _Zoom(NamedTuple):
    done: object
    failed: object
    j: object
    lo: _Point
    hi: _Point
    a_rec: object
    phi_rec: object
    star: _Point
    nfev: object


def _zoom(probe, sufficient_decrease_fails, curvature_holds, lo, hi, g0, skip):
    """Algorithm 3.6: shrink the interval between `lo` and `hi` (the end with the lower
    value first) to a point meeting both Wolfe conditions. Skipped when `skip`."""
    lo, hi = lo._replace(g=None), hi._replace(g=None)  # the ends need no gradient
    state = _Zoom(
        done=jnp.asarray(False),
        failed=jnp.asarray(False),
        j=0,
        lo=lo,
        hi=hi,
        a_rec=(lo.a + hi.a) / 2.0,
        phi_rec=(lo.phi + hi.phi) / 2.0,
        star=_Point(jnp.ones_like(lo.a), lo.phi, lo.dphi, g0),
        nfev=0,
    )
    floor = 1e-5 if dtypes.finfo(lo.a.dtype).bits < 64 else 1e-10

    def body(s):
        width = s.hi.a - s.lo.a
        left = jnp.minimum(s.hi.a, s.lo.a)
        right = jnp.maximum(s.hi.a, s.lo.a)
        failed = s.failed | (width <= floor)
        cubic = _cubic_minimizer(s.lo.a, s.lo.phi, s.lo.dphi, s.hi.a, s.hi.phi, s.a_rec, s.phi_rec)
        use_cubic = (
            (s.j > 0) & (cubic > left + DELTA_CUBIC * width) & (cubic < right - DELTA_CUBIC * width)
        )
        quad = _quadratic_minimizer(s.lo.a, s.lo.phi, s.lo.dphi, s.hi.a, s.hi.phi)
        use_quad = (
            ~use_cubic
            & (quad > left + DELTA_QUADRATIC * width)
            & (quad < right - DELTA_QUADRATIC * width)
        )
        a_j = jnp.where(use_cubic, cubic, jnp.where(use_quad, quad, (s.lo.a + s.hi.a) / 2.0))
        point = probe(a_j)
        point = _Point(
            a_j,
            point.phi.astype(s.lo.phi.dtype),
            point.dphi.astype(s.lo.dphi.dtype),
            point.g.astype(s.star.g.dtype),
        )
        j_is_hi = sufficient_decrease_fails(point.a, point.phi) | (point.phi >= s.lo.phi)
        j_is_star = curvature_holds(point.dphi) & ~j_is_hi
        lo_is_hi = (point.dphi * (s.hi.a - s.lo.a) >= 0.0) & ~j_is_hi & ~j_is_star
        j_is_lo = ~j_is_hi & ~j_is_star
        # The new high end: the trial point, or the old low end; the recorded point is
        # the end that is replaced.
        hi = _select(j_is_hi, point, _select(lo_is_hi, s.lo, s.hi))
        a_rec = jnp.where(j_is_hi | lo_is_hi, s.hi.a, jnp.where(j_is_lo, s.lo.a, s.a_rec))
        phi_rec = jnp.where(j_is_hi | lo_is_hi, s.hi.phi, jnp.where(j_is_lo, s.lo.phi, s.phi_rec))
        j = s.j + 1
        return _Zoom(
            done=s.done | j_is_star,
            failed=failed | (j >= ZOOM_MAXITER),
            j=j,
            lo=_select(j_is_lo, point, s.lo),
            hi=hi,
            a_rec=a_rec,
            phi_rec=phi_rec,
            star=_select(j_is_star, point, s.star),
            nfev=s.nfev + 1,
        )

    return lax.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, state)


class _Search(NamedTuple):
    done: object
    failed: object
    i: object
    prev: _Point
    nfev: object
    star: _Point


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9, maxiter=20):
    """Find a step along the descent direction `pk` from `xk` meeting the strong Wolfe
    conditions with constants `c1`, `c2`; `old_fval` and `gfk` are f and its gradient
    at `xk` if known, `old_old_fval` the previous value (sets the first trial step)."""
    dtype = jnp.result_type(xk, pk, 1.0)  # their common inexact dtype
    xk, pk = jnp.asarray(xk, dtype), jnp.asarray(pk, dtype)

    def probe(t):
        t = jnp.asarray(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return _Point(t, phi, jnp.real(_dot(g, pk)), g)

    evaluated_at_zero = old_fval is None or gfk is None
    if evaluated_at_zero:
        _, phi_0, dphi_0, gfk = probe(0)
    else:
        phi_0 = jnp.asarray(old_fval)
        dphi_0 = jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = jnp.where(candidate > 1, 1.0, candidate)
    else:
        start = jnp.asarray(1.0, dtype=dphi_0.dtype)

    def sufficient_decrease_fails(a, phi):
        return phi > phi_0 + c1 * a * dphi_0

    def curvature_holds(dphi):
        return jnp.abs(dphi) <= -c2 * dphi_0

    origin = _Point(jnp.zeros((), dphi_0.dtype), phi_0, dphi_0, gfk)
    state = _Search(
        done=jnp.asarray(False),
        failed=jnp.asarray(False),
        i=1,
        prev=origin,
        nfev=1 if evaluated_at_zero else 0,
        star=origin,
    )

    def body(s):
        # The trial step: the start value, then doubling.
        point = probe(jnp.where(s.i == 1, start, s.prev.a * 2.0))
        point = point._replace(a=point.a.astype(s.prev.a.dtype))
        overshoot = sufficient_decrease_fails(point.a, point.phi) | (
            (point.phi >= s.prev.phi) & (s.i > 1)
        )
        accept = curvature_holds(point.dphi) & ~overshoot
        uphill = (point.dphi >= 0.0) & ~overshoot & ~accept
        # Zoom between the previous and the trial step: from the previous one when the
        # trial overshot, from the trial one when the slope turned uphill. The two cases
        # exclude each other, so one zoom loop serves both.
        zoomed = overshoot | uphill
        zoom = _zoom(
            probe,
            sufficient_decrease_fails,
            curvature_holds,
            _select(overshoot, s.prev, point),
            _select(overshoot, point, s.prev),
            gfk,
            ~zoomed,
        )
        star = _select(zoomed, zoom.star, _select(accept, point, s.star))
        return _Search(
            done=s.done | zoomed | accept,
            failed=s.failed | (zoomed & zoom.failed),
            i=s.i + 1,
            prev=point,
            nfev=s.nfev + 1 + zoom.nfev,
            star=star,
        )

    state = lax.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, state)
    status = jnp.where(state.failed, 1, jnp.where(state.i > maxiter, 3, 0))
    step = state.star.a
    if dtypes.finfo(step.dtype).bits != 64:
        # Below 64 bits a vanishing step stalls the minimizer: keep it off zero.
        step = jnp.where(jnp.abs(step) < 1e-8, jnp.sign(step) * 1e-8, step)
    return LineSearchResults(
        failed=state.failed | ~state.done,
        nit=state.i - 1,
        nfev=state.nfev,
        ngev=state.nfev,
        k=state.i,
        a_k=step,
        f_k=state.star.phi,
        g_k=state.star.g,
        status=status,
    )
