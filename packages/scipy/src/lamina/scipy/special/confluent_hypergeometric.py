"""The confluent hypergeometric function ``hyp1f1`` for real arguments: its Taylor
series for |x| < 100, its asymptotic expansion beyond (Pearson, Olver and Porter 2014,
methods 3.2 and 3.8), with series for the derivatives in a and b."""

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.interpreters import custom_jvp, jit
from lamina.ir import dtypes
from lamina.scipy.special.elementwise_loops import elementwise_while
from lamina.scipy.special.gamma_function import gamma

__all__ = ["hyp1f1"]

_MAX_TERMS = 250


def _sum_terms(first, ratio, weight, init_sum, x, active):
    """Sums ``weight(k) * term_k`` from ``init_sum``, with ``term_1 = first`` and
    ``term_{k+1} = term_k * ratio(k)``, until a term is below eps of the sum."""
    eps = float(dtypes.finfo(x.dtype).eps)

    def cond(s):
        total, k, term = s
        return active & (k < _MAX_TERMS) & (lax.abs(term) / lax.abs(total) > eps)

    def body(s):
        total, k, term = s
        return total + weight(k, term), k + 1.0, term * ratio(k)

    return elementwise_while(cond, body, (init_sum, lax.full_like(x, 1.0), first))[0]


def _series(a, b, x, active):
    return _sum_terms(
        a / b * x,
        lambda k: (a + k) / (b + k) * x / (k + 1.0),
        lambda k, term: term,
        lax.full_like(x, 1.0),
        x,
        active,
    )


def _asymptotic(a, b, x, active):
    total = _sum_terms(
        (b - a) * (1.0 - a) / x,
        lambda k: (b - a + k) * (1.0 - a + k) / (k + 1.0) / x,
        lambda k, term: term,
        lax.full_like(x, 1.0),
        x,
        active,
    )
    return gamma(b) / gamma(a) * lax.exp(x) * lax.pow(x, a - b) * total


@jit
def _hyp1f1_values(a, b, x):
    a, b, x = jnp.broadcast_arrays(a, b, x)
    near = lax.abs(x) < 100
    result = lax.select(near, _series(a, b, x, near), _asymptotic(a, b, x, ~near))
    index = (
        (a == 0).astype(np.int32)
        + ((a == b) & (a != 0)).astype(np.int32) * 2
        + ((b == 0) & (a != 0)).astype(np.int32) * 3
    )
    return lax.select_n(index, result, lax.full_like(x, 1.0), lax.exp(x), lax.full_like(x, np.inf))


def _d_parameter(a, b, x, which):
    """d/da (which = 0) or d/db (which = 1) of the Taylor series, term by term."""
    a, b, x = jnp.broadcast_arrays(a, b, x)
    if which == 0:
        weight = lambda k, term: term * (lax.digamma(a + k) - lax.digamma(a))  # noqa: E731
    else:
        weight = lambda k, term: term * (lax.digamma(b) - lax.digamma(b + k))  # noqa: E731
    return _sum_terms(
        a / b * x,
        lambda k: (a + k) / (b + k) * x / (k + 1.0),
        weight,
        lax.full_like(x, 0.0),
        x,
        jnp.ones(x.shape, bool),
    )


@custom_jvp
def _hyp1f1(a, b, x):
    return _hyp1f1_values(a, b, x)


_hyp1f1.defjvps(
    lambda a_dot, ans, a, b, x: _d_parameter(a, b, x, 0) * a_dot,
    lambda b_dot, ans, a, b, x: _d_parameter(a, b, x, 1) * b_dot,
    lambda x_dot, ans, a, b, x: a / b * _hyp1f1(a + 1.0, b + 1.0, x) * x_dot,
)


def hyp1f1(a, b, x):
    """The confluent hypergeometric function 1F1(a; b; x) for real arguments
    (1 at a = b = 0, where SciPy differs); large values lose accuracy in float32."""
    a, b, x = jnp.promote_args_inexact("hyp1f1", a, b, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    return _hyp1f1(a, b, x)
