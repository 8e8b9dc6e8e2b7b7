"""The Gauss hypergeometric function ``hyp2f1`` for real arguments (Pearson, Olver and
Porter 2014): the Taylor series, the terminating sum when a or b is a non-positive
integer, Euler's transformation for c - a - b <= -1, and near x = 1 with integer
c - a - b the digamma form (Abramowitz and Stegun 15.3.10-12); series for the
derivatives in a, b and c."""

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import custom_jvp, jit
from lamina.ir import dtypes
from lamina.scipy.special.elementwise_loops import elementwise_while
from lamina.scipy.special.gamma_function import gamma

__all__ = ["hyp2f1"]

_MAX_TERMS = 250


def _round(v):
    return lax.round(v, lax.RoundingMethod.TO_NEAREST_EVEN)


def _near_integer(v, eps):
    return lax.abs(v - _round(v)) < eps


def _terminating(a, b, c, x, eps, active):
    """The finite sum when a (or b, swapped in) is a non-positive integer, summed where
    ``active`` (elsewhere |a| may be huge)."""
    keep_b = (c % 1 == 0) & (c <= 0) & (c > b)
    swap = (b < a) & _near_integer(b, eps) & ~keep_b
    a, b = lax.select(swap, b, a), lax.select(swap, a, b)
    a = lax.abs(a)
    one = lax.full_like(x, 1.0)

    def body(s):
        i, total, term = s
        term = term * (-(a - i + 1.0) / (c + i - 1.0) * (b + i - 1.0) / i * x)
        return i + 1.0, total + term, term

    return elementwise_while(lambda s: active & (s[0] < a + 1.0), body, (one, one, one))[1]


def _taylor(a, b, c, x, active):
    eps = float(dtypes.finfo(x.dtype).eps)

    def cond(s):
        total, k, term = s
        return active & (k < _MAX_TERMS) & (lax.abs(term) > eps * lax.abs(total))

    def body(s):
        total, k, term = s
        total = total + term
        term = term * ((a + k - 1.0) * (b + k - 1.0) / (c + k - 1.0) / k * x)
        return total, k + 1.0, term

    init = (lax.full_like(x, 0.0), lax.full_like(x, 1.0), lax.full_like(x, 1.0))
    return elementwise_while(cond, body, init)[0]


def _digamma_form(a, b, c, x, active):
    """2F1 near x = 1 when c - a - b is (near) an integer m: the series in 1 - x with
    digamma coefficients, plus the finite sum of |m| terms."""
    eps = float(dtypes.finfo(x.dtype).eps)
    psi = lax.digamma
    d = c - a - b
    s = 1.0 - x
    rd = _round(d)
    up = rd >= 0
    zero = lax.full_like(d, 0.0)
    e = lax.select(up, d, -d)
    d1 = lax.select(up, d, zero)
    d2 = lax.select(up, zero, d)
    ard = lax.select(up, rd, -rd).astype(np.int32)
    log_s = lax.log(s)

    y = psi(lax.full_like(x, 1.0)) + psi(1.0 + e) - psi(a + d1) - psi(b + d1) - log_s
    y = y / gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def cond(st):
        _, q, t, y = st
        return active & (t < _MAX_TERMS) & (lax.abs(q) >= eps * lax.abs(y))

    def body(st):
        p, q, t, y = st
        r = psi(1.0 + t) + psi(1.0 + t + e) - psi(a + t + d1) - psi(b + t + d1) - log_s
        q = p * r
        y = y + q
        p = p * (s * (a + t + d1) / (t + 1.0))
        p = p * ((b + t + d1) / (t + 1.0 + e))
        return p, q, t + 1.0, y

    _, _, _, y = elementwise_while(cond, body, (p, y, lax.full_like(x, 1.0), y))

    def finite_body(st):
        i, p, t, y1 = st
        r = 1.0 - e + t
        p = p * (s * (a + t + d2) * (b + t + d2) / r)
        t = t + 1.0
        p = p / t
        return i + 1, p, t, y1 + p

    one = lax.full_like(x, 1.0)
    count = jnp.ones(x.shape, np.int32)
    y1 = elementwise_while(
        lambda st: active & (st[0] < ard), finite_body, (count, one, lax.full_like(x, 0.0), one)
    )[3]
    gc = gamma(c)
    y1 = y1 * (gamma(e) * gc / (gamma(a + d1) * gamma(b + d1)))
    y_sum = y * (gc / (gamma(a + d2) * gamma(b + d2)))
    y_sum = lax.select((ard & 1) != 0, -y_sum, y_sum)
    q = lax.pow(s, rd)
    summed = lax.select(rd > 0, y_sum * q + y1, y_sum + y1 * q)
    return lax.select(rd == 0, y * gc / (gamma(a) * gamma(b)), summed)


