"""The inexact line search of `jax.scipy.optimize`: a step satisfying the strong Wolfe
conditions, found by doubling the step and then zooming into the bracketing interval
(Nocedal & Wright, *Numerical Optimization*, algorithms 3.5 and 3.6).

Both phases run in one `lax.while_loop` that evaluates the function once per step: a
step either doubles the trial step or, once an interval brackets a good one, shrinks
the interval. The zoom always ends the search, so the steps and evaluations are those
of the two nested loops the algorithm describes, with the function traced once."""

from __future__ import annotations

from typing import NamedTuple

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import value_and_grad
from lamina.ir import dtypes
from lamina.ir.tree_util import tree_map

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
    """Leaf by leaf `new if pred else old` of two pytrees of one structure."""
    return tree_map(lambda n, o: jnp.where(pred, n, o), new, old)


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


class _Interval(NamedTuple):
    """The zoom's state: the ends (the low one has the lower value), the end last
    replaced (for the cubic fit), and the step count."""

    lo: _Point
    hi: _Point
    a_rec: object
    phi_rec: object
    j: object


class _Search(NamedTuple):
    zooming: object  # the phase: doubling (False) or zooming (True)
    done: object
    failed: object
    i: object  # doubling steps taken, plus 1
    prev: _Point  # the last doubling step
    interval: _Interval
    star: _Point  # the answer so far
    nfev: object


