"""Variance and standard deviation (``var``, ``std``) and the NaN-ignoring reductions
(``nansum``, ``nanprod``, ``nanmax``, ``nanmin``, ``nanmean``, ``nanvar``,
``nanstd``).

Variance of complex input is real (the mean of ``|x - mean|**2``); a normalizer
``N - correction`` that is not positive gives NaN, as in JAX.
"""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.ir import dtypes
from lamina.numpy.base.arguments import check_arraylike, from_jax_array
from lamina.numpy.base.static_values import as_array
from lamina.numpy.reductions import folding
from lamina.numpy.reductions import rules as rc

__all__ = [
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nanstd",
    "nansum",
    "nanvar",
    "std",
    "var",
]

_COMPLEX_DTYPE_MESSAGE = (
    "jax.numpy.var does not yet support real dtype parameters when computing the variance "
    "of an array of complex values. The semantics of numpy.var seem unclear in this case. "
    "Please comment on https://github.com/jax-ml/jax/issues/2283 if this behavior is "
    "important to you."
)


def _moment_dtypes(a_dtype, dtype):
    """(computation dtype, result dtype) of a variance: integers give the default float,
    complex input a real result; half floats compute in float32."""
    if dtype is not None:
        if dtypes.issubdtype(a_dtype, np.complexfloating) and not dtypes.issubdtype(
            dtype, np.complexfloating
        ):
            raise ValueError(_COMPLEX_DTYPE_MESSAGE)
        compute, result = dtype, dtype
    elif not dtypes.issubdtype(a_dtype, np.inexact):
        compute = result = dtypes.to_inexact_dtype(a_dtype)
    else:
        compute, result = a_dtype, np.zeros((), a_dtype).real.dtype
    return rc.upcast_f16(compute), np.dtype(result)


def _squared_magnitude(centered):
    if dtypes.issubdtype(centered.dtype, np.complexfloating):
        return lax.real(lax.mul(centered, lax.conj(centered)))
    return lax.square(centered)


def _correction(ddof, correction):
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=None,
    mean=None,
    correction=None,
):
    """Variance of ``a`` over ``axis`` with ``N - correction`` (or ``ddof``) degrees of
    freedom; ``mean`` may supply a precomputed mean (with kept dimensions)."""
    a = from_jax_array(a)
    correction = _correction(ddof, correction)
    a = as_array("var", a)
    return _var("var", a, axis, dtype, out, correction, keepdims, where, mean)


def _var(name, a, axis, dtype, out, correction, keepdims, where, a_mean):
    where = rc.check_where(name, where)
    axis = rc.static_axis(axis, name)
    dtype = rc.user_dtype(dtype, name)
    rc.check_out(name, out)
    if a_mean is not None:
        check_arraylike(name, a_mean)
    return _staged_var(a, where, a_mean, name, axis, dtype, correction, bool(keepdims))


@rc.staged(3, 4, 5, 6, 7)
def _staged_var(a, where, a_mean, name, axis, dtype, correction, keepdims):
    compute_dtype, result_dtype = _moment_dtypes(a.dtype, dtype)
    a = rc.convert(a, compute_dtype)
    if a_mean is None:
        a_mean = folding.mean(a, axis, dtype=compute_dtype, keepdims=True, where=where)
    else:
        a_mean = rc.convert(as_array(name, a_mean), compute_dtype)
    squares = _squared_magnitude(lax.sub(a, a_mean))
    compute_dtype = squares.dtype
    normalizer = lax.sub(
        folding.count(a, axis, keepdims, where, compute_dtype),
        lax.convert_element_type(correction, compute_dtype),
    )
    total = folding.sum(squares, axis, dtype=compute_dtype, keepdims=keepdims, where=where)
    result = rc.convert(lax.div(total, normalizer), result_dtype)
    zero = lax.convert_element_type(0, compute_dtype)
    return rc.promoting_select(lax.gt(normalizer, zero), result, np.nan)


def std(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=None,
    mean=None,
    correction=None,
):
    """Standard deviation: the square root of :func:`var`."""
    a = from_jax_array(a)
    correction = _correction(ddof, correction)
    a = as_array("std", a)
    if dtype is not None:
        dtype = rc.user_dtype(dtype, "std")
        if not dtypes.issubdtype(dtype, np.inexact):
            raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    rc.check_out("std", out)
    return lax.sqrt(_var("std", a, axis, dtype, None, correction, keepdims, where, mean))


def _nan_reduce(
    name,
    reduction,
    fill,
    a,
    axis,
    keepdims,
    where,
    nan_if_all_nan,
    *,
    out=None,
    initial=None,
    dtype=None,
    takes_dtype=True,
):
    """``reduction`` of ``a`` with its NaNs replaced by ``fill`` (the reduction's
    identity); NaN where every element is NaN when ``nan_if_all_nan``."""
    rc.check_out(name, out)
    a = as_array(name, a)
    where = rc.check_where(name, where)
    if initial is not None:
        check_arraylike(name, initial)
    axis = rc.static_axis(axis, name)
    options = (reduction, fill, axis, bool(keepdims), nan_if_all_nan, dtype, takes_dtype)
    return _staged_nan_reduce(a, where, initial, *options)


