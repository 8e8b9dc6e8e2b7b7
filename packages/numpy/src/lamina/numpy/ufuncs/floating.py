"""Floating-point elementwise functions of lamina.numpy that look at the bits or the
special values of floats (frexp, ldexp, spacing, modf, nan_to_num), rounding to
decimals, special functions with custom derivatives (sinc, i0), complex angles,
``unwrap`` and ``clip``."""

from __future__ import annotations

import operator

import numpy as np
from lamina import lax
from lamina.interpreters import ConcretizationTypeError, Tracer, custom_jvp, jvp
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    aval_of,
    canonicalize_axis,
    check_arraylike,
    promote_args_inexact,
    promote_dtypes,
    promote_dtypes_inexact,
    to_array,
)
from lamina.numpy.ufuncs.binary import copysign, floor_divide, maximum, minimum, remainder
from lamina.numpy.ufuncs.operands import (
    INT_OF_BITS,
    const_like,
    dtype_of,
    full_like,
    is_complex,
    is_floating,
    is_integer,
    jitted,
    select,
)

__all__ = [
    "angle", "around", "clip", "frexp", "i0", "ldexp", "modf", "nan_to_num", "round",
    "sinc", "spacing", "unwrap",
]  # fmt: skip


def _frexp_values(x):
    """Mantissa in [0.5, 1) and exponent, read from the bits of ``x`` (subnormals are
    scaled into the normal range first)."""
    dtype = dtype_of(x)
    info = dtypes.finfo(dtype)
    int_type = INT_OF_BITS[info.bits]
    exponent_mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    subnormal = lax.lt(lax.abs(x), const_like(x, info.tiny))
    original = x
    x = select(subnormal, lax.mul(x, const_like(x, 1 << info.nmant)), x)
    exponent = select(subnormal, np.array(-info.nmant, int_type), np.array(0, int_type))
    bits = lax.bitcast_convert_type(x, int_type)
    stored = lax.bitwise_and(
        lax.shift_right_logical(bits, np.array(info.nmant, int_type)),
        np.array(exponent_mask, int_type),
    )
    exponent = lax.add(exponent, lax.sub(stored, np.array(bias - 1, int_type)))
    bits = lax.bitwise_and(bits, np.array(~(exponent_mask << info.nmant), int_type))
    bits = lax.bitwise_or(bits, np.array((bias - 1) << info.nmant, int_type))
    mantissa = lax.bitcast_convert_type(bits, dtype)
    # The special values are tested on the input as given: XLA flushes the scaled
    # subnormals to zero, and JAX's frexp answers (0.5, -149) for them.
    special = lax.bitwise_or(
        lax.bitwise_not(lax.is_finite(original)), lax.eq(original, const_like(original, 0))
    )
    exponent = select(special, full_like(exponent, 0), exponent)
    return select(special, original, mantissa), lax.convert_element_type(exponent, np.int32)


_frexp = custom_jvp(_frexp_values)


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    mantissa, exponent = _frexp(x)
    scale = lax.exp2(lax.neg(lax.convert_element_type(exponent, dtype_of(t))))
    return (mantissa, exponent), (lax.mul(t, scale), np.zeros(aval_of(x).shape, dtypes.float0))


@jitted
def frexp(x, /):
    """``(mantissa, exponent)`` with ``x == mantissa * 2**exponent`` and ``|mantissa|``
    in [0.5, 1); the exponent is int32."""
    check_arraylike("frexp", x)
    (x,) = promote_dtypes_inexact(x)
    if is_complex(x):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


@jitted
def ldexp(x1, x2, /):
    """Elementwise ``x1 * 2**x2`` for an integer ``x2``."""
    check_arraylike("ldexp", x1, x2)
    x1, x2 = to_array(x1), to_array(x2)
    if is_complex(x1) or dtypes.issubdtype(dtype_of(x2), np.inexact):
        raise ValueError(f"ldexp not supported for input types {(dtype_of(x1), dtype_of(x2))}")
    (x1,) = promote_args_inexact("ldexp", x1)
    x2 = lax.convert_element_type(x2, dtype_of(x1))
    mantissa, exponent = frexp(x1)
    exponent = lax.add(lax.convert_element_type(exponent, dtype_of(x2)), x2)
    positive = lax.gt(exponent, const_like(exponent, 0))
    mantissa = select(positive, lax.mul(mantissa, const_like(mantissa, 2)), mantissa)
    exponent = select(positive, lax.sub(exponent, const_like(exponent, 1)), exponent)
    value = lax.mul(mantissa, lax.pow(const_like(mantissa, 2), exponent))
    keep = lax.bitwise_or(
        lax.eq(lax.abs(x1), const_like(x1, np.inf)), lax.eq(x1, const_like(x1, 0))
    )
    return select(keep, x1, value)


