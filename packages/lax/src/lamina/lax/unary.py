"""Unary elementwise primitives: abs and sign, rounding, is_finite, trigonometric and
hyperbolic functions, exp2/expm1/log1p/logistic, rsqrt/cbrt, square, integer_pow and
reciprocal, copy; the complex parts real, imag and conj.

Each is defined with all its rules beside it: abstract evaluation with JAX's dtype
checks, lowering (``stablehlo``, or ``chlo`` where JAX uses it), JVP, batching (each
element alone, so the batch dimension stays where it is) and, for ``copy``, transpose.
"""

from __future__ import annotations

import builtins
import enum
import math
import operator

import numpy as np

from lamina.interpreters import ad, batching
from lamina.interpreters.mlir import chlo, hlo
from lamina.ir import ShapedArray, dtypes
from lamina.lax._common import COMPLEX, FLOAT, INEXACT, INT, NUMERIC, check_dtype
from lamina.lax._common import standard_primitive as _standard_primitive
from lamina.lax._complex_parts import conj, conj_p, imag, imag_p, real, real_p
from lamina.lax.elementwise import (
    accuracy_unary,
    add,
    check_accuracy,
    def_accuracy_params,
    div,
    eq,
    ge,
    mul,
    neg,
    select_n,
    sub,
    with_accuracy,
)

__all__ = [
    "RoundingMethod",
    "abs",
    "abs_p",
    "acos",
    "acos_p",
    "acosh",
    "acosh_p",
    "asin",
    "asin_p",
    "asinh",
    "asinh_p",
    "atan",
    "atan_p",
    "atanh",
    "atanh_p",
    "cbrt",
    "cbrt_p",
    "ceil",
    "ceil_p",
    "conj",
    "conj_p",
    "copy_p",
    "cosh",
    "cosh_p",
    "exp2",
    "exp2_p",
    "expm1",
    "expm1_p",
    "floor",
    "floor_p",
    "imag",
    "imag_p",
    "integer_pow",
    "integer_pow_p",
    "is_finite",
    "is_finite_p",
    "log1p",
    "log1p_p",
    "logistic",
    "logistic_p",
    "real",
    "real_p",
    "reciprocal",
    "round",
    "round_p",
    "rsqrt",
    "rsqrt_p",
    "sign",
    "sign_p",
    "sinh",
    "sinh_p",
    "square",
    "square_p",
    "tan",
    "tan_p",
]

SIGNED = ("signedinteger", np.signedinteger)


def _const(value, like):
    """``value`` as a scalar of ``like``'s dtype (a literal when traced)."""
    return np.array(value, dtypes.dtype(like))


def _unary(name: str, accepted, op: str, dialect: str = "hlo", out_dtype=None):
    """A unary primitive lowered to one op (``out_dtype(dtype)`` gives the result
    dtype when it is not the operand's)."""

    def abstract_eval(x):
        check_dtype(name, x.dtype, accepted)
        if out_dtype is None:
            return x
        return ShapedArray(x.shape, out_dtype(x.dtype), weak_type=x.weak_type)

    def lowering(ctx, x):
        if dialect == "chlo":
            return [getattr(chlo, op)(x)]
        return [getattr(hlo, op)(x, results=[ctx.ir_type(ctx.avals_out[0])])]

    prim = _standard_primitive(name, abstract_eval, lowering)
    batching.defvectorized(prim)
    return prim


def _real_dtype(dtype):
    return np.finfo(dtype).dtype if dtypes.issubdtype(dtype, np.complexfloating) else dtype


# ------------------------------------------------------------------ abs, sign, rounding

abs_p = _unary("abs", (FLOAT, COMPLEX, SIGNED), "abs", out_dtype=_real_dtype)
sign_p = _unary("sign", NUMERIC, "sign")
floor_p = _unary("floor", (FLOAT,), "floor")
ceil_p = _unary("ceil", (FLOAT,), "ceil")
is_finite_p = _unary("is_finite", (FLOAT,), "is_finite", out_dtype=lambda d: dtypes.bool_)


