"""The regularized incomplete gamma and beta functions: igamma, igammac, igamma_grad_a,
random_gamma_grad and regularized_incomplete_beta (``betainc``).

Each is a power series or a continued fraction, evaluated elementwise in a
``stablehlo.while`` loop emitted by the lowering (:func:`emit_loop`): the loop runs
until every element has converged, at most ``MAX_ITERATIONS`` times. The arithmetic
inside and around the loop is written with lax operations and lowered in place.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import dtypes
from lamina.ir.core import ShapedArray
from lamina.lax.conversion import convert_element_type
from lamina.lax.elementwise import (
    add,
    div,
    eq,
    exp,
    ge,
    gt,
    le,
    log,
    lt,
    mul,
    ne,
    neg,
    select_n,
    sub,
)
from lamina.lax.reductions import reduce_max
from lamina.lax.special import (
    abs_,
    const,
    digamma,
    full_like,
    inline,
    lgamma,
    lower_elementwise,
    special_primitive,
)

__all__ = [
    "betainc",
    "igamma",
    "igamma_grad_a",
    "igamma_grad_a_p",
    "igamma_p",
    "igammac",
    "igammac_p",
    "random_gamma_grad",
    "regularized_incomplete_beta_p",
]

MAX_ITERATIONS = 2000


def _and(p, q):
    return select_n(p, p, q)


def _or(p, q):
    return select_n(p, q, p)


def _not(p):
    return eq(p, np.bool_(False))


def _is_nan(x):
    return ne(x, x)


def _eps(x):
    return float(np.finfo(dtypes.dtype(x)).eps)


def _keep(running, new, old):
    """``new`` where the element still iterates, else ``old`` (converged values stay)."""
    return select_n(running, old, new)


def emit_loop(ctx, step, operands, operand_avals, init, carry_avals):
    """A ``stablehlo.while`` computing ``carry = step(*operands, *carry)`` until no
    element's mask (the carry's first entry) is on, or ``MAX_ITERATIONS`` times.
    ``operands`` and ``init`` are MLIR values; returns the final carry."""
    counter = ShapedArray((), np.dtype(np.int32))
    flag = ShapedArray((), np.dtype(np.bool_))
    axes = tuple(range(len(carry_avals[0].shape)))
    n = len(operands)

    def cond(count, running, *rest):
        return [_and(lt(count, np.int32(MAX_ITERATIONS)), running)]

    def body(count, running, *rest):
        new = list(step(*rest[:n], *rest[n:]))
        any_running = gt(reduce_max(convert_element_type(new[0], np.int32), axes), np.int32(0))
        return [add(count, np.int32(1)), any_running, *rest[:n], *new]

    state = [ctx.constant(np.int32(0), counter), ctx.constant(np.bool_(True), flag)]
    state += [*operands, *init]
    avals = [counter, flag, *operand_avals, *carry_avals]
    types = [v.type for v in state]
    loop = hlo.WhileOp(types, state)
    for region, fun in ((loop.cond, cond), (loop.body, body)):
        block = region.blocks.append(*types)
        with ir.InsertionPoint(block):
            hlo.return_(inline(ctx, fun, block.arguments, avals)[0])
    return list(loop.results)[2 + n :]


def _run(ctx, prologue, step, operands, aval):
    """The carry after iterating ``step`` from ``prologue(*operands)``."""
    avals = [aval] * len(operands)
    init, carry_avals = inline(ctx, prologue, operands, avals)
    return emit_loop(ctx, step, operands, avals, init, carry_avals), carry_avals


# ------------------------------------------------------------------ incomplete gamma
#
# P(a, x) = exp(a log x - x - lgamma(a + 1)) * sum_n x**n / ((a+1) ... (a+n))  for x < a+1
# Q(a, x) = exp(a log x - x - lgamma(a)) / f, with f the continued fraction
#   f = b_0 + a_1/(b_1 + a_2/(b_2 + ...)),  b_n = x + 2n + 1 - a,  a_n = n (a - n),
# evaluated by Wallis' recurrences A_n = b_n A_{n-1} + a_n A_{n-2} (B_n likewise),
# f ~ A_n / B_n. Both carry their derivatives in a for igamma_grad_a.


def _valid(a, x):
    return _not(_or(_or(_is_nan(a), _is_nan(x)), _or(lt(x, const(0, x)), le(a, const(0, a)))))


def _use_series(a, x):
    return lt(x, add(a, const(1, a)))


def _finite_positive(a, x):
    positive = _and(gt(x, const(0, x)), lt(x, const(np.inf, x)))
    return _and(positive, lt(a, const(np.inf, a)))


def _series_prologue(a, x):
    running = _and(_and(_valid(a, x), _finite_positive(a, x)), _use_series(a, x))
    zero = full_like(0, x)
    return [running, a, full_like(1, x), full_like(1, x), zero, zero]


def _series_step(with_grad):
    def step(a, x, running, r, term, total, dterm, dtotal):
        new_r = add(r, const(1, r))
        ratio = div(x, new_r)
        new_dterm = mul(sub(dterm, div(term, new_r)), ratio)
        new_term = mul(term, ratio)
        new_total = add(total, new_term)
        new_dtotal = add(dtotal, new_dterm)
        more = gt(abs_(new_term), mul(abs_(new_total), const(_eps(x), x)))
        if with_grad:
            more = _or(more, gt(abs_(new_dterm), mul(abs_(new_dtotal), const(_eps(x), x))))
        new = (new_r, new_term, new_total, new_dterm, new_dtotal)
        old = (r, term, total, dterm, dtotal)
        return [_and(running, more), *(_keep(running, n, o) for n, o in zip(new, old, strict=True))]

    return step


def _fraction_prologue(a, x):
    running = _and(_and(_valid(a, x), _finite_positive(a, x)), _not(_use_series(a, x)))
    b0 = add(sub(x, a), const(1, x))
    one, zero = full_like(1, x), full_like(0, x)
    minus_one = full_like(-1, x)
    # n, A_n, A_{n-1}, B_n, B_{n-1}, their derivatives in a, f_n and its derivative
    return [running, zero, b0, one, one, zero, minus_one, zero, zero, zero, b0, minus_one]


def _fraction_step(with_grad):
    def step(a, x, running, n, a1, a2, b1, b2, da1, da2, db1, db2, f, df):
        m = add(n, const(1, n))
        an = mul(m, sub(a, m))
        bn = sub(add(x, add(m, add(m, const(1, m)))), a)
        new_a = add(mul(bn, a1), mul(an, a2))
        new_b = add(mul(bn, b1), mul(an, b2))
        new_da = add(add(neg(a1), mul(bn, da1)), add(mul(m, a2), mul(an, da2)))
        new_db = add(add(neg(b1), mul(bn, db1)), add(mul(m, b2), mul(an, db2)))
        nonzero = ne(new_b, const(0, x))
        safe_b = select_n(nonzero, full_like(1, x), new_b)
        new_f = select_n(nonzero, f, div(new_a, safe_b))
        new_df = select_n(nonzero, df, div(sub(new_da, mul(new_f, new_db)), safe_b))
        eps = const(_eps(x), x)
        more = gt(abs_(sub(new_f, f)), mul(abs_(new_f), eps))
        if with_grad:
            more = _or(more, gt(abs_(sub(new_df, df)), mul(abs_(new_df), eps)))
        # Rescale all terms together (f and df are ratios) before they overflow.
        big = 1 / _eps(x)
        scale = select_n(gt(abs_(new_b), const(big, x)), full_like(1, x), full_like(1 / big, x))
        new = [mul(v, scale) for v in (new_a, a1, new_b, b1, new_da, da1, new_db, db1)]
        new = [m, *new, new_f, new_df]
        old = [n, a1, a2, b1, b2, da1, da2, db1, db2, f, df]
        return [_and(running, more), *(_keep(running, v, o) for v, o in zip(new, old, strict=True))]

    return step


def _gamma_pieces(ctx, values, aval, with_grad):
    series, _ = _run(ctx, _series_prologue, _series_step(with_grad), values, aval)
    fraction, _ = _run(ctx, _fraction_prologue, _fraction_step(with_grad), values, aval)
    return [*values, series[3], series[5], fraction[10], fraction[11]]


def _gamma_lowering(finish, with_grad):
    def emit(ctx, values, aval):
        pieces = _gamma_pieces(ctx, values, aval, with_grad)
        return inline(ctx, lambda *xs: [finish(*xs)], pieces, [aval] * len(pieces))[0][0]

    return lambda ctx, a, x: lower_elementwise(ctx, emit, a, x)


def _p_and_q(a, x, total, f):
    """(P, Q) from the series sum and the continued fraction, each where it applies."""
    log_x = log(select_n(gt(x, const(0, x)), full_like(1, x), x))
    p = mul(exp(sub(sub(mul(a, log_x), x), lgamma(add(a, const(1, a))))), total)
    q = div(exp(sub(sub(mul(a, log_x), x), lgamma(a))), f)
    series = _use_series(a, x)
    return select_n(series, sub(const(1, q), q), p), select_n(series, q, sub(const(1, p), p))


def _edges(a, x, value, at_zero, at_infinity, a_zero=np.nan, a_infinite=np.nan):
    """``value`` with the limits at x = 0, x = inf, a = 0 (x > 0) and a = inf (finite
    x) put in; NaN for NaN operands, x < 0, a < 0, and a = x = 0."""
    zero_a, infinite_a = eq(a, const(0, a)), eq(a, const(np.inf, a))
    value = select_n(infinite_a, value, full_like(a_infinite, x))
    value = select_n(zero_a, value, full_like(a_zero, x))
    value = select_n(eq(x, const(0, x)), value, full_like(at_zero, x))
    value = select_n(eq(x, const(np.inf, x)), value, full_like(at_infinity, x))
    corner = _and(zero_a, eq(x, const(0, x)))
    valid = _and(_or(_valid(a, x), _and(zero_a, ge(x, const(0, x)))), _not(corner))
    return select_n(valid, full_like(np.nan, x), value)


def _igamma_finish(a, x, total, dtotal, f, df):
    return _edges(a, x, _p_and_q(a, x, total, f)[0], 0, 1, a_zero=1, a_infinite=0)


def _igammac_finish(a, x, total, dtotal, f, df):
    return _edges(a, x, _p_and_q(a, x, total, f)[1], 1, 0, a_zero=0, a_infinite=1)


def _igamma_grad_a_finish(a, x, total, dtotal, f, df):
    log_x = log(select_n(gt(x, const(0, x)), full_like(1, x), x))
    ap1 = add(a, const(1, a))
    series_scale = exp(sub(sub(mul(a, log_x), x), lgamma(ap1)))
    dp = mul(series_scale, add(mul(total, sub(log_x, digamma(ap1))), dtotal))
    q = div(exp(sub(sub(mul(a, log_x), x), lgamma(a))), f)
    dq = mul(q, sub(sub(log_x, digamma(a)), div(df, f)))
    return _edges(a, x, select_n(_use_series(a, x), neg(dq), dp), 0, np.nan)


igamma_p = special_primitive("igamma", 2, _gamma_lowering(_igamma_finish, False))
igammac_p = special_primitive("igammac", 2, _gamma_lowering(_igammac_finish, False))
igamma_grad_a_p = special_primitive(
    "igamma_grad_a", 2, _gamma_lowering(_igamma_grad_a_finish, True)
)


def igamma(a, x):
    """Elementwise regularized lower incomplete gamma function P(a, x)."""
    return igamma_p.bind(a, x)


def igammac(a, x):
    """Elementwise regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return igammac_p.bind(a, x)


