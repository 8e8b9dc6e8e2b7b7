"""The folding reductions of jax.numpy (``sum``, ``prod``, ``max``, ``min``, ``all``,
``any``, ``mean``, ``ptp``, ``count_nonzero``) and the arg-reductions (``argmax``,
``argmin`` and their NaN-ignoring variants).

The folding reductions share one driver (:func:`_reduce`) that applies JAX's rules:
``axis`` may be None, an int or a tuple; ``where`` masks elements out (replacing them
by the operation's identity, so reductions without one need ``initial``); ``initial``
is folded in after the reduction; small integers and bools are summed in the default
integer type (``promote_integers``); float16/bfloat16 sums accumulate in float32.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np
from lamina import lax
from lamina.ir import dtypes
from lamina.numpy.base.arguments import check_arraylike, from_jax_array
from lamina.numpy.base.shaping import broadcast_to, ravel
from lamina.numpy.base.static_values import as_array
from lamina.numpy.reductions import rules as rc

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "max",
    "mean",
    "min",
    "nanargmax",
    "nanargmin",
    "prod",
    "ptp",
    "sum",
]

_builtin_any = any


class _Monoid(NamedTuple):
    """How one reduction folds: ``fold(x, axes)`` and the pairwise ``combine`` (and
    their boolean versions), and the value masked-out elements take (``None`` when
    the operation has no identity, as max and min)."""

    fold: object
    combine: object
    bool_fold: object
    bool_combine: object
    identity: object
    mask_value: object


_SUM = _Monoid(lax.reduce_sum, lax.add, lax.reduce_or, lax.bitwise_or, 0, 0)
_PROD = _Monoid(lax.reduce_prod, lax.mul, lax.reduce_and, lax.bitwise_and, 1, 1)
_MAX = _Monoid(lax.reduce_max, lax.max, lax.reduce_max, lax.max, None, -np.inf)
_MIN = _Monoid(lax.reduce_min, lax.min, lax.reduce_min, lax.min, None, np.inf)
_ALL = _Monoid(lax.reduce_and, lax.bitwise_and, lax.reduce_and, lax.bitwise_and, True, True)
_ANY = _Monoid(lax.reduce_or, lax.bitwise_or, lax.reduce_or, lax.bitwise_or, False, False)


def _to_bool(x):
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        x = lax.real(x)
    return rc.convert(x, np.bool_)


def _to_numeric(x):
    return rc.convert(x, dtypes.default_int_dtype()) if x.dtype == np.bool_ else x


def _reduce(
    name,
    monoid,
    a,
    axis,
    dtype,
    out,
    keepdims,
    initial,
    where,
    *,
    preprocess=None,
    promote_integers=False,
    upcast_f16=False,
):
    rc.check_out(name, out)
    a = as_array(name, a)
    where = rc.check_where(name, where)
    axis = rc.static_axis(axis, name)
    if initial is not None:
        check_arraylike(name, initial)
    return _staged_reduce(
        a,
        initial,
        where,
        name,
        monoid,
        axis,
        dtype,
        bool(keepdims),
        preprocess,
        promote_integers,
        upcast_f16,
    )


@rc.staged(3, 4, 5, 6, 7, 8, 9, 10)
def _staged_reduce(
    a, initial, where, name, monoid, axis, dtype, keepdims, preprocess, promote_integers, upcast_f16
):
    has_identity = monoid.identity is not None
    if initial is None and not has_identity and where is not None:
        raise ValueError(
            f"reduction operation {name} does not have an identity, so to use a where mask "
            "one has to specify 'initial'"
        )
    if preprocess is not None:
        a = preprocess(a)
    axes = rc.reduction_axes(axis, a.ndim)
    if initial is None and not has_identity and _builtin_any(a.shape[d] == 0 for d in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype is None:
        result_dtype = rc.promote_integer_dtype(a.dtype) if promote_integers else a.dtype
    else:
        result_dtype = rc.user_dtype(dtype, name)
    compute_dtype = result_dtype
    if upcast_f16 and dtypes.issubdtype(result_dtype, np.inexact):
        compute_dtype = rc.upcast_f16(result_dtype)
    a = rc.convert(a, compute_dtype)
    is_bool = compute_dtype == np.bool_
    fold = monoid.bool_fold if is_bool else monoid.fold
    combine = monoid.bool_combine if is_bool else monoid.combine
    if where is not None:
        a = rc.promoting_select(where, a, rc.init_value(compute_dtype, monoid.mask_value))
    result = fold(a, tuple(sorted(axes)))
    if initial is not None:
        initial = rc.convert(as_array(name, initial), compute_dtype)
        if initial.shape != ():
            raise ValueError(f"initial value must be a scalar. Got array of shape {initial.shape}")
        result = combine(initial, result)
    if keepdims:
        result = rc.expand_axes(result, axes)
    return rc.convert(result, result_dtype)


def sum(
    a,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,
    promote_integers=True,
):
    """Sum of the elements of ``a`` over ``axis`` (``jax.numpy.sum``)."""
    return _reduce(
        "sum",
        _SUM,
        a,
        axis,
        dtype,
        out,
        keepdims,
        initial,
        where,
        preprocess=_to_numeric,
        promote_integers=promote_integers,
        upcast_f16=dtype is None,
    )


def prod(
    a,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,
    promote_integers=True,
):
    """Product of the elements of ``a`` over ``axis`` (``jax.numpy.prod``)."""
    return _reduce(
        "prod",
        _PROD,
        a,
        axis,
        dtype,
        out,
        keepdims,
        initial,
        where,
        preprocess=_to_numeric,
        promote_integers=promote_integers,
        upcast_f16=dtype is None,
    )


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum of ``a`` over ``axis``; NaN propagates (``jax.numpy.max``)."""
    return _reduce("max", _MAX, a, axis, None, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum of ``a`` over ``axis``; NaN propagates (``jax.numpy.min``)."""
    return _reduce("min", _MIN, a, axis, None, out, keepdims, initial, where)


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Alias of :func:`max`."""
    return max(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Alias of :func:`min`."""
    return min(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    """Whether every element of ``a`` over ``axis`` is true (non-zero)."""
    return _reduce("all", _ALL, a, axis, None, out, keepdims, None, where, preprocess=_to_bool)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    """Whether some element of ``a`` over ``axis`` is true (non-zero)."""
    return _reduce("any", _ANY, a, axis, None, out, keepdims, None, where, preprocess=_to_bool)


def _axes_size(shape, axes) -> int:
    return math.prod(shape[d] for d in axes)  # symbolic when the axes are


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis`` (ints and bools give the default float)."""
    rc.check_out("mean", out)
    a = as_array("mean", a)
    where = rc.check_where("mean", where)
    axis = rc.static_axis(axis, "mean")
    if dtype is None:
        result_dtype = dtypes.to_inexact_dtype(a.dtype)
        compute_dtype = rc.upcast_f16(result_dtype)
    else:
        result_dtype = compute_dtype = rc.user_dtype(dtype, "mean")
    return _staged_mean(a, where, axis, bool(keepdims), compute_dtype, result_dtype)


@rc.staged(2, 3, 4, 5)
def _staged_mean(a, where, axis, keepdims, compute_dtype, result_dtype):
    """The sum and the division in one program (one dispatch when eager)."""
    n = count(a, axis, keepdims, where, compute_dtype)
    total = sum(a, axis, dtype=compute_dtype, keepdims=keepdims, where=where)
    return rc.convert(lax.div(total, n), result_dtype)


def count(a, axis, keepdims, where, dtype):
    """How many elements of ``a`` a reduction over ``axis`` (masked by ``where``) sees."""
    if where is None:
        n = _axes_size(a.shape, rc.reduction_axes(axis, a.ndim))
        return lax.convert_element_type(n, dtype)
    return sum(broadcast_to(where, a.shape), axis, dtype=dtype, keepdims=keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range (maximum minus minimum) of ``a`` over ``axis``."""
    a = from_jax_array(a)
    rc.check_out("ptp", out)
    a = as_array("ptp", a)
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    """Number of non-zero elements of ``a`` over ``axis`` (default integer dtype)."""
    a = as_array("count_nonzero", a)
    nonzero = lax.ne(a, rc.init_value(a.dtype, 0))
    return sum(nonzero, axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def _arg_reduce(name, lax_fn, a, axis, out, keepdims):
    a = as_array(name, a)
    rc.check_out(name, out)
    axis = None if axis is None else operator.index(axis)
    return _staged_arg_reduce(a, name, lax_fn, axis, bool(keepdims))


@rc.staged(1, 2, 3, 4)
def _staged_arg_reduce(a, name, lax_fn, axis, keepdims):
    if axis is None:
        kept_axes = tuple(range(a.ndim))
        a, axis = ravel(a), 0
    else:
        axis = rc.canonicalize_axis(axis, a.ndim)
        kept_axes = (axis,)
    if a.shape[axis] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = lax_fn(a, axis, dtypes.default_int_dtype())
    return rc.expand_axes(result, kept_axes) if keepdims else result


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the (first) maximum of ``a`` along ``axis`` (flattened when None); a NaN
    counts as the maximum."""
    a = from_jax_array(a)
    return _arg_reduce("argmax", lax.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the (first) minimum of ``a`` along ``axis``; a NaN counts as the minimum."""
    a = from_jax_array(a)
    return _arg_reduce("argmin", lax.argmin, a, axis, out, keepdims)


def _nan_arg_reduce(name, arg_fn, replacement, a, axis, out, keepdims):
    rc.check_out(name, out)
    a = as_array(name, a)
    if not dtypes.issubdtype(a.dtype, np.inexact):
        return arg_fn(a, axis=axis, keepdims=keepdims)
    nan_mask = rc.isnan(a)
    result = arg_fn(
        rc.promoting_select(nan_mask, rc.init_value(a.dtype, replacement), a),
        axis=axis,
        keepdims=keepdims,
    )
    all_nan = all(nan_mask, axis=axis, keepdims=bool(keepdims))
    return rc.promoting_select(all_nan, np.array(-1, result.dtype), result)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """:func:`argmax` ignoring NaNs; -1 where every element is NaN."""
    a = from_jax_array(a)
    return _nan_arg_reduce("nanargmax", argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """:func:`argmin` ignoring NaNs; -1 where every element is NaN."""
    a = from_jax_array(a)
    return _nan_arg_reduce("nanargmin", argmin, np.inf, a, axis, out, keepdims)
