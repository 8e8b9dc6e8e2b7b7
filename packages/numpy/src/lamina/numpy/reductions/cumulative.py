"""Cumulative reductions of jax.numpy: ``cumsum``, ``cumprod``, ``nancumsum``,
``nancumprod`` (NumPy's forms: ``axis=None`` flattens) and the array-API forms
``cumulative_sum``/``cumulative_prod`` (``include_initial``). All run on lax's
``cumsum``/``cumprod`` primitives."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.ir import ShardingTypeError, dtypes, spec_of, typed_value_aval
from lamina.numpy.base.shaping import ravel
from lamina.numpy.base.static_values import as_array, concrete
from lamina.numpy.reductions import rules as rc

__all__ = [
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "nancumprod",
    "nancumsum",
]


def _cumulative(name, lax_fn, a, axis, dtype, out, *, nan_fill=None, promote_integers=False):
    a = as_array(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported")
    axis = concrete(axis, f"The axis argument to jnp.{name} must be known statically.")
    dtype = None if dtype is None else np.dtype(dtype)
    return _staged_cumulative(a, name, lax_fn, axis, dtype, nan_fill, promote_integers)


def check_flattenable(name: str, aval) -> None:
    """JAX's error for a running reduction over a flattened array of type ``aval`` (with
    its sharding) split over mesh axes."""
    if any(e is not None for e in spec_of(aval)):
        raise ShardingTypeError(
            f"The input should be fully replicated when axis is not specified to {name}. "
            f"Got input type={aval}"
        )


@rc.staged(1, 2, 3, 4, 5, 6)
def _staged_cumulative(a, name, lax_fn, axis, dtype, nan_fill, promote_integers):
    if axis is None or a.ndim == 0:
        check_flattenable(name, typed_value_aval(a, a.aval))
        a = ravel(a)
    axis = rc.canonicalize_axis(0 if axis is None else axis, a.ndim)
    if nan_fill is not None and dtypes.issubdtype(a.dtype, np.inexact):
        a = rc.promoting_select(rc.isnan(a), rc.init_value(a.dtype, nan_fill), a)
    if dtype is None:
        promote = promote_integers or a.dtype == np.bool_
        result_dtype = rc.promote_integer_dtype(a.dtype) if promote else a.dtype
        compute_dtype = result_dtype
    elif np.dtype(dtype) == np.bool_:
        # A boolean running sum is a running "any": count in integers, test at the end.
        result_dtype = np.dtype(np.bool_)
        if a.dtype != np.bool_:
            a = lax.ne(a, rc.init_value(a.dtype, 0))
        compute_dtype = rc.promote_integer_dtype(result_dtype)
    else:
        result_dtype = compute_dtype = rc.user_dtype(dtype, name)
    a = rc.convert(a, compute_dtype)
    # XLA refuses a zero-sized scan window: an empty axis has nothing to accumulate.
    result = lax_fn(a, axis) if a.shape[axis] else a
    return rc.convert(result, result_dtype)


def cumsum(a, axis=None, dtype=None, out=None):
    """Running sum of ``a`` along ``axis`` (of the flattened array when None)."""
    return _cumulative("cumsum", lax.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Running product of ``a`` along ``axis`` (of the flattened array when None)."""
    return _cumulative("cumprod", lax.cumprod, a, axis, dtype, out)


def nancumsum(a, axis=None, dtype=None, out=None):
    """:func:`cumsum` treating NaNs as zero."""
    return _cumulative("nancumsum", lax.cumsum, a, axis, dtype, out, nan_fill=0)


def nancumprod(a, axis=None, dtype=None, out=None):
    """:func:`cumprod` treating NaNs as one."""
    return _cumulative("nancumprod", lax.cumprod, a, axis, dtype, out, nan_fill=1)


def _array_api_cumulative(
    name, what, lax_fn, identity, x, axis, dtype, include_initial, promote_integers
):
    x = as_array(name, x)
    if x.ndim == 0:
        raise ValueError(
            f"The input must be non-scalar to take a cumulative {what}, however a scalar "
            "value or scalar array was given."
        )
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                f"The input array has rank {x.ndim}, however axis was not set to an explicit "
                "value. The axis argument is only optional for one-dimensional arrays."
            )
        axis = 0
    axis = rc.canonicalize_axis(axis, x.ndim)
    dtype = rc.user_dtype(dtype, name)
    result = _cumulative(name, lax_fn, x, axis, dtype, None, promote_integers=promote_integers)
    if not include_initial:
        return result
    shape = list(x.shape)
    shape[axis] = 1
    return lax.concatenate([rc.full(shape, identity, result.dtype), result], axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sum along ``axis`` (optional only for 1-D input); ``include_initial``
    prepends the zero."""
    return _array_api_cumulative(
        "cumulative_sum",
        "sum",
        lax.cumsum,
        0,
        x,
        axis,
        dtype,
        include_initial,
        promote_integers=True,
    )


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running product along ``axis`` (optional only for 1-D input); ``include_initial``
    prepends the one."""
    return _array_api_cumulative(
        "cumulative_prod",
        "product",
        lax.cumprod,
        1,
        x,
        axis,
        dtype,
        include_initial,
        promote_integers=False,
    )
