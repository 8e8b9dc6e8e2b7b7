"""The regularized incomplete gamma function and its derivatives, computed with the
same floating-point operations, in the same order, as XLA's and JAX's algorithm
(``xla/client/lib/math.cc``), so that the results agree bit for bit.

P(a, x) = exp(a log x - x - lgamma(a)) / a * (1 + sum_n x**n / ((a+1) ... (a+n)))
is summed as a power series while x <= 1 or x <= a; otherwise
Q(a, x) = 1 - P(a, x) = exp(a log x - x - lgamma(a)) * f, with f the continued fraction
whose convergents p_k / q_k follow
    p_k = z_k p_{k-1} - k y_k p_{k-2},   z_k = x - a + 1 + 2k,   y_k = k - a
(q_k likewise), evaluated with the derivatives of p_k and q_k in a alongside.

Every function here takes operands of one shape and floating dtype (the callers
broadcast and widen half precision first) and iterates elementwise in a
``while_loop``: an element stops changing once it has converged, the loop once every
element has.
"""

from __future__ import annotations

import enum

import numpy as np

from lamina.ir import dtypes
from lamina.lax.base.primitives import (
    add,
    bitwise_and,
    bitwise_not,
    bitwise_or,
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
    reduce_or,
    select,
    sub,
)
from lamina.lax.control_flow.loops import while_loop
from lamina.lax.special.functions import abs_, const, digamma, full_like, lgamma

__all__ = ["gamma_sample_derivative", "igamma_derivative", "igamma_value", "igammac_value"]

# The continued fraction gives up after this many steps (the series has no limit).
FRACTION_STEPS = 2000


class Want(enum.Enum):
    """What a series or continued fraction is evaluated for."""

    VALUE = "P(a, x) or Q(a, x)"
    A_DERIVATIVE = "dP/da"
    SAMPLE_DERIVATIVE = "dx/da at fixed P for a Gamma(a, 1) sample x"


def _any(mask):
    return reduce_or(mask, tuple(range(len(mask.shape))))


def _eps(x):
    return const(np.finfo(dtypes.dtype(x)).eps, x)


def _is_nan(x):
    return ne(x, x)


def _log_prefactor(a, x):
    """log(x**a exp(-x) / Gamma(a)), and where its exp underflows to zero."""
    log_ax = sub(sub(mul(a, log(x)), x), lgamma(a))
    threshold = neg(log(const(np.finfo(dtypes.dtype(x)).max, x)))
    return log_ax, lt(log_ax, threshold)


def _keep_converged(enabled, new, old):
    return [select(enabled, n, o) for n, o in zip(new, old, strict=True)]


# ------------------------------------------------------------------ power series


def _series(prefactor, x, a, enabled, want: Want):
    """P(a, x) (or a derivative, by ``want``) by the power series, where ``enabled``."""
    eps = _eps(x)

    def step(carry):
        running, r, term, total, dterm, dtotal = carry
        r_next = add(r, const(1, r))
        ratio = div(x, r_next)
        dterm_next = sub(mul(dterm, ratio), div(mul(term, x), mul(r_next, r_next)))
        dtotal_next = add(dtotal, dterm_next)
        term_next = mul(term, ratio)
        total_next = add(total, term_next)
        if want is Want.VALUE:
            more = gt(div(term_next, total_next), eps)
        else:
            more = gt(abs_(div(dterm_next, dtotal_next)), eps)
        new = (r_next, term_next, total_next, dterm_next, dtotal_next)
        return (bitwise_and(running, more), *_keep_converged(running, new, carry[1:]))

    one, zero = full_like(1, a), full_like(0, a)
    init = (enabled, a, one, one, zero, zero)
    _, _, _, total, _, dtotal = while_loop(lambda carry: _any(carry[0]), step, init)
    if want is Want.VALUE:
        return div(mul(total, prefactor), a)
    dlog_prefactor = sub(log(x), digamma(add(a, const(1, a))))
    if want is Want.A_DERIVATIVE:
        return div(mul(prefactor, add(mul(total, dlog_prefactor), dtotal)), a)
    return div(mul(neg(add(dtotal, mul(total, dlog_prefactor))), x), a)