def igamma_grad_a(a, x):
    """Elementwise derivative of igamma(a, x) with respect to ``a``."""
    return igamma_grad_a_p.bind(a, x)


def _log_gamma_density(a, x):
    """log of x**(a-1) exp(-x) / Gamma(a): the derivative of igamma in x."""
    return sub(sub(mul(sub(a, const(1, a)), log(x)), x), lgamma(a))


def random_gamma_grad(*args):
    """The derivative of a Gamma(a, 1) sample ``x`` with respect to ``a`` (implicit
    differentiation of the CDF: -dP/da / dP/dx)."""
    a, x = args
    zero_x = eq(x, const(0, x))
    safe_x = select_n(zero_x, x, full_like(1, x))
    ratio = neg(div(igamma_grad_a(a, safe_x), exp(_log_gamma_density(a, safe_x))))
    regular_a = gt(a, const(0, a))
    # At x = 0 the sample does not move with a (both derivatives vanish there).
    return select_n(zero_x, ratio, select_n(regular_a, full_like(np.nan, x), full_like(0, x)))


ad.defjvp(igamma_p, lambda t, ans, a, x: mul(t, igamma_grad_a(a, x)),
          lambda t, ans, a, x: mul(t, exp(_log_gamma_density(a, x))))  # fmt: skip
