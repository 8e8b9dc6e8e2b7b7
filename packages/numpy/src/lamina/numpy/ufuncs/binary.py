"""Binary arithmetic of lamina.numpy: the bodies of the arithmetic ufuncs (add,
subtract, multiply, maximum, minimum, negative) and the division, power
and floating-point helpers (divide, floor_divide, remainder, fmod, divmod, power,
float_power, arctan2, hypot, copysign, nextafter, heaviside, fmax, fmin)."""

from __future__ import annotations

import operator

import numpy as np
from lamina import lax
from lamina.interpreters import Tracer
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    aval_of,
    check_arraylike,
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes_inexact,
    promote_dtypes_numeric,
    to_array,
)
from lamina.numpy.ufuncs.comparisons import greater, isnan, less, signbit
from lamina.numpy.ufuncs.operands import (
    checked_promote,
    const_like,
    dtype_of,
    full_like,
    is_bool,
    is_complex,
    is_integer,
    is_unsigned,
    jitted,
    literal_like,
    select,
)

__all__ = [
    "arctan2", "atan2", "copysign", "divide", "divmod", "float_power", "floor_divide",
    "fmax", "fmin", "fmod", "heaviside", "hypot", "mod", "nextafter", "pow", "power",
    "remainder", "true_divide",
]  # fmt: skip


# ---------------------------------------------------------------- ufunc bodies


@jitted
def add(x, y, /):
    """Elementwise ``x + y`` (logical or for bools)."""
    x, y = checked_promote("add", x, y)
    return lax.bitwise_or(x, y) if is_bool(x) else lax.add(x, y)


@jitted
def subtract(x, y, /):
    """Elementwise ``x - y``."""
    x, y = checked_promote("subtract", x, y)
    return lax.sub(x, y)


@jitted
def multiply(x, y, /):
    """Elementwise ``x * y`` (logical and for bools)."""
    x, y = checked_promote("multiply", x, y)
    return lax.bitwise_and(x, y) if is_bool(x) else lax.mul(x, y)


@jitted
def maximum(x, y, /):
    """Elementwise maximum; NaN wins; complex numbers compare by real part, then
    imaginary part."""
    x, y = checked_promote("maximum", x, y)
    if is_complex(x):
        return select(lexicographic_less(x, y), y, x)
    return lax.max(x, y)


@jitted
def minimum(x, y, /):
    """Elementwise minimum; NaN wins; complex numbers compare by real part, then
    imaginary part."""
    x, y = checked_promote("minimum", x, y)
    if is_complex(x):
        return select(lexicographic_less(y, x), y, x)
    return lax.min(x, y)


def lexicographic_less(x, y):
    """``x < y`` for complex numbers ordered by real part, then imaginary part."""
    rx, ry, ix, iy = lax.real(x), lax.real(y), lax.imag(x), lax.imag(y)
    return lax.bitwise_or(lax.lt(rx, ry), lax.bitwise_and(lax.eq(rx, ry), lax.lt(ix, iy)))


@jitted
def negative(x, /):
    """Elementwise ``-x``."""
    return lax.neg(*checked_promote("negative", x))


# ---------------------------------------------------------------- division


@jitted
def true_divide(x1, x2, /):
    """Elementwise ``x1 / x2`` in an inexact dtype."""
    x1, x2 = promote_args_inexact("true_divide", x1, x2)
    return lax.div(x1, x2)


def divide(x1, x2, /):
    """Alias of ``jnp.true_divide``."""
    return true_divide(x1, x2)


def _float_divmod(x1, x2):
    """Python's ``divmod`` for floats: the remainder takes the sign of ``x2``."""
    zero = const_like(x1, 0)
    mod = lax.rem(x1, x2)
    numerator = select(lax.eq(x2, zero), x1, lax.sub(x1, mod))
    quotient = lax.div(numerator, x2)
    fix = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = select(fix, lax.add(mod, x2), mod)
    quotient = select(fix, lax.sub(quotient, literal_like(quotient, 1)), quotient)
    return lax.round(quotient), mod


def _check_not_complex(name, x):
    if is_complex(x):
        raise TypeError(f"{name} does not support complex-valued inputs")