@jitted
def spacing(x, /):
    """Distance from ``x`` to the next float away from zero (``-`` for negative ``x``)."""
    (x,) = promote_args_inexact("spacing", x)
    if is_complex(x):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = const_like(x, np.inf)
    if dtype_of(x) == np.float16:
        return lax.sub(lax.nextafter(x, full_like(x, np.inf)), x)
    away = lax.nextafter(x, lax.convert_element_type(copysign(inf, x), dtype_of(x)))
    result = lax.sub(away, x)
    tiny = copysign(const_like(x, dtypes.finfo(dtype_of(x)).smallest_subnormal), x)
    return select(lax.eq(result, const_like(result, 0)), tiny, result)


@jitted
def modf(x, /, out=None):
    """``(fractional part, integral part)``, both with the sign of ``x``."""
    check_arraylike("modf", x)
    (x,) = promote_dtypes_inexact(x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    whole = select(lax.ge(x, const_like(x, 0)), lax.floor(x), lax.ceil(x))
    return lax.sub(x, whole), whole


def _i0_values(x):
    magnitude = lax.abs(x)
    return lax.mul(lax.exp(magnitude), lax.bessel_i0e(magnitude))


_i0 = custom_jvp(_i0_values)


@_i0.defjvp
def _i0_jvp(primals, tangents):
    (x,) = primals
    out, t_out = jvp(_i0_values, primals, tangents)
    # |x| has no derivative at 0, but i0 does: 0.
    return out, select(lax.eq(x, const_like(x, 0)), full_like(t_out, 0), t_out)


@jitted
def i0(x):
    """Modified Bessel function of the first kind, order 0 (real inputs)."""
    (x,) = promote_args_inexact("i0", x)
    if not is_floating(x):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {dtype_of(x)}")
    return _i0(x)


def _sinc_taylor_values(k, x):
    """The k-th derivative of sin(x)/x at 0, shaped like ``x``: its value at the only
    point sinc uses it, so that every derivative of sinc at 0 is right."""
    zero = lax.mul(x, const_like(x, 0))
    if k % 2:
        return zero
    return lax.add(zero, const_like(x, (-1) ** (k // 2) / (k + 1)))


_sinc_taylor = custom_jvp(_sinc_taylor_values, nondiff_argnums=(0,))


@_sinc_taylor.defjvp
def _sinc_taylor_jvp(k, primals, tangents):
    (x,), (t,) = primals, tangents
    return _sinc_taylor(k, x), lax.mul(_sinc_taylor(k + 1, x), t)


@jitted
def sinc(x, /):
    """Normalized sinc, ``sin(pi x) / (pi x)``, 1 at 0 (derivatives at 0 exact)."""
    check_arraylike("sinc", x)
    (x,) = promote_dtypes_inexact(x)
    at_zero = lax.eq(x, const_like(x, 0))
    pi_x = lax.mul(const_like(x, np.pi), x)
    safe_pi_x = select(at_zero, const_like(x, 1), pi_x)
    return select(at_zero, _sinc_taylor(0, pi_x), lax.div(lax.sin(safe_pi_x), safe_pi_x))


@jitted
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN replaced by ``nan``, infinities by ``posinf``/``neginf`` (the largest finite
    values by default); non-float inputs returned unchanged."""
    del copy
    check_arraylike("nan_to_num", x)
    x = to_array(x)
    dtype = dtype_of(x)
    if not dtypes.issubdtype(dtype, np.inexact):
        return x
    if is_complex(x):
        parts = (nan_to_num(part, nan=nan, posinf=posinf, neginf=neginf)
                 for part in (lax.real(x), lax.imag(x)))  # fmt: skip
        return lax.complex(*parts)
    info = dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    nan, posinf, neginf = (lax.convert_element_type(v, dtype) for v in (nan, posinf, neginf))
    out = select(lax.ne(x, x), nan, x)
    out = select(lax.eq(out, const_like(out, np.inf)), posinf, out)
    out = select(lax.eq(out, const_like(out, -np.inf)), neginf, out)
    return lax.convert_element_type(out, dtype)


def _static_decimals(decimals):
    if isinstance(decimals, Tracer):
        raise ConcretizationTypeError(
            decimals,
            "The 'decimals' argument of jnp.round must be a concrete integer: mark it "
            "static (static_argnames) when calling round under jit.",
        )
    return operator.index(decimals)


@jitted(static_argnames=("decimals",))
def round(a, decimals=0, out=None):
    """Elementwise rounding to ``decimals`` decimal places, ties to even. Integers are
    returned unchanged (negative ``decimals`` are not supported for them)."""
    check_arraylike("round", a)
    a = to_array(a)
    decimals = _static_decimals(decimals)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    dtype = dtype_of(a)
    if is_integer(a):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a

    def round_real(x):
        if decimals == 0:
            return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
        # float16 would overflow at 10**decimals sooner than its result does.
        work = lax.convert_element_type(x, np.float32) if dtype == np.float16 else x
        factor = const_like(work, 10.0**decimals)
        scaled = lax.round(lax.mul(work, factor), lax.RoundingMethod.TO_NEAREST_EVEN)
        result = lax.div(scaled, factor)
        return lax.convert_element_type(result, dtype) if dtype == np.float16 else result

    if decimals > np.log10(dtypes.finfo(dtype).max):
        return a
    if is_complex(a):
        return lax.complex(round_real(lax.real(a)), round_real(lax.imag(a)))
    return round_real(a)


@jitted(static_argnames=("decimals",))
def around(a, decimals=0, out=None):
    """Alias of ``jnp.round``."""
    return round(a, decimals, out)


@jitted(static_argnames=("deg",))
def angle(z, deg=False):
    """Elementwise argument of complex numbers, in radians (degrees with ``deg``)."""
    check_arraylike("angle", z)
    z = to_array(z)
    if is_complex(z):
        re, im = lax.real(z), lax.imag(z)
    else:
        re, im = z, full_like(z, 0)
    dtype = dtype_of(re)
    if not dtypes.issubdtype(dtype, np.inexact) or (is_floating(z) and aval_of(z).ndim == 0):
        dtype = dtypes.default_float_dtype()
        re, im = (lax.convert_element_type(v, dtype) for v in (re, im))
    result = lax.atan2(im, re)
    return lax.mul(result, const_like(result, 180 / np.pi)) if deg else result


@jitted(static_argnames=("axis",))
def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """``p`` with jumps larger than ``discont`` along ``axis`` replaced by their
    complement modulo ``period``."""
    check_arraylike("unwrap", p)
    p, period = promote_dtypes(p, period)
    if is_complex(p):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    shape = aval_of(p).shape
    if not shape:
        raise IndexError("tuple index out of range")
    axis = canonicalize_axis(axis, len(shape))
    if shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    half = floor_divide(period, 2) if is_integer(p) else period / 2
    n = shape[axis]
    steps = lax.slice_in_dim(p, 1, n, axis=axis) - lax.slice_in_dim(p, 0, n - 1, axis=axis)
    wrapped = remainder(steps + half, period) - half
    wrapped = select((wrapped == -half) & (steps > 0), half + 0 * wrapped, wrapped)
    correction = select(abs(steps) < discont, 0 * wrapped, wrapped - steps)
    correction = lax.cumsum(correction, axis=axis)
    tail = lax.slice_in_dim(p, 1, n, axis=axis) + correction
    # The cumulative sum is strongly typed in JAX, and so is the result.
    out = lax.concatenate([lax.slice_in_dim(p, 0, 1, axis=axis), tail], axis)
    return lax.convert_element_type(out, dtype_of(out))


@jitted
def clip(arr=None, /, min=None, max=None):
    """``arr`` limited to ``[min, max]`` (either bound may be None)."""
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr)
    if any(v is not None and is_complex(v) for v in (arr, min, max)):
        raise ValueError(
            "Clip received a complex value either through the input or the min/max "
            "keywords. Complex values have no ordering and cannot be clipped. Please "
            "convert to a real value or array by taking the real or imaginary components "
            "via jax.numpy.real/imag respectively."
        )
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return to_array(arr)
