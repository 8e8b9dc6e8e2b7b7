"""Comparisons and value tests of lamina.numpy: ``equal`` ... ``greater_equal``
(complex numbers ordered by real part, then imaginary part, as JAX does), tolerance
tests (``isclose``, ``allclose``), whole-array tests (``array_equal``,
``array_equiv``) and the floating-point classifiers (``isnan``, ``isinf``,
``isfinite``, ``isposinf``, ``isneginf``, ``iscomplex``, ``isreal``, ``signbit``)."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    aval_of,
    check_arraylike,
    from_jax_array,
    is_arraylike,
    promote_args,
    promote_args_inexact,
    to_array,
)
from lamina.numpy.creation.conversion import asarray
from lamina.numpy.ufuncs.operands import (
    INT_OF_BITS,
    compare,
    const_like,
    dtype_of,
    full_like,
    is_bool,
    is_complex,
    is_floating,
    is_integer,
    jitted,
    weak_like_inputs,
)

__all__ = [
    "allclose", "array_equal", "array_equiv", "equal", "greater", "greater_equal",
    "isclose", "iscomplex", "isfinite", "isinf", "isnan", "isneginf", "isposinf",
    "isreal", "less", "less_equal", "not_equal", "signbit",
]  # fmt: skip


def _comparison(name, lax_op, ordered):
    def fun(x, y, /):
        check_arraylike(name, x, y)
        x, y = (to_array(v) for v in promote_args(name, x, y))
        if ordered and is_complex(x):
            real_x, real_y = lax.real(x), lax.real(y)
            out = lax.select_n(
                lax.eq(real_x, real_y), lax_op(real_x, real_y), lax_op(lax.imag(x), lax.imag(y))
            )
            return weak_like_inputs(out, x, y)
        return compare(lax_op, x, y)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"Elementwise ``{name}`` comparison, with broadcasting and promotion."
    return jitted(fun)


equal = _comparison("equal", lax.eq, ordered=False)
not_equal = _comparison("not_equal", lax.ne, ordered=False)
less = _comparison("less", lax.lt, ordered=True)
less_equal = _comparison("less_equal", lax.le, ordered=True)
greater = _comparison("greater", lax.gt, ordered=True)
greater_equal = _comparison("greater_equal", lax.ge, ordered=True)


def _all_true(x):
    """Whether every element is true, as a strongly typed bool (as ``jnp.all``)."""
    out = lax.reduce_and(x, tuple(range(aval_of(x).ndim)))
    return lax.convert_element_type(out, np.bool_)


@jitted
def isnan(x, /):
    """Elementwise: true where ``x`` is NaN (either part, for complex)."""
    check_arraylike("isnan", x)
    x = to_array(x)
    return compare(lax.ne, x, x)


@jitted
def isfinite(x, /):
    """Elementwise: true where ``x`` is neither infinite nor NaN."""
    check_arraylike("isfinite", x)
    x = to_array(x)
    if is_floating(x):
        return lax.is_finite(x)
    if is_complex(x):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.full_like(x, True, dtype=np.bool_)


def _strong(x, value):
    """``value`` as a strongly typed scalar of ``x``'s dtype: JAX compares with typed
    constants, so these tests give strong booleans even for weak inputs."""
    return np.asarray(value, aval_of(x).dtype)


def _is_infinite(x):
    return lax.eq(lax.abs(x), _strong(x, np.inf))


@jitted
def isinf(x, /):
    """Elementwise: true where ``x`` (or a part of complex ``x``) is infinite."""
    check_arraylike("isinf", x)
    x = to_array(x)
    if is_floating(x):
        return _is_infinite(x)
    if is_complex(x):
        return lax.bitwise_or(_is_infinite(lax.real(x)), _is_infinite(lax.imag(x)))
    return lax.full_like(x, False, dtype=np.bool_)


def _is_signed_inf(name, x, out, infinity):
    check_arraylike(name, x)
    x = to_array(x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")
    if is_floating(x):
        return lax.eq(x, _strong(x, infinity))
    if is_complex(x):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    return lax.full_like(x, False, dtype=np.bool_)


def isposinf(x, /, out=None):
    """Elementwise: true where ``x`` is +inf."""
    x = from_jax_array(x)
    return _is_signed_inf("isposinf", x, out, np.inf)


def isneginf(x, /, out=None):
    """Elementwise: true where ``x`` is -inf."""
    x = from_jax_array(x)
    return _is_signed_inf("isneginf", x, out, -np.inf)


def _imaginary_part(name, x):
    check_arraylike(name, x)
    x = to_array(x)
    return lax.imag(x) if is_complex(x) else full_like(x, 0)


@jitted
def iscomplex(x):
    """Elementwise: true where the imaginary part is non-zero."""
    imag = _imaginary_part("iscomplex", x)
    return compare(lax.ne, imag, const_like(imag, 0))


@jitted
def isreal(x):
    """Elementwise: true where the imaginary part is zero."""
    imag = _imaginary_part("isreal", x)
    return compare(lax.eq, imag, const_like(imag, 0))


@jitted(static_argnames=("equal_nan",))
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (or exact equality, which covers
    infinities); NaNs are close to each other only with ``equal_nan``."""
    check_arraylike("isclose", a, b)
    a, b = (to_array(v) for v in promote_args("isclose", a, b))
    if dtypes.issubdtype(dtype_of(a), dtypes.extended):
        return lax.eq(a, b)
    a, b = promote_args_inexact("isclose", a, b)
    tol_dtype = np.finfo(dtype_of(a)).dtype if is_complex(a) else dtype_of(a)
    rtol, atol = (lax.convert_element_type(t, tol_dtype) for t in (rtol, atol))
    both_nan = lax.bitwise_and(lax.ne(a, a), lax.ne(b, b))
    distance = lax.abs(lax.sub(a, b))
    in_range = lax.le(distance, lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = lax.bitwise_or(lax.eq(a, b), lax.bitwise_and(isfinite(b), in_range))
    return lax.bitwise_or(out, both_nan) if equal_nan else out


@jitted(static_argnames=("equal_nan",))
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of ``a`` is close to ``b`` (see ``isclose``)."""
    check_arraylike("allclose", a, b)
    return _all_true(isclose(a, b, rtol, atol, equal_nan))


def _as_array(x):
    """``jnp.asarray(x)``: lists and tuples too, as ``array_equal`` accepts them."""
    if is_arraylike(x):
        return to_array(x)
    return asarray(x)


def array_equal(a1, a2, equal_nan=False):
    """True when ``a1`` and ``a2`` have the same shape and elements (NaNs equal each
    other with ``equal_nan``); arrays of different shapes are not equal."""
    a1, a2 = _as_array(a1), _as_array(a2)
    if aval_of(a1).shape != aval_of(a2).shape:
        return to_array(np.array(False))
    same = equal(a1, a2)
    if equal_nan:
        same = lax.bitwise_or(same, lax.bitwise_and(isnan(a1), isnan(a2)))
    return _all_true(same)


def array_equiv(a1, a2):
    """True when ``a1`` and ``a2`` broadcast together and are equal everywhere."""
    a1, a2 = _as_array(a1), _as_array(a2)
    try:
        same = equal(a1, a2)
    except ValueError:
        return to_array(np.array(False))
    return _all_true(same)


@jitted
def signbit(x, /):
    """Elementwise: true where the sign bit is set (``-0.0`` and ``-nan`` included)."""
    check_arraylike("signbit", x)
    x = to_array(promote_args("signbit", x)[0])
    dtype = dtype_of(x)
    if is_integer(x):
        return lax.lt(x, np.zeros((), dtype))  # a typed constant: a strong result, as JAX
    if is_bool(x):
        return lax.full_like(x, False, dtype=np.bool_)
    if not is_floating(x):
        raise ValueError(f"jax.numpy.signbit is not well defined for {dtype}")
    info = dtypes.finfo(dtype)
    if info.bits not in INT_OF_BITS:
        raise NotImplementedError("jax.numpy.signbit only supports 16, 32, and 64-bit types.")
    bits = lax.bitcast_convert_type(x, INT_OF_BITS[info.bits])
    shift = np.array(info.bits - 1, INT_OF_BITS[info.bits])
    return lax.ne(lax.shift_right_logical(bits, shift), full_like(bits, 0))