@jitted
def floor_divide(x1, x2, /):
    """Elementwise ``x1 // x2``: the quotient rounded towards minus infinity."""
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    if is_unsigned(x1):
        return lax.div(x1, x2)
    if is_integer(x1):
        quotient = lax.div(x1, x2)
        fix = lax.bitwise_and(
            lax.ne(lax.sign(x1), lax.sign(x2)), lax.ne(lax.rem(x1, x2), const_like(x1, 0))
        )
        return select(fix, lax.sub(quotient, const_like(quotient, 1)), quotient)
    _check_not_complex("floor_divide", x1)
    return _float_divmod(x1, x2)[0]


@jitted
def remainder(x1, x2, /):
    """Elementwise ``x1 % x2`` with the sign of ``x2``; an integer remainder by zero
    is 0."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    _check_not_complex("remainder", x1)
    zero = const_like(x1, 0)
    if is_integer(x2):
        x2 = select(lax.eq(x2, const_like(x2, 0)), const_like(x2, 1), x2)
    trunc_mod = lax.rem(x1, x2)
    flip = lax.bitwise_and(
        lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)), lax.ne(trunc_mod, zero)
    )
    return select(flip, lax.add(trunc_mod, x2), trunc_mod)


def mod(x1, x2, /):
    """Alias of ``jnp.remainder``."""
    return remainder(x1, x2)


@jitted
def divmod(x1, x2, /):
    """``(x1 // x2, x1 % x2)`` elementwise."""
    x1, x2 = promote_args_numeric("divmod", x1, x2)
    if is_integer(x1):
        return floor_divide(x1, x2), remainder(x1, x2)
    _check_not_complex("divmod", x1)
    return _float_divmod(x1, x2)


@jitted
def fmod(x1, x2, /):
    """Elementwise C ``fmod``: the remainder takes the sign of ``x1``; an integer
    remainder by zero is 0."""
    check_arraylike("fmod", x1, x2)
    x1, x2 = to_array(x1), to_array(x2)
    if dtypes.issubdtype(dtypes.result_type(aval_of(x1), aval_of(x2)), np.integer):
        x2 = select(lax.eq(x2, const_like(x2, 0)), const_like(x2, 1), x2)
    x1, x2 = promote_args_numeric("fmod", x1, x2)
    _check_not_complex("fmod", x1)
    return lax.rem(x1, x2)


# ---------------------------------------------------------------- powers


def power(x1, x2, /):
    """Elementwise ``x1 ** x2``. A concrete integer exponent multiplies
    (``lax.integer_pow``, exact for integers); integer arrays raise to integer powers by
    squaring; otherwise ``lax.pow`` in the promoted dtype."""
    check_arraylike("power", x1, x2)
    x1, x2 = (x.__jax_array__() if hasattr(x, "__jax_array__") else x for x in (x1, x2))
    for x in (x1, x2):
        if dtype_of(x) == dtypes.float0:
            raise TypeError(
                "power does not accept arrays of dtype float0: they are the tangents of "
                "integer and boolean values"
            )
    if not isinstance(x2, Tracer):
        try:
            exponent = operator.index(x2)
        except TypeError:
            pass
        else:
            (x1,) = promote_dtypes_numeric(x1)
            return lax.integer_pow(x1, exponent)
    return _power(x1, x2)


def pow(x1, x2, /):
    """Alias of ``jnp.power``."""
    return power(x1, x2)


@jitted
def _power(x1, x2):
    x1, x2 = _match_ranks("power", x1, x2)
    x1_promoted, x2_promoted = promote_args_numeric("power", x1, x2)
    if is_integer(x1_promoted):
        return _integer_power(x1_promoted, x2_promoted)
    if dtypes.issubdtype(dtype_of(x1), np.inexact) and is_integer(x2):
        return lax.pow(x1, x2)
    return lax.pow(x1_promoted, x2_promoted)


def _match_ranks(name, *args):
    """Ranks matched for broadcasting, dtypes left alone."""
    ndim = max(aval_of(a).ndim for a in args)
    out = []
    for a in args:
        aval = aval_of(a)
        if 0 < aval.ndim < ndim:
            lead = ndim - aval.ndim
            a = lax.broadcast_in_dim(a, (1,) * lead + aval.shape, tuple(range(lead, ndim)))
        out.append(a)
    np.broadcast_shapes(*(aval_of(a).shape for a in out))
    return out


def _integer_power(x1, x2):
    """Integer ``x1 ** x2`` by squaring over the low 6 bits of ``x2``, as
    ``jnp.power`` computes it (``0 ** n`` is 0 for ``n != 0``)."""
    zero, one = const_like(x2, 0), const_like(x2, 1)
    result = select(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)),
                    full_like(x1, 0), full_like(x1, 1))  # fmt: skip
    for _ in range(6):
        result = select(lax.ne(lax.bitwise_and(x2, one), zero), lax.mul(result, x1), result)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return result