# ------------------------------------------------------------------ continued fraction


def _next_convergent(km1, km2, dkm1, dkm2, z, yc, k):
    """The next numerator (or denominator) of the fraction and its derivative in a."""
    value = sub(mul(km1, z), mul(km2, yc))
    derivative = add(sub(sub(mul(dkm1, z), km1), mul(dkm2, yc)), mul(km2, k))
    return value, derivative


def _fraction(prefactor, x, a, enabled, want: Want):
    """Q(a, x) (or a derivative of -Q, by ``want``) by the continued fraction, where
    ``enabled``."""
    eps = _eps(x)
    big = const(1 / np.finfo(dtypes.dtype(x)).eps, x)

    def step(carry):
        (running, ans, y, z, k, pkm1, qkm1, pkm2, qkm2,
         dpkm2, dqkm2, dpkm1, dqkm1, dans) = carry  # fmt: skip
        k = add(k, const(1, k))
        y = add(y, const(1, y))
        z = add(z, const(2, z))
        yc = mul(y, k)
        pk, dpk = _next_convergent(pkm1, pkm2, dpkm1, dpkm2, z, yc, k)
        qk, dqk = _next_convergent(qkm1, qkm2, dqkm1, dqkm2, z, yc, k)
        usable = ne(qk, const(0, qk))
        ratio = div(pk, qk)
        change = select(usable, abs_(div(sub(ans, ratio), ratio)), full_like(1, ratio))
        ans_next = select(usable, ratio, ans)
        dans_next = select(usable, div(sub(dpk, mul(ans_next, dqk)), qk), dans)
        dchange = select(usable, abs_(sub(dans_next, dans)), full_like(1, dans))
        # Scale the four recurrences down together (only ratios matter) before the
        # convergents overflow.
        rescale = gt(abs_(pk), big)
        shifted = (pk, qk, pkm1, qkm1, dpkm1, dqkm1, dpk, dqk)
        pk, qk, pkm1, qkm1, dpkm1, dqkm1, dpk, dqk = (
            select(rescale, mul(v, eps), v) for v in shifted
        )
        more = gt(change if want is Want.VALUE else dchange, eps)
        new = (ans_next, y, z)
        new_recurrences = (pk, qk, pkm1, qkm1, dpkm1, dqkm1, dpk, dqk, dans_next)
        return (
            bitwise_and(running, more),
            *_keep_converged(running, new, carry[1:4]),
            k,
            *_keep_converged(running, new_recurrences, carry[5:]),
        )

    y = sub(const(1, a), a)
    z = add(add(x, y), const(1, x))
    pkm1 = add(x, const(1, x))
    qkm1 = mul(z, x)
    ans = div(pkm1, qkm1)
    zero = full_like(0, x)
    dqkm1 = neg(x)
    dans = div(sub(zero, mul(ans, dqkm1)), qkm1)
    init = (enabled, ans, y, z, const(0, x), pkm1, qkm1, full_like(1, x), x,
            zero, zero, zero, dqkm1, dans)  # fmt: skip

    def more_steps(carry):
        return bitwise_and(lt(carry[4], const(FRACTION_STEPS, x)), _any(carry[0]))

    final = while_loop(more_steps, step, init)
    ans, dans = final[1], final[-1]
    if want is Want.VALUE:
        return mul(ans, prefactor)
    dlog_prefactor = sub(log(x), digamma(a))
    if want is Want.A_DERIVATIVE:
        return mul(prefactor, add(mul(ans, dlog_prefactor), dans))
    return neg(mul(add(dans, mul(ans, dlog_prefactor)), x))


# ------------------------------------------------------------------ the four functions


