"""Binary elementwise primitives: rem, pow, atan2, nextafter, clamp, complex; bitwise
and/or/xor/not, shifts, population_count, clz and mulhi.

As for the other lax operations, operands have one dtype (``pow`` aside: its exponent
may be an integer) and equal ranks or are scalars, with size-1 axes stretching.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, batching, reverse
from lamina.interpreters.mlir import chlo, hlo
from lamina.ir import ShapedArray, dtypes
from lamina.lax._common import (
    ANY,
    COMPLEX,
    FLOAT,
    INEXACT,
    INT,
    aval_of,
    check_dtype,
    check_same_dtypes,
    standard_primitive,
)
from lamina.lax.elementwise import (
    _to_result_shape,
    _unbroadcast,
    add,
    broadcasting_shape,
    div,
    eq,
    gt,
    log,
    lt,
    mul,
    neg,
    select_n,
    sub,
)
from lamina.lax.unary import abs, floor, imag, real, sign, square

__all__ = [
    "and_p",
    "atan2",
    "atan2_p",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "clamp",
    "clamp_p",
    "clz",
    "clz_p",
    "complex",
    "complex_p",
    "mulhi",
    "mulhi_p",
    "nextafter",
    "nextafter_p",
    "not_p",
    "or_p",
    "population_count",
    "population_count_p",
    "pow",
    "pow_p",
    "rem",
    "rem_p",
    "shift_left",
    "shift_left_p",
    "shift_right_arithmetic",
    "shift_right_arithmetic_p",
    "shift_right_logical",
    "shift_right_logical_p",
    "xor_p",
]

BOOL = ("bool", np.bool_)
F32 = ("float32", np.float32)
F64 = ("float64", np.float64)


def _binary(name, accepted, op, tip=None, dialect="hlo", out_dtype=None):
    """A binary primitive lowered to one op after broadcasting its operands."""

    def abstract_eval(x, y):
        shape = broadcasting_shape(name, (x.shape, y.shape))
        for i, a in enumerate((x, y)):
            check_dtype(name, a.dtype, accepted, position=i if accepted is not ANY else None)
        check_same_dtypes(name, (x, y), tip)
        dtype = x.dtype if out_dtype is None else out_dtype(x.dtype)
        return ShapedArray(shape, dtype, weak_type=x.weak_type and y.weak_type)

    def lowering(ctx, x, y):
        x, y = ctx.broadcast_to([x, y])
        return [getattr(chlo if dialect == "chlo" else hlo, op)(x, y)]

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defbroadcasting(prim)
    return prim


def _unary(name, accepted, op, out_dtype=None):
    def abstract_eval(x):
        check_dtype(name, x.dtype, accepted)
        if out_dtype is None:
            return x
        return ShapedArray(x.shape, out_dtype(x.dtype), weak_type=x.weak_type)

    def lowering(ctx, x):
        return [getattr(hlo, op)(x, results=[ctx.ir_type(ctx.avals_out[0])])]

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defvectorized(prim)
    return prim


def _const(value, like):
    return np.array(value, aval_of(like).dtype)


# ------------------------------------------------------------------ rem, atan2, nextafter

rem_p = _binary("rem", (INT, FLOAT), "remainder")
atan2_p = _binary("atan2", INEXACT, "atan2", "arctan2")
nextafter_p = _binary("nextafter", (FLOAT,), "next_after", "nextafter", dialect="chlo")


def rem(x, y):
    """Elementwise remainder of ``x / y`` rounded towards zero: the result has the sign
    of ``x`` (C's ``fmod``; Python's ``%`` takes the sign of ``y``)."""
    return rem_p.bind(x, y)


def atan2(x, y):
    """Elementwise arc tangent of ``x / y`` in the quadrant of the point ``(y, x)``."""
    return atan2_p.bind(x, y)


def nextafter(x1, x2):
    """Elementwise: the next representable value after ``x1`` in the direction of ``x2``."""
    return nextafter_p.bind(x1, x2)


def _trunc_quotient(x, y):
    q = div(x, y)
    return mul(sign(q), floor(abs(q)))


ad.defjvp(rem_p, lambda t, ans, x, y: _to_result_shape(t, ans),
          lambda t, ans, x, y: mul(neg(t), _trunc_quotient(x, y)))  # fmt: skip


def _atan2_denominator(x, y):
    return add(square(x), square(y))


ad.defjvp(atan2_p, lambda t, ans, x, y: mul(t, div(y, _atan2_denominator(x, y))),
          lambda t, ans, x, y: mul(t, div(neg(x), _atan2_denominator(x, y))))  # fmt: skip


# ------------------------------------------------------------------ pow


def _pow_abstract_eval(x, y):
    check_dtype("pow", x.dtype, INEXACT, position=0)
    check_dtype("pow", y.dtype, (INT, FLOAT, COMPLEX), position=1)
    y_inexact = dtypes.issubdtype(y.dtype, np.inexact)
    if y_inexact and x.dtype != y.dtype:
        raise TypeError(
            "the first argument to pow must have an inexact dtype (float or complex), and "
            "the second argument must have an inexact or integer dtype, and two inexact "
            f"dtypes must match, but got {x.dtype.name} and {y.dtype.name} respectively."
        )
    shape = broadcasting_shape("pow", (x.shape, y.shape))
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type and y.weak_type)


def _pow_lowering(ctx, x, y):
    x_aval, y_aval = ctx.avals_in
    y_aval_as_x = y_aval.update(dtype=x_aval.dtype)
    y = ctx.convert(y, y_aval, y_aval_as_x)
    x, y = ctx.replace(avals_in=[x_aval, y_aval_as_x]).broadcast_to([x, y])
    return [hlo.power(x, y)]


pow_p = standard_primitive("pow", _pow_abstract_eval, _pow_lowering)
batching.defbroadcasting(pow_p)


def pow(x, y):
    """Elementwise ``x ** y``: ``x`` inexact, ``y`` of ``x``'s dtype or an integer."""
    return pow_p.bind(x, y)