ad.defjvp(igammac_p, lambda t, ans, a, x: neg(mul(t, igamma_grad_a(a, x))),
          lambda t, ans, a, x: neg(mul(t, exp(_log_gamma_density(a, x)))))  # fmt: skip


# ------------------------------------------------------------------ incomplete beta
#
# I_x(a, b) = x**a (1-x)**b / (a B(a, b)) * h, with h the continued fraction
#   1/(1 + d_1/(1 + d_2/(1 + ...))),  d_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)),
#   d_{2m} = m (b-m) x / ((a+2m-1)(a+2m)),
# evaluated by Lentz's method. It converges fast for x < (a+1)/(a+b+2); past that,
# I_x(a, b) = 1 - I_{1-x}(b, a).


def _beta_valid(a, b, x):
    """Not NaN, a >= 0, b >= 0 and 0 <= x <= 1."""
    negative = _or(lt(a, const(0, a)), lt(b, const(0, b)))
    bad = _or(negative, _or(lt(x, const(0, x)), gt(x, const(1, x))))
    return _not(_or(bad, _or(_or(_is_nan(a), _is_nan(b)), _is_nan(x))))


def _beta_regular(a, b, x):
    """Where the continued fraction is evaluated: a, b finite and positive, 0 < x < 1."""
    positive = _and(gt(a, const(0, a)), gt(b, const(0, b)))
    finite = _and(lt(a, const(np.inf, a)), lt(b, const(np.inf, b)))
    inside = _and(gt(x, const(0, x)), lt(x, const(1, x)))
    return _and(_and(_beta_valid(a, b, x), positive), _and(finite, inside))