def _zoom_trial(interval, floor):
    """The zoom's next trial step (cubic, else quadratic, else bisection) and whether
    the interval has become too narrow."""
    lo, hi = interval.lo, interval.hi
    width = hi.a - lo.a
    left, right = jnp.minimum(hi.a, lo.a), jnp.maximum(hi.a, lo.a)
    cubic = _cubic_minimizer(lo.a, lo.phi, lo.dphi, hi.a, hi.phi, interval.a_rec, interval.phi_rec)
    use_cubic = (
        (interval.j > 0)
        & (cubic > left + DELTA_CUBIC * width)
        & (cubic < right - DELTA_CUBIC * width)
    )
    quad = _quadratic_minimizer(lo.a, lo.phi, lo.dphi, hi.a, hi.phi)
    use_quad = (
        ~use_cubic
        & (quad > left + DELTA_QUADRATIC * width)
        & (quad < right - DELTA_QUADRATIC * width)
    )
    trial = jnp.where(use_cubic, cubic, jnp.where(use_quad, quad, (lo.a + hi.a) / 2.0))
    return trial, width <= floor


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9, maxiter=20):
    """Find a step along the descent direction `pk` from `xk` meeting the strong Wolfe
    conditions with constants `c1`, `c2`; `old_fval` and `gfk` are f and its gradient
    at `xk` if known, `old_old_fval` the previous value (sets the first trial step)."""
    dtype = jnp.result_type(xk, pk, 1.0)  # their common inexact dtype
    xk, pk = jnp.asarray(xk, dtype), jnp.asarray(pk, dtype)

    def probe(t):
        phi, g = value_and_grad(f)(xk + jnp.asarray(t, dtype=pk.dtype) * pk)
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
    floor = 1e-5 if dtypes.finfo(dphi_0.dtype).bits < 64 else 1e-10

    def sufficient_decrease_fails(a, phi):
        return phi > phi_0 + c1 * a * dphi_0

    def curvature_holds(dphi):
        return jnp.abs(dphi) <= -c2 * dphi_0

    origin = _Point(jnp.zeros((), dphi_0.dtype), phi_0, dphi_0, gfk)
    end = origin._replace(g=None)  # the interval's ends need no gradient
    state = _Search(
        zooming=jnp.asarray(False),
        done=jnp.asarray(False),
        failed=jnp.asarray(False),
        i=1,
        prev=origin,
        interval=_Interval(end, end, origin.a, phi_0, 0),
        star=origin,
        nfev=1 if evaluated_at_zero else 0,
    )

    def double(s, point):
        """A doubling step at `point`: accept it, or bracket and start zooming."""
        overshoot = sufficient_decrease_fails(point.a, point.phi) | (
            (point.phi >= s.prev.phi) & (s.i > 1)
        )
        accept = curvature_holds(point.dphi) & ~overshoot
        uphill = (point.dphi >= 0.0) & ~overshoot & ~accept
        # Zoom from the previous step when the trial overshot, from the trial when the
        # slope turned uphill.
        lo = _select(overshoot, s.prev, point)._replace(g=None)
        hi = _select(overshoot, point, s.prev)._replace(g=None)
        interval = _Interval(lo, hi, (lo.a + hi.a) / 2.0, (lo.phi + hi.phi) / 2.0, 0)
        zoom_star = _Point(jnp.ones_like(lo.a), lo.phi, lo.dphi, gfk)
        return s._replace(
            zooming=overshoot | uphill,
            done=accept,
            i=s.i + 1,
            prev=point,
            interval=interval,
            star=_select(accept, point, _select(overshoot | uphill, zoom_star, s.star)),
        )

    def zoom(s, point, too_narrow):
        """A zoom step at `point`: replace one end of the interval, or accept it."""
        lo, hi = s.interval.lo, s.interval.hi
        j_is_hi = sufficient_decrease_fails(point.a, point.phi) | (point.phi >= lo.phi)
        j_is_star = curvature_holds(point.dphi) & ~j_is_hi
        lo_is_hi = (point.dphi * (hi.a - lo.a) >= 0.0) & ~j_is_hi & ~j_is_star
        j_is_lo = ~j_is_hi & ~j_is_star
        # The new high end is the trial or the old low end; the replaced end is recorded.
        replaced_hi = j_is_hi | lo_is_hi
        end = point._replace(g=None)
        j = s.interval.j + 1
        interval = _Interval(
            lo=_select(j_is_lo, end, lo),
            hi=_select(j_is_hi, end, _select(lo_is_hi, lo, hi)),
            a_rec=jnp.where(replaced_hi, hi.a, jnp.where(j_is_lo, lo.a, s.interval.a_rec)),
            phi_rec=jnp.where(replaced_hi, hi.phi, jnp.where(j_is_lo, lo.phi, s.interval.phi_rec)),
            j=j,
        )
        # The zoom fails when the interval is too narrow (or reversed: JAX measures its
        # width as hi - lo) or too many steps were taken, even if this step is accepted.
        # Whether it succeeded or not, the end of the zoom ends the search.
        failed = too_narrow | (j >= ZOOM_MAXITER)
        return s._replace(
            done=j_is_star | failed,
            failed=failed,
            interval=interval,
            star=_select(j_is_star, point, s.star),
        )

    def step(s):
        zoom_trial, too_narrow = _zoom_trial(s.interval, floor)
        double_trial = jnp.where(s.i == 1, start, s.prev.a * 2.0)
        point = probe(jnp.where(s.zooming, zoom_trial, double_trial))
        point = point._replace(
            phi=point.phi.astype(phi_0.dtype),
            dphi=point.dphi.astype(dphi_0.dtype),
            g=point.g.astype(gfk.dtype),
        )
        after = _select(s.zooming, zoom(s, point, too_narrow), double(s, point))
        return after._replace(nfev=s.nfev + 1)

    def keep_going(s):
        return ~s.done & ~s.failed & (s.zooming | (s.i <= maxiter))

    state = lax.while_loop(keep_going, step, state)
    status = jnp.where(state.failed, 1, jnp.where(state.i > maxiter, 3, 0))
    step_size = state.star.a
    if dtypes.finfo(step_size.dtype).bits != 64:
        # Below 64 bits a vanishing step stalls the minimizer: keep it off zero.
        step_size = jnp.where(jnp.abs(step_size) < 1e-8, jnp.sign(step_size) * 1e-8, step_size)
    return LineSearchResults(
        failed=state.failed | ~state.done,
        nit=state.i - 1,
        nfev=state.nfev,
        ngev=state.nfev,
        k=state.i,
        a_k=step_size,
        f_k=state.star.phi,
        g_k=state.star.g,
        status=status,
    )