def _pow_jvp_x(t, ans, x, y):
    from lamina.lax.conversion import to_dtype

    x_dtype = dtypes.dtype(x)
    y_as_x = to_dtype(y, x_dtype) if dtypes.dtype(y) != x_dtype else y
    y_minus_one = y - 1 if type(y) is int else sub(y, _const(1, y))
    return mul(t, mul(y_as_x, pow(x, y_minus_one)))


def _pow_jvp_y(t, ans, x, y):
    # d(x**y)/dy = log(x) x**y, taken as 0 where x == 0 (the limit for y > 0).
    from lamina.lax.shapes import broadcast_in_dim

    ones = broadcast_in_dim(_const(1, x), aval_of(x).shape, ())
    safe_x = select_n(eq(x, _const(0, x)), x, ones)
    return mul(_to_result_shape(t, ans), mul(log(safe_x), ans))


ad.defjvp(pow_p, _pow_jvp_x, _pow_jvp_y)


# ------------------------------------------------------------------ clamp


def _clamp_abstract_eval(min, x, max):
    for name, a in (("min", min), ("max", max)):
        if a.shape and a.shape != x.shape:
            raise TypeError(
                f"clamp requires {name}.shape == operand.shape or {name}.shape == (), got "
                f"{name}.shape={a.shape}, operand.shape={x.shape}."
            )
    check_same_dtypes("clamp", (min, x, max))
    return ShapedArray(x.shape, x.dtype, weak_type=min.weak_type and x.weak_type and max.weak_type)


def _clamp_lowering(ctx, min, x, max):
    return [hlo.clamp(min, x, max)]


clamp_p = standard_primitive("clamp", _clamp_abstract_eval, _clamp_lowering)


def clamp(min, x, max):
    """Elementwise ``x`` limited to ``[min, max]``; ``min`` and ``max`` are scalars or
    of ``x``'s shape."""
    return clamp_p.bind(min, x, max)


def _clamp_batching(axis_data, vals, dims):
    """Every operand at its full batched shape (clamp stretches scalars only)."""
    from lamina.lax.shapes import broadcast_in_dim

    x, x_dim = vals[1], dims[1]
    x = batching.bdim_at_front(x, x_dim, axis_data.size)
    shape = batching.shape_of(x)
    out = []
    for v, d in zip(vals, dims, strict=True):
        if d is batching.not_mapped and not batching.shape_of(v):
            out.append(v)
            continue
        v = batching.bdim_at_front(v, d, axis_data.size)
        if batching.shape_of(v) != shape:  # one scalar bound per example
            v = broadcast_in_dim(v, shape, (0,))
        out.append(v)
    out[1] = x
    return clamp_p.bind(*out), 0