def _beta_swapped(a, b, x):
    return gt(x, div(add(a, const(1, a)), add(add(a, b), const(2, a))))


def _beta_arguments(a, b, x):
    """(p, q, z, w): the parameters the fraction is evaluated at, w = 1 - z."""
    swap = _beta_swapped(a, b, x)
    y = sub(const(1, x), x)
    return select_n(swap, a, b), select_n(swap, b, a), select_n(swap, x, y), select_n(swap, y, x)


def _lentz_guard(v):
    tiny = float(np.finfo(dtypes.dtype(v)).tiny / np.finfo(dtypes.dtype(v)).eps)
    return select_n(lt(abs_(v), const(tiny, v)), v, full_like(tiny, v))


def _beta_prologue(a, b, x):
    running = _beta_regular(a, b, x)
    p, q, z, _ = _beta_arguments(a, b, x)
    d = div(
        const(1, x), _lentz_guard(sub(const(1, x), div(mul(add(p, q), z), add(p, const(1, p)))))
    )
    return [running, full_like(0, x), full_like(1, x), d, d]


def _beta_step(a, b, x, running, m, c, d, h):
    p, q, z, _ = _beta_arguments(a, b, x)
    one = const(1, x)
    new_m = add(m, one)
    m2 = add(new_m, new_m)

    def advance(coefficient, c, d):
        d = div(one, _lentz_guard(add(one, mul(coefficient, d))))
        c = _lentz_guard(add(one, div(coefficient, c)))
        return c, d, mul(c, d)

    even = div(mul(mul(new_m, sub(q, new_m)), z), mul(sub(add(p, m2), one), add(p, m2)))
    c1, d1, factor1 = advance(even, c, d)
    odd = div(
        mul(neg(mul(add(p, new_m), add(add(p, q), new_m))), z),
        mul(add(p, m2), add(add(p, m2), one)),
    )
    c2, d2, factor2 = advance(odd, c1, d1)
    new_h = mul(mul(h, factor1), factor2)
    more = gt(abs_(sub(factor2, one)), const(_eps(x), x))
    new, old = (new_m, c2, d2, new_h), (m, c, d, h)
    return [_and(running, more), *(_keep(running, v, o) for v, o in zip(new, old, strict=True))]


def _log_beta(a, b):
    return sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))


def _beta_finish(a, b, x, h):
    p, q, z, w = _beta_arguments(a, b, x)
    safe_z = select_n(gt(z, const(0, z)), full_like(1, z), z)
    safe_w = select_n(gt(w, const(0, w)), full_like(1, w), w)
    log_scale = sub(add(mul(p, log(safe_z)), mul(q, log(safe_w))), add(log(p), _log_beta(p, q)))
    value = mul(exp(log_scale), h)
    value = select_n(_beta_swapped(a, b, x), value, sub(const(1, value), value))
    # The limits where a parameter is 0 or infinite, then at the ends of [0, 1].
    to_zero = _or(eq(a, const(np.inf, a)), eq(b, const(0, b)))
    to_one = _or(eq(a, const(0, a)), eq(b, const(np.inf, b)))
    value = select_n(to_zero, value, full_like(0, x))
    value = select_n(to_one, value, full_like(1, x))
    value = select_n(eq(x, const(0, x)), value, full_like(0, x))
    value = select_n(eq(x, const(1, x)), value, full_like(1, x))
    return select_n(_beta_valid(a, b, x), full_like(np.nan, x), value)


def _betainc_emit(ctx, values, aval):
    carry, _ = _run(ctx, _beta_prologue, _beta_step, values, aval)
    avals = [aval] * 4
    return inline(ctx, lambda *xs: [_beta_finish(*xs)], [*values, carry[4]], avals)[0][0]


regularized_incomplete_beta_p = special_primitive(
    "regularized_incomplete_beta",
    3,
    lambda ctx, a, b, x: lower_elementwise(ctx, _betainc_emit, a, b, x),
)


def betainc(a, b, x):
    """Elementwise regularized incomplete beta function I_x(a, b)."""
    return regularized_incomplete_beta_p.bind(a, b, x)


def _betainc_parameter_jvp(t, ans, a, b, x):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_x_jvp(t, ans, a, b, x):
    one = const(1, x)
    log_density = sub(
        add(mul(sub(b, one), log(sub(one, x))), mul(sub(a, one), log(x))), _log_beta(a, b)
    )
    return mul(t, exp(log_density))


ad.defjvp(
    regularized_incomplete_beta_p, _betainc_parameter_jvp, _betainc_parameter_jvp, _betainc_x_jvp
)
