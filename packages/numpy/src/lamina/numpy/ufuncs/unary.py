"""Unary elementwise functions of lamina.numpy: exponentials and logarithms,
trigonometric and hyperbolic functions, roots, rounding, signs, and the real/imaginary
parts of complex numbers. Transcendental functions take integers and bools to the
default float (``jnp.sin(1)`` is a weakly typed float32)."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    check_arraylike,
    promote_args,
    promote_args_inexact,
    promote_dtypes_inexact,
    promote_dtypes_numeric,
    to_array,
)
from lamina.numpy.ufuncs.operands import (
    const_like,
    dtype_of,
    full_like,
    is_bool,
    is_complex,
    is_integer,
    is_unsigned,
    jitted,
    select,
)

__all__ = [
    "abs",
    "absolute",
    "acos",
    "acosh",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "cbrt",
    "ceil",
    "conj",
    "conjugate",
    "cos",
    "cosh",
    "deg2rad",
    "degrees",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "floor",
    "imag",
    "log",
    "log1p",
    "log2",
    "log10",
    "positive",
    "rad2deg",
    "radians",
    "real",
    "reciprocal",
    "rint",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "trunc",
]  # fmt: skip


def _inexact_unary(name: str, lax_fun, what: str):
    """``jnp.<name>``: ``lax_fun`` after promotion to an inexact dtype."""

    def fun(x, /):
        (x,) = promote_args_inexact(name, x)
        return lax_fun(x)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"Elementwise {what}, in an inexact dtype (integers become floats)."
    return jitted(fun)


exp = _inexact_unary("exp", lax.exp, "exponential e**x")
expm1 = _inexact_unary("expm1", lax.expm1, "exp(x) - 1, accurate near 0")
exp2 = _inexact_unary("exp2", lax.exp2, "2**x")
log = _inexact_unary("log", lax.log, "natural logarithm")
log1p = _inexact_unary("log1p", lax.log1p, "log(1 + x), accurate near 0")
sin = _inexact_unary("sin", lax.sin, "sine")
cos = _inexact_unary("cos", lax.cos, "cosine")
tan = _inexact_unary("tan", lax.tan, "tangent")
arcsin = _inexact_unary("arcsin", lax.asin, "inverse sine")
arccos = _inexact_unary("arccos", lax.acos, "inverse cosine")
arctan = _inexact_unary("arctan", lax.atan, "inverse tangent")
sinh = _inexact_unary("sinh", lax.sinh, "hyperbolic sine")
cosh = _inexact_unary("cosh", lax.cosh, "hyperbolic cosine")
tanh = _inexact_unary("tanh", lax.tanh, "hyperbolic tangent")
arcsinh = _inexact_unary("arcsinh", lax.asinh, "inverse hyperbolic sine")
arctanh = _inexact_unary("arctanh", lax.atanh, "inverse hyperbolic tangent")
sqrt = _inexact_unary("sqrt", lax.sqrt, "non-negative square root")
cbrt = _inexact_unary("cbrt", lax.cbrt, "cube root")


@jitted
def arccosh(x, /):
    """Elementwise inverse hyperbolic cosine; of a complex number, the branch with a
    non-negative real part (as NumPy)."""
    (x,) = promote_args_inexact("arccosh", x)
    result = lax.acosh(x)
    if is_complex(result):
        result = select(lax.lt(lax.real(result), const_like(lax.real(result), 0)),
                        lax.neg(result), result)  # fmt: skip
    return result


def _alias(name: str, target):
    def fun(x, /):
        check_arraylike(name, x)
        return target(x)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"Alias of ``jnp.{target.__name__}``."
    return jitted(fun)


acos = _alias("acos", arccos)
acosh = _alias("acosh", arccosh)
asin = _alias("asin", arcsin)
asinh = _alias("asinh", arcsinh)
atan = _alias("atan", arctan)
atanh = _alias("atanh", arctanh)


@jitted
def log2(x, /):
    """Elementwise base-2 logarithm."""
    (x,) = promote_args_inexact("log2", x)
    return _scaled_log(x, 1 / np.log(2))


@jitted
def log10(x, /):
    """Elementwise base-10 logarithm."""
    (x,) = promote_args_inexact("log10", x)
    return _scaled_log(x, 1 / np.log(10))


def _scaled_log(x, factor):
    logx = lax.log(x)
    if is_complex(x):
        re, im = lax.real(logx), lax.imag(logx)
        factor = np.array(factor, dtype_of(re))  # strongly typed, as in JAX
        return lax.complex(lax.mul(re, factor), lax.mul(im, factor))
    return lax.mul(logx, np.array(factor, dtype_of(logx)))


@jitted
def fabs(x, /):
    """Elementwise absolute value as a float (complex inputs are a TypeError)."""
    check_arraylike("fabs", x)
    if is_complex(x):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    (x,) = promote_args_inexact("fabs", x)
    return lax.abs(x)


@jitted
def absolute(x, /):
    """Elementwise absolute value (magnitude for complex numbers, a real result);
    unsigned integers and bools are returned unchanged."""
    check_arraylike("absolute", x)
    x = to_array(x)
    return x if is_bool(x) or is_unsigned(x) else lax.abs(x)


@jitted
def abs(x, /):
    """Alias of ``jnp.absolute``."""
    check_arraylike("abs", x)
    return absolute(x)


@jitted
def positive(x, /):
    """``+x``: the input, as an array."""
    check_arraylike("positive", x)
    return to_array(promote_args("positive", x)[0])


@jitted
def sign(x, /):
    """Elementwise sign: -1, 0 or 1 (``x / |x|`` for complex ``x``; NaN stays NaN)."""
    check_arraylike("sign", x)
    return lax.sign(to_array(promote_args("sign", x)[0]))


@jitted
def floor(x, /):
    """Elementwise floor; integers and bools are returned unchanged."""
    check_arraylike("floor", x)
    x = to_array(x)
    if is_integer(x) or is_bool(x):
        return x
    (x,) = promote_args_inexact("floor", x)
    return lax.floor(x)


@jitted
def ceil(x, /):
    """Elementwise ceiling; integers and bools are returned unchanged."""
    check_arraylike("ceil", x)
    x = to_array(x)
    if is_integer(x) or is_bool(x):
        return x
    (x,) = promote_args_inexact("ceil", x)
    return lax.ceil(x)


@jitted
def trunc(x):
    """Elementwise rounding towards zero; integers and bools are returned unchanged."""
    check_arraylike("trunc", x)
    x = to_array(x)
    if is_integer(x) or is_bool(x):
        return x
    return select(lax.lt(x, const_like(x, 0)), lax.ceil(x), lax.floor(x))


@jitted
def rint(x, /):
    """Elementwise rounding to the nearest integer, ties to even; integers and bools
    become the default float."""
    check_arraylike("rint", x)
    x = to_array(x)
    if is_integer(x) or is_bool(x):
        return lax.convert_element_type(x, dtypes.default_float_dtype())
    if is_complex(x):
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


@jitted
def square(x, /):
    """Elementwise ``x * x`` (bools become integers)."""
    check_arraylike("square", x)
    (x,) = promote_dtypes_numeric(x)
    if is_integer(x):  # lax.square lowers to chlo.square, which takes no integers
        return lax.mul(x, x)
    return lax.square(x)


@jitted
def reciprocal(x, /):
    """Elementwise ``1 / x`` in an inexact dtype."""
    check_arraylike("reciprocal", x)
    (x,) = promote_dtypes_inexact(x)
    return lax.integer_pow(x, -1)


@jitted
def deg2rad(x, /):
    """Degrees to radians."""
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, const_like(x, np.pi / 180))


@jitted
def rad2deg(x, /):
    """Radians to degrees."""
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, const_like(x, 180 / np.pi))


def degrees(x, /):
    """Radians to degrees (alias of ``jnp.rad2deg``)."""
    return rad2deg(x)


def radians(x, /):
    """Degrees to radians (alias of ``jnp.deg2rad``)."""
    return deg2rad(x)


@jitted
def conjugate(x, /):
    """Elementwise complex conjugate; real inputs are returned unchanged."""
    check_arraylike("conjugate", x)
    x = to_array(x)
    return lax.conj(x) if is_complex(x) else x


def conj(x, /):
    """Alias of ``jnp.conjugate``."""
    return conjugate(x)


@jitted
def real(val, /):
    """Elementwise real part; real inputs are returned unchanged."""
    check_arraylike("real", val)
    val = to_array(val)
    return lax.real(val) if is_complex(val) else val


@jitted
def imag(val, /):
    """Elementwise imaginary part; zeros (of the input's dtype) for real inputs."""
    check_arraylike("imag", val)
    val = to_array(val)
    return lax.imag(val) if is_complex(val) else full_like(val, 0)