clamp_p.def_batching(_clamp_batching)


def _masked(t, mask, ans):
    """``t`` (stretched to the result's shape) where ``mask`` holds, else 0."""
    t = _to_result_shape(t, ans)
    zeros = ad.zeros_like_aval(ad.tangent_aval(aval_of(ans)))
    return select_n(mask, zeros, t)


def _and(a, b):
    return and_p.bind(a, b)


ad.defjvp(
    clamp_p,
    lambda t, ans, lo, x, hi: _masked(t, gt(lo, x), ans),
    lambda t, ans, lo, x, hi: _masked(t, _and(gt(x, lo), lt(x, hi)), ans),
    lambda t, ans, lo, x, hi: _masked(t, lt(hi, x), ans),
)


# ------------------------------------------------------------------ complex numbers


def _complex_of(dtype):
    return np.dtype(np.complex64 if dtype == np.float32 else np.complex128)


complex_p = _binary("complex", (F32, F64), "complex", out_dtype=_complex_of)


def complex(x, y):
    """Elementwise ``x + 1j * y`` from float32 or float64 parts."""
    return complex_p.bind(x, y)


ad.deflinear(complex_p)


def _complex_transpose(ct, x, y):
    lx, ly = reverse.is_undefined_primal(x), reverse.is_undefined_primal(y)
    return [_unbroadcast(real(ct), x.aval) if lx else None,
            _unbroadcast(neg(imag(ct)), y.aval) if ly else None]  # fmt: skip


complex_p.def_transpose(_complex_transpose)


# ------------------------------------------------------------------ bits

and_p = _binary("and", (INT, BOOL), "and_")
or_p = _binary("or", (INT, BOOL), "or_")
xor_p = _binary("xor", (INT, BOOL), "xor")
not_p = _unary("not", (INT, BOOL), "not_")
shift_left_p = _binary("shift_left", (INT,), "shift_left", "left_shift")
shift_right_arithmetic_p = _binary(
    "shift_right_arithmetic", (INT,), "shift_right_arithmetic", "right_shift"
)
shift_right_logical_p = _binary("shift_right_logical", (INT,), "shift_right_logical", "right_shift")
population_count_p = _unary("population_count", (INT,), "popcnt")
clz_p = _unary("clz", (INT,), "count_leading_zeros")
mulhi_p = _binary("mulhi", (INT,), "mulhi", dialect="chlo")
for _p in (and_p, or_p, xor_p, not_p, shift_left_p, shift_right_arithmetic_p,
           shift_right_logical_p, population_count_p, clz_p, mulhi_p):  # fmt: skip
    ad.zero_jvp(_p)  # integer and boolean results


def bitwise_and(x, y):
    """Elementwise bitwise AND (logical AND of booleans)."""
    return and_p.bind(x, y)


def bitwise_or(x, y):
    """Elementwise bitwise OR (logical OR of booleans)."""
    return or_p.bind(x, y)


def bitwise_xor(x, y):
    """Elementwise bitwise exclusive OR (logical XOR of booleans)."""
    return xor_p.bind(x, y)


def bitwise_not(x):
    """Elementwise bitwise NOT (logical NOT of booleans)."""
    return not_p.bind(x)


def shift_left(x, y):
    """Elementwise ``x << y``; shifts of the bit width or more give 0."""
    return shift_left_p.bind(x, y)


def shift_right_arithmetic(x, y):
    """Elementwise ``x >> y`` filling with the sign bit."""
    return shift_right_arithmetic_p.bind(x, y)


def shift_right_logical(x, y):
    """Elementwise ``x >> y`` filling with zeros."""
    return shift_right_logical_p.bind(x, y)


def population_count(x):
    """Elementwise number of set bits."""
    return population_count_p.bind(x)


def clz(x):
    """Elementwise number of leading zero bits."""
    return clz_p.bind(x)


def mulhi(x, y, /):
    """Elementwise high half of the double-width product ``x * y``."""
    return mulhi_p.bind(x, y)