@rc.staged(3, 4, 5, 6, 7, 8, 9)
def _staged_nan_reduce(
    a, where, initial, reduction, fill, axis, keepdims, nan_if_all_nan, dtype, takes_dtype
):
    kwargs = dict(axis=axis, keepdims=keepdims, where=where, initial=initial)
    if takes_dtype:
        kwargs["dtype"] = dtype
    if not dtypes.issubdtype(a.dtype, np.inexact):
        return reduction(a, **kwargs)
    nan_mask = rc.isnan(a)
    result = reduction(rc.promoting_select(nan_mask, rc.init_value(a.dtype, fill), a), **kwargs)
    if not nan_if_all_nan:
        return result
    all_nan = folding.all(nan_mask, axis=axis, keepdims=keepdims)
    return rc.promoting_select(all_nan, rc.init_value(result.dtype, np.nan), result)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`min` ignoring NaNs (NaN where every element is NaN and no ``initial``)."""
    return _nan_reduce(
        "nanmin",
        folding.min,
        np.inf,
        a,
        axis,
        keepdims,
        where,
        initial is None,
        out=out,
        initial=initial,
        takes_dtype=False,
    )


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`max` ignoring NaNs (NaN where every element is NaN and no ``initial``)."""
    return _nan_reduce(
        "nanmax",
        folding.max,
        -np.inf,
        a,
        axis,
        keepdims,
        where,
        initial is None,
        out=out,
        initial=initial,
        takes_dtype=False,
    )


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`sum` treating NaNs as zero."""
    dtype = rc.user_dtype(dtype, "nanprod")
    return _nan_reduce(
        "nansum",
        folding.sum,
        0,
        a,
        axis,
        keepdims,
        where,
        False,
        dtype=dtype,
        out=out,
        initial=initial,
    )


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`prod` treating NaNs as one."""
    dtype = rc.user_dtype(dtype, "nanprod")
    return _nan_reduce(
        "nanprod",
        folding.prod,
        1,
        a,
        axis,
        keepdims,
        where,
        False,
        dtype=dtype,
        out=out,
        initial=initial,
    )


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """:func:`mean` of the non-NaN elements (NaN where there are none)."""
    a = as_array("nanmean", a)
    where = rc.check_where("nanmean", where)
    rc.check_out("nanmean", out)
    if not dtypes.issubdtype(a.dtype, np.inexact):
        return folding.mean(a, axis, dtype, keepdims=keepdims, where=where)
    dtype = dtypes.to_inexact_dtype(a.dtype) if dtype is None else rc.user_dtype(dtype, "mean")
    kept = lax.bitwise_not(rc.isnan(a))
    normalizer = folding.sum(kept, axis, dtype=dtype, keepdims=keepdims, where=where)
    total = nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(total, normalizer)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """:func:`var` of the non-NaN elements."""
    a = as_array("nanvar", a)
    where = rc.check_where("nanvar", where)
    dtype = rc.user_dtype(dtype, "nanvar")
    rc.check_out("nanvar", out)
    return _nanvar(a, axis, dtype, ddof, keepdims, where, mean)


def _nanvar(a, axis, dtype, ddof, keepdims, where, a_mean):
    if a_mean is not None:
        check_arraylike("nanvar", a_mean)
    return _staged_nanvar(
        a, where, a_mean, rc.static_axis(axis, "nanvar"), dtype, ddof, bool(keepdims)
    )


@rc.staged(3, 4, 5, 6)
def _staged_nanvar(a, where, a_mean, axis, dtype, ddof, keepdims):
    compute_dtype, result_dtype = _moment_dtypes(a.dtype, dtype)
    a = rc.convert(a, compute_dtype)
    if a_mean is None:
        a_mean = nanmean(a, axis, dtype=compute_dtype, keepdims=True, where=where)
    else:
        a_mean = rc.convert(as_array("nanvar", a_mean), compute_dtype)
    nan_mask = rc.isnan(a)
    centered = rc.promoting_select(nan_mask, rc.init_value(compute_dtype, 0), lax.sub(a, a_mean))
    squares = _squared_magnitude(centered)
    normalizer = folding.sum(lax.bitwise_not(nan_mask), axis, keepdims=keepdims, where=where)
    normalizer = lax.sub(normalizer, lax.convert_element_type(ddof, normalizer.dtype))
    empty = lax.le(normalizer, rc.init_value(normalizer.dtype, 0))
    total = folding.sum(squares, axis, keepdims=keepdims, where=where)
    divisor = rc.convert(
        rc.promoting_select(empty, np.array(1, normalizer.dtype), normalizer), total.dtype
    )
    result = rc.promoting_select(empty, rc.init_value(total.dtype, np.nan), lax.div(total, divisor))
    return rc.convert(result, result_dtype)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """:func:`std` of the non-NaN elements."""
    a = as_array("nanstd", a)
    where = rc.check_where("nanstd", where)
    dtype = rc.user_dtype(dtype, "nanstd")
    rc.check_out("nanstd", out)
    return lax.sqrt(_nanvar(a, axis, dtype, ddof, keepdims, where, mean))
