"""The regularized incomplete gamma and beta functions: igamma, igammac, igamma_grad_a,
random_gamma_grad and regularized_incomplete_beta (``betainc``).

The incomplete gamma functions compute XLA's (and so JAX's) algorithm operation for
operation, in :mod:`.incomplete_gamma`, so that results agree with JAX's bit for
bit; ``random_gamma_grad`` is, as in JAX, a function rather than a primitive. The
incomplete beta function is a continued fraction evaluated elementwise in a
``stablehlo.while`` loop emitted by the lowering (:func:`emit_loop`): the loop runs
until every element has converged, at most ``MAX_ITERATIONS`` times. The arithmetic
inside and around the loop is written with lax operations and lowered in place.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ShapedArray, dtypes
from lamina.lax.base.operands import (
    FLOAT,
    aval_of,
    broadcasting_shape,
    check_dtype,
    check_same_dtypes,
)
from lamina.lax.base.primitives import (
    add,
    bitwise_and,
    broadcast_in_dim,
    convert_element_type,
    div,
    eq,
    exp,
    gt,
    log,
    log1p,
    lt,
    mul,
    ne,
    neg,
    reduce_max,
    select_n,
    sub,
)
from lamina.lax.special.functions import (
    abs_,
    const,
    full_like,
    inline,
    lgamma,
    lower_elementwise,
    lower_traced,
    special_primitive,
)
from lamina.lax.special.incomplete_gamma import (
    gamma_sample_derivative,
    igamma_derivative,
    igamma_value,
    igammac_value,
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
FLOATING = (FLOAT,)


def _and(p, q):
    return bitwise_and(p, q)


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
# At a = 0 (x > 0) and a = inf (0 < x < inf), where XLA's algorithm can give NaN, P and
# Q take their limits instead.


def _limits_in_a(a, x, value, at_zero_a, at_infinite_a):
    zero_a = _and(eq(a, const(0, a)), gt(x, const(0, x)))
    finite_x = _and(gt(x, const(0, x)), lt(x, const(np.inf, x)))
    infinite_a = _and(eq(a, const(np.inf, a)), finite_x)
    value = select_n(zero_a, value, full_like(at_zero_a, x))
    return select_n(infinite_a, value, full_like(at_infinite_a, x))


def _igamma_lowering(ctx, a, x):
    return lower_traced(ctx, lambda a, x: _limits_in_a(a, x, igamma_value(a, x), 1, 0), a, x)


def _igammac_lowering(ctx, a, x):
    return lower_traced(ctx, lambda a, x: _limits_in_a(a, x, igammac_value(a, x), 0, 1), a, x)


igamma_p = special_primitive("igamma", 2, _igamma_lowering)
igammac_p = special_primitive("igammac", 2, _igammac_lowering)
igamma_grad_a_p = special_primitive(
    "igamma_grad_a", 2, lambda ctx, a, x: lower_traced(ctx, igamma_derivative, a, x)
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


def random_gamma_grad(*args):
    """Elementwise derivative of a Gamma(a, 1) sample ``x`` with respect to ``a`` at
    fixed CDF value (implicit reparameterisation: -dP/da / dP/dx); ``args`` are
    ``(a, x)`` (JAX's signature is ``*args`` too).

    Not a primitive, as in JAX: the series and continued fraction are traced as
    ``while_loop``s, so forward-mode derivatives and ``vmap`` go through them."""
    if len(args) != 2:
        raise TypeError(f"random_gamma_grad takes 2 arguments (a, x), got {len(args)}")
    a, x = args
    avals = [aval_of(a), aval_of(x)]
    for position, aval in enumerate(avals):
        check_dtype("random_gamma_grad", aval.dtype, FLOATING, position=position)
    check_same_dtypes("random_gamma_grad", avals)
    shape = broadcasting_shape("random_gamma_grad", [v.shape for v in avals])
    a, x = (_broadcast_operand(v, aval, shape) for v, aval in zip((a, x), avals, strict=True))
    dtype = np.dtype(avals[0].dtype)
    if dtype.itemsize < 4:  # float16 and bfloat16 are computed in float32, as igamma's
        widened = [convert_element_type(v, np.float32) for v in (a, x)]
        return convert_element_type(gamma_sample_derivative(*widened), dtype)
    return gamma_sample_derivative(a, x)


def _broadcast_operand(v, aval, shape):
    if tuple(aval.shape) == shape:
        return v
    kept = tuple(range(len(shape))) if aval.shape else ()
    return broadcast_in_dim(v, shape, kept)


def _density_exponent(a, x):
    """-x + (a - 1) log x - lgamma(a): the log of dP/dx, summed in JAX's order."""
    return sub(add(neg(x), mul(sub(a, const(1, a)), log(x))), lgamma(a))


ad.defjvp2(igamma_p, lambda t, ans, a, x: mul(t, igamma_grad_a(a, x)),
          lambda t, ans, a, x: mul(t, exp(_density_exponent(a, x))))  # fmt: skip
ad.defjvp2(igammac_p, lambda t, ans, a, x: neg(mul(t, igamma_grad_a(a, x))),
          lambda t, ans, a, x: neg(mul(t, exp(_density_exponent(a, x)))))  # fmt: skip


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
    # The density x**(a-1) (1-x)**(b-1) / B(a, b), summed in JAX's order.
    one = const(1, x)
    log_beta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    log_density = sub(add(mul(sub(b, one), log1p(neg(x))), mul(sub(a, one), log(x))), log_beta)
    return mul(exp(log_density), t)


ad.defjvp2(
    regularized_incomplete_beta_p, _betainc_parameter_jvp, _betainc_parameter_jvp, _betainc_x_jvp
)