@jitted
def float_power(x, y, /):
    """Elementwise ``x ** y`` in an inexact dtype."""
    return lax.pow(*promote_args_inexact("float_power", x, y))


# ---------------------------------------------------------------- floating point


@jitted
def arctan2(x1, x2, /):
    """Elementwise ``atan(x1 / x2)`` in the quadrant of the point ``(x2, x1)``."""
    return lax.atan2(*promote_args_inexact("arctan2", x1, x2))


@jitted
def atan2(x1, x2, /):
    """Alias of ``jnp.arctan2``."""
    return arctan2(*checked_promote("atan2", x1, x2))


@jitted
def hypot(x1, x2, /):
    """Elementwise ``sqrt(x1**2 + x2**2)`` without overflow."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    if is_complex(x1):
        raise ValueError(
            "jnp.hypot is not well defined for complex-valued inputs. Please convert to "
            "real values first, such as by using abs(x)"
        )
    x1, x2 = lax.abs(x1), lax.abs(x2)
    inf = const_like(x1, np.inf)
    any_inf = lax.bitwise_or(lax.eq(x1, inf), lax.eq(x2, inf))
    big, small = lax.max(x1, x2), lax.min(x1, x2)
    big_is_zero = lax.eq(big, const_like(big, 0))
    safe_big = select(big_is_zero, const_like(big, 1), big)
    ratio = lax.div(small, safe_big)
    scaled = lax.mul(big, lax.sqrt(lax.add(const_like(ratio, 1), lax.square(ratio))))
    out = select(big_is_zero, big, scaled)
    return select(any_inf, inf, out)


@jitted
def copysign(x1, x2, /):
    """``|x1|`` with the sign (bit) of ``x2``."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    if is_complex(x1):
        raise TypeError("copysign does not support complex-valued inputs")
    magnitude = lax.abs(x1)
    return select(signbit(x2), lax.neg(magnitude), magnitude)


@jitted
def nextafter(x, y, /):
    """The next representable float after ``x`` towards ``y``."""
    return lax.nextafter(*promote_args_inexact("nextafter", x, y))


@jitted
def heaviside(x1, x2, /):
    """Step function: 0 below 0, 1 above, ``x2`` at 0 (NaN stays NaN)."""
    check_arraylike("heaviside", x1, x2)
    x1, x2 = promote_dtypes_inexact(x1, x2)
    if is_complex(x1):
        raise TypeError(
            f"heaviside does not accept dtype {dtype_of(x1)}: complex numbers are not ordered."
        )
    zero, one = const_like(x1, 0), const_like(x1, 1)
    at_zero = select(lax.ne(x1, x1), x1, x2)
    return select(lax.lt(x1, zero), zero, select(lax.gt(x1, zero), one, at_zero))


def _nan_ignoring(name, compare):
    def fun(x1, x2):
        check_arraylike(name, x1, x2)
        keep_first = lax.bitwise_or((less if compare == "lt" else greater)(x1, x2), isnan(x2))
        x1, x2 = checked_promote(name, x1, x2)
        return select(keep_first, x1, x2)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = (
        f"Elementwise {'minimum' if compare == 'lt' else 'maximum'} ignoring NaNs: the "
        "other value where one is NaN."
    )
    return jitted(fun)


fmin = _nan_ignoring("fmin", "lt")
fmax = _nan_ignoring("fmax", "gt")