def _sign_lowering(ctx, x):
    aval = ctx.avals_in[0]
    if not dtypes.issubdtype(aval.dtype, np.unsignedinteger):
        return [hlo.sign(x)]
    # stablehlo.sign takes no unsigned integers: 0 stays 0, everything else is 1.
    zero, one = (ctx.broadcast_in_dim(ctx.constant(v, aval.update(shape=())), aval, ())
                 for v in (0, 1))  # fmt: skip
    direction = hlo.ComparisonDirectionAttr.get("EQ")
    is_zero = hlo.compare(x, zero, direction, compare_type=hlo.ComparisonTypeAttr.get("UNSIGNED"))
    return [hlo.select(is_zero, zero, one)]


sign_p.def_lowering(_sign_lowering)


class RoundingMethod(enum.IntEnum):
    """How ``round`` breaks ties: away from zero (``round(2.5) == 3``) or to the nearest
    even integer (``round(2.5) == 2``)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _round_abstract_eval(x, *, rounding_method):
    check_dtype("round", x.dtype, (FLOAT,))
    return x


def _round_lowering(ctx, x, *, rounding_method):
    if rounding_method == RoundingMethod.AWAY_FROM_ZERO:
        return [hlo.round_nearest_afz(x)]
    return [hlo.round_nearest_even(x)]


round_p = _standard_primitive("round", _round_abstract_eval, _round_lowering)
batching.defvectorized(round_p)
round_p.def_pp_params(
    lambda params: params,
    lambda params, in_avals, out_avals: {
        "rounding_method": RoundingMethod(params["rounding_method"])
    },
)


def abs(x):
    """Elementwise absolute value; of a complex number, its magnitude (a real result)."""
    return abs_p.bind(x)


def sign(x):
    """Elementwise sign: -1, 0 or 1 (``x / abs(x)`` for complex ``x``)."""
    return sign_p.bind(x)


def floor(x):
    """Elementwise floor."""
    return floor_p.bind(x)


def ceil(x):
    """Elementwise ceiling."""
    return ceil_p.bind(x)


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """Elementwise rounding to the nearest integer, ties broken by ``rounding_method``."""
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def is_finite(x):
    """Elementwise: true where ``x`` is neither infinite nor NaN."""
    return is_finite_p.bind(x)


def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    ans = abs_p.bind(x)
    if type(t) is ad.Zero:
        return ans, ad.Zero(ad.tangent_aval(ans.aval))
    if dtypes.issubdtype(dtypes.dtype(x), np.complexfloating):
        # d|x| = Re(conj(x) dx) / |x|; at x == 0 the numerator is 0, so divide by 1.
        from lamina.lax.conversion import convert_element_type

        safe = add(ans, convert_element_type(eq(ans, _const(0, ans)), dtypes.dtype(ans)))
        return ans, div(real(mul(conj(x), t)), safe)
    return ans, select_n(ge(x, _const(0, x)), neg(t), t)


abs_p.def_jvp(_abs_jvp)
for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p):
    ad.zero_jvp(_p)  # piecewise constant


# ------------------------------------------------------------------ transcendental

expm1_p = accuracy_unary("expm1", INEXACT, "exponential_minus_one")
log1p_p = accuracy_unary("log1p", INEXACT, "log_plus_one")
logistic_p = accuracy_unary("logistic", INEXACT, "logistic")
rsqrt_p = accuracy_unary("rsqrt", INEXACT, "rsqrt")
cbrt_p = accuracy_unary("cbrt", (FLOAT,), "cbrt")
tan_p = accuracy_unary("tan", INEXACT, "tan")
asin_p = _unary("asin", INEXACT, "asin", "chlo")
acos_p = _unary("acos", INEXACT, "acos", "chlo")
atan_p = _unary("atan", INEXACT, "atan", "chlo")
sinh_p = _unary("sinh", INEXACT, "sinh", "chlo")
cosh_p = _unary("cosh", INEXACT, "cosh", "chlo")
asinh_p = _unary("asinh", INEXACT, "asinh", "chlo")
acosh_p = _unary("acosh", INEXACT, "acosh", "chlo")
atanh_p = _unary("atanh", INEXACT, "atanh", "chlo")


def _exp2_abstract_eval(x, accuracy=None):
    check_dtype("exp2", x.dtype, INEXACT)
    return x


def _exp2_lowering(ctx, x, accuracy=None):
    aval = ctx.avals_in[0]
    log2 = ctx.broadcast_in_dim(ctx.constant(math.log(2), aval.update(shape=())), aval, ())
    return [with_accuracy(hlo.exponential(hlo.multiply(log2, x)), accuracy)]


exp2_p = _standard_primitive("exp2", _exp2_abstract_eval, _exp2_lowering)
batching.defvectorized(exp2_p)
def_accuracy_params(exp2_p)


def exp2(x, *, accuracy=None):
    """Elementwise base-2 exponential: 2**x."""
    return exp2_p.bind(x, accuracy=check_accuracy(accuracy))


def expm1(x, *, accuracy=None):
    """Elementwise e**x - 1, accurate near zero."""
    return expm1_p.bind(x, accuracy=check_accuracy(accuracy))


def log1p(x, *, accuracy=None):
    """Elementwise log(1 + x), accurate near zero."""
    return log1p_p.bind(x, accuracy=check_accuracy(accuracy))


def logistic(x, *, accuracy=None):
    """Elementwise logistic sigmoid: 1 / (1 + e**-x)."""
    return logistic_p.bind(x, accuracy=check_accuracy(accuracy))


def rsqrt(x, *, accuracy=None):
    """Elementwise reciprocal square root: 1 / sqrt(x)."""
    return rsqrt_p.bind(x, accuracy=check_accuracy(accuracy))


def cbrt(x, *, accuracy=None):
    """Elementwise real cube root (negative for negative x)."""
    return cbrt_p.bind(x, accuracy=check_accuracy(accuracy))


def tan(x, *, accuracy=None):
    """Elementwise tangent."""
    return tan_p.bind(x, accuracy=check_accuracy(accuracy))


def asin(x):
    """Elementwise arc sine."""
    return asin_p.bind(x)


def acos(x):
    """Elementwise arc cosine."""
    return acos_p.bind(x)


def atan(x):
    """Elementwise arc tangent."""
    return atan_p.bind(x)


def sinh(x):
    """Elementwise hyperbolic sine."""
    return sinh_p.bind(x)


def cosh(x):
    """Elementwise hyperbolic cosine."""
    return cosh_p.bind(x)


def asinh(x):
    """Elementwise inverse hyperbolic sine."""
    return asinh_p.bind(x)


def acosh(x):
    """Elementwise inverse hyperbolic cosine."""
    return acosh_p.bind(x)


def atanh(x):
    """Elementwise inverse hyperbolic tangent."""
    return atanh_p.bind(x)


def _one(x):
    return _const(1, x)


def _cbrt_slope(ans):
    return mul(_const(1 / 3, ans), integer_pow(ans, -2))


def _one_minus_square(x):
    return sub(_const(1, x), square(x))


# JVPs: ``t`` is the operand's tangent, ``ans`` the primal result.
ad.defjvp(exp2_p, lambda t, ans, x, accuracy=None: mul(t, mul(_const(math.log(2), ans), ans)))
ad.defjvp(expm1_p, lambda t, ans, x, accuracy=None: mul(t, add(ans, _const(1, ans))))
ad.defjvp(log1p_p, lambda t, ans, x, accuracy=None: div(t, add(x, _const(1, x))))
ad.defjvp(logistic_p,
          lambda t, ans, x, accuracy=None: mul(t, mul(ans, sub(_const(1, ans), ans))))  # fmt: skip
ad.defjvp(rsqrt_p, lambda t, ans, x, accuracy=None: mul(t, mul(_const(-0.5, ans), div(ans, x))))
ad.defjvp(cbrt_p, lambda t, ans, x, accuracy=None: mul(t, _cbrt_slope(ans)))
ad.defjvp(tan_p, lambda t, ans, x, accuracy=None: mul(t, add(_const(1, ans), square(ans))))
ad.defjvp(asin_p, lambda t, ans, x: mul(t, rsqrt(_one_minus_square(x))))
ad.defjvp(acos_p, lambda t, ans, x: neg(mul(t, rsqrt(_one_minus_square(x)))))
ad.defjvp(atan_p, lambda t, ans, x: div(t, add(_const(1, x), square(x))))
ad.defjvp(sinh_p, lambda t, ans, x: mul(t, cosh(x)))
ad.defjvp(cosh_p, lambda t, ans, x: mul(t, sinh(x)))
ad.defjvp(asinh_p, lambda t, ans, x: mul(t, rsqrt(add(square(x), _const(1, x)))))
ad.defjvp(acosh_p, lambda t, ans, x: mul(t, rsqrt(mul(sub(x, _one(x)), add(x, _one(x))))))
ad.defjvp(atanh_p, lambda t, ans, x: div(t, _one_minus_square(x)))


# ------------------------------------------------------------------ powers

square_p = _unary("square", NUMERIC, "square", "chlo")
# chlo.square rejects integers: multiply them instead.
square_p.def_lowering(
    lambda ctx, x: [
        hlo.multiply(x, x)
        if dtypes.issubdtype(ctx.avals_in[0].dtype, np.integer)
        else chlo.square(x)
    ]
)


def square(x):
    """Elementwise x * x."""
    return square_p.bind(x)


ad.defjvp(square_p, lambda t, ans, x: mul(t, mul(_const(2, x), x)))


def _integer_pow_abstract_eval(x, *, y):
    check_dtype("integer_pow", x.dtype, NUMERIC)
    if y < 0 and dtypes.issubdtype(x.dtype, INT[1]):
        raise TypeError(
            f"Integers cannot be raised to negative powers, got integer_pow({x.str_short()}, {y})"
        )
    return x


def integer_pow_hlo(ctx, x, aval, y: int):
    """``x ** y`` by repeated squaring (``1 / x ** -y`` for negative ``y``)."""
    if y == 0:
        return ctx.broadcast_in_dim(ctx.constant(1, aval.update(shape=())), aval, ())
    acc, base, n = None, x, builtins.abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else hlo.multiply(acc, base)
        n >>= 1
        if n:
            base = hlo.multiply(base, base)
    if y < 0:
        one = ctx.broadcast_in_dim(ctx.constant(1, aval.update(shape=())), aval, ())
        acc = hlo.divide(one, acc)
    return acc


def _integer_pow_lowering(ctx, x, *, y):
    return [integer_pow_hlo(ctx, x, ctx.avals_in[0], y)]


integer_pow_p = _standard_primitive(
    "integer_pow", _integer_pow_abstract_eval, _integer_pow_lowering
)
batching.defvectorized(integer_pow_p)


def _integer_pow_jvp(t, ans, x, *, y):
    if y == 0:
        return mul(t, _const(0, ans))
    power = x if y == 2 else integer_pow(x, y - 1)  # as JAX: no integer_pow[y=1]
    return mul(t, mul(_const(y, x), power))


ad.defjvp(integer_pow_p, _integer_pow_jvp)


def integer_pow(x, y):
    """Elementwise ``x ** y`` for a Python integer ``y`` (negative only for inexact x)."""
    return integer_pow_p.bind(x, y=operator.index(y))


def reciprocal(x):
    """Elementwise 1 / x."""
    return integer_pow(x, -1)


# ------------------------------------------------------------------ copy


copy_p = _standard_primitive("copy", lambda x: x, lambda ctx, x: [x])
batching.defvectorized(copy_p)
ad.deflinear(copy_p)
copy_p.def_transpose(lambda ct, x: [copy_p.bind(ct)])