def _terminating_or_series(a, b, c, x):
    eps = float(dtypes.finfo(x.dtype).eps) * 50
    d = c - a - b
    neg_int = ((a <= 0) & _near_integer(a, eps)) | ((b <= 0) & _near_integer(b, eps))
    use_digamma = (x > 0.9) & ~neg_int & _near_integer(d, eps)
    use_taylor = ~use_digamma & ~neg_int
    index = use_digamma.astype(np.int32) + neg_int.astype(np.int32) * 2
    return lax.select_n(
        index,
        _taylor(a, b, c, x, use_taylor),
        _digamma_form(a, b, c, x, use_digamma),
        _terminating(a, b, c, x, eps, neg_int),
    )


@jit
def _hyp2f1_values(a, b, c, x):
    a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
    eps = float(dtypes.finfo(x.dtype).eps) * 50
    d = c - a - b
    s = 1.0 - x
    ca, cb = c - a, c - b
    d_integer = ~(lax.abs(d - _round(d)) >= eps)
    cases = [  # (condition, branch index), the first that holds chosen
        ((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 0),
        ((c == 0) | ((c < 0) & (c % 1 == 0)), 1),
        ((d <= -1) & ~(~d_integer & (s < 0)), 2),
        ((d <= 0) & (x == 1), 1),
        ((x < 1) & (b == c), 3),
        ((x < 1) & (a == c), 4),
        (x > 1, 1),
        (x == 1, 5),
    ]
    index = jnp.full(x.shape, 6, np.int32)
    for cond, i in reversed(cases):
        index = lax.select(cond, jnp.full(x.shape, i, np.int32), index)
    return lax.select_n(
        index,
        lax.full_like(x, 1.0),
        lax.full_like(x, np.inf),
        lax.pow(s, d) * _terminating_or_series(ca, cb, c, x),
        lax.pow(s, -a),
        lax.pow(s, -b),
        gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),
        _terminating_or_series(a, b, c, x),
    )


def _d_parameter(a, b, c, x, which):
    """The Taylor series differentiated term by term in a, b or c."""
    a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
    eps = float(dtypes.finfo(x.dtype).eps)
    psi = lax.digamma
    if which == "a":
        weight = lambda k: psi(a + k) - psi(a)  # noqa: E731
    elif which == "b":
        weight = lambda k: psi(b + k) - psi(b)  # noqa: E731
    else:
        weight = lambda k: psi(c) - psi(c + k)  # noqa: E731

    def cond(s):
        total, k, term = s
        return (k < _MAX_TERMS) & (lax.abs(term) / lax.abs(total) > eps)

    def body(s):
        total, k, term = s
        total = total + term * weight(k)
        term = term * ((a + k) * (b + k) / (c + k) / (k + 1.0) * x)
        return total, k + 1.0, term

    init = (lax.full_like(x, 0.0), lax.full_like(x, 1.0), a * b / c * x)
    return elementwise_while(cond, body, init)[0]


@custom_jvp
def _hyp2f1(a, b, c, x):
    return _hyp2f1_values(a, b, c, x)


_hyp2f1.defjvps(
    lambda a_dot, ans, a, b, c, x: _d_parameter(a, b, c, x, "a") * a_dot,
    lambda b_dot, ans, a, b, c, x: _d_parameter(a, b, c, x, "b") * b_dot,
    lambda c_dot, ans, a, b, c, x: _d_parameter(a, b, c, x, "c") * c_dot,
    lambda x_dot, ans, a, b, c, x: a * b / c * _hyp2f1(a + 1.0, b + 1.0, c + 1.0, x) * x_dot,
)


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) for real arguments; large
    values lose accuracy in float32."""
    a, b, c, x = jnp.promote_args_inexact("hyp2f1", a, b, c, x)
    return _hyp2f1(a, b, c, x)