def _domain_error(a, x):
    """NaN operands, x < 0, a < 0 and a = x = 0: where P and Q are NaN."""
    undefined = bitwise_and(eq(a, const(0, a)), eq(x, const(0, x)))
    negative = bitwise_or(lt(x, const(0, x)), lt(a, const(0, a)))
    return bitwise_or(bitwise_or(negative, undefined), bitwise_or(_is_nan(a), _is_nan(x)))


def igamma_value(a, x):
    """P(a, x): the fraction's complement where x >= 1 and x > a, else the series."""
    domain_error = _domain_error(a, x)
    x_is_zero, x_is_infinite = eq(x, const(0, x)), eq(x, const(np.inf, x))
    by_fraction = bitwise_and(ge(x, const(1, x)), gt(x, a))
    log_ax, underflow = _log_prefactor(a, x)
    prefactor = exp(log_ax)
    skipped = bitwise_or(bitwise_or(x_is_zero, domain_error), bitwise_or(underflow, x_is_infinite))
    enabled = bitwise_not(skipped)
    q = _fraction(prefactor, x, a, bitwise_and(enabled, by_fraction), Want.VALUE)
    p = _series(prefactor, x, a, bitwise_and(enabled, bitwise_not(by_fraction)), Want.VALUE)
    out = select(by_fraction, sub(const(1, a), q), p)
    out = select(x_is_zero, full_like(0, a), out)
    out = select(x_is_infinite, full_like(1, a), out)
    return select(domain_error, full_like(np.nan, a), out)


def igammac_value(a, x):
    """Q(a, x): the series' complement where x < 1 or x < a, else the fraction."""
    domain_error = _domain_error(a, x)
    a_is_zero, x_is_infinite = eq(a, const(0, a)), eq(x, const(np.inf, x))
    by_series = bitwise_or(lt(x, const(1, x)), lt(x, a))
    log_ax, underflow = _log_prefactor(a, x)
    skipped = bitwise_or(bitwise_or(domain_error, underflow), bitwise_or(x_is_infinite, a_is_zero))
    enabled = bitwise_not(skipped)
    prefactor = exp(log_ax)
    p = _series(prefactor, x, a, bitwise_and(enabled, by_series), Want.VALUE)
    q = _fraction(prefactor, x, a, bitwise_and(enabled, bitwise_not(by_series)), Want.VALUE)
    out = select(by_series, sub(const(1, a), p), q)
    out = select(bitwise_or(x_is_infinite, a_is_zero), full_like(0, a), out)
    return select(domain_error, full_like(np.nan, a), out)


def _derivative(a, x, want: Want):
    """dP/da, or the sample derivative: the fraction where x > 1 and x > a."""
    invalid = bitwise_or(bitwise_or(lt(x, const(0, x)), le(a, const(0, a))), _is_nan(a))
    invalid = bitwise_or(invalid, _is_nan(x))
    x_is_zero = eq(x, const(0, x))
    by_fraction = bitwise_and(gt(x, const(1, x)), gt(x, a))
    log_ax, underflow = _log_prefactor(a, x)
    prefactor = exp(log_ax)
    enabled = bitwise_not(bitwise_or(bitwise_or(x_is_zero, invalid), underflow))
    minus_q = _fraction(prefactor, x, a, bitwise_and(enabled, by_fraction), want)
    p = _series(prefactor, x, a, bitwise_and(enabled, bitwise_not(by_fraction)), want)
    out = select(by_fraction, neg(minus_q), p)
    out = select(x_is_zero, full_like(0, a), out)
    return select(invalid, full_like(np.nan, a), out)


def igamma_derivative(a, x):
    """dP(a, x)/da."""
    return _derivative(a, x, Want.A_DERIVATIVE)


def gamma_sample_derivative(a, x):
    """dx/da for a Gamma(a, 1) sample x at fixed P(a, x): -(dP/da) / (dP/dx)."""
    return _derivative(a, x, Want.SAMPLE_DERIVATIVE)
