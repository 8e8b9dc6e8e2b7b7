"""Quantiles of jax.numpy: ``quantile``, ``percentile``, ``median`` and their
NaN-ignoring variants (their argument handling is in :mod:`.statistics`).

The reduced axes are moved last and merged into one, the data sorted along it, and the
quantile positions ``q * (n - 1)`` read with a batched gather (``lax.sort`` places
NaNs last, so the NaN-ignoring variants count only the leading non-NaN values). The
methods 'linear', 'lower', 'higher', 'midpoint' and 'nearest' interpolate between the
two neighbouring order statistics; 'inverted_cdf' (the only one taking ``weights``)
picks the first value whose cumulative weight reaches ``q`` of the total.
"""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.ir import dtypes, spec_of, typed_value_aval
from lamina.lax import take_along
from lamina.numpy.base.arguments import check_arraylike, promote_dtypes_inexact
from lamina.numpy.base.shaping import broadcast_to, moveaxis
from lamina.numpy.reductions import rules as rc

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        axes = tuple(rc.canonicalize_axis(ax, ndim) for ax in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis")
        return axes
    return (rc.canonicalize_axis(axis, ndim),)


def _merge_axes_last(x, axes):
    """``x`` with ``axes`` moved to the end and merged into one axis."""
    kept = [d for d in range(x.ndim) if d not in axes]
    merged = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    x = lax.transpose(x, (*kept, *sorted(axes)))
    return lax.reshape(x, (*(x.shape[: len(kept)]), merged))


def _check_weights(a, weights, axes, axis):
    if dtypes.issubdtype(weights.dtype, np.complexfloating):
        raise ValueError("Weights cannot be complex types.")
    if weights.shape == a.shape:
        return weights
    if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
    expected = tuple(a.shape[ax] for ax in axes)
    if weights.shape != expected:
        raise ValueError(f"Weights shape {weights.shape} must match reduction axes {expected}")
    order = np.argsort(axes)
    weights = lax.transpose(weights, tuple(int(i) for i in order)) if len(axes) > 1 else weights
    return lax.broadcast_in_dim(weights, a.shape, tuple(sorted(axes)))


def quantile_impl(name, a, q, axis, out, overwrite_input, method, keepdims, weights, skip_nans):
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or out != None")
    check = [a, q] if weights is None else [a, q, weights]
    for value in check:
        check_arraylike(name, value)
    axis = rc.static_axis(axis, name)
    return _staged_quantile(a, q, weights, name, axis, method, bool(keepdims), skip_nans)


@rc.staged(3, 4, 5, 6, 7)
def _staged_quantile(a, q, weights, name, axis, method, keepdims, skip_nans):
    a, q = rc.to_array(a), rc.to_array(q)
    if method not in _METHODS:
        raise ValueError(
            "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or "
            "'inverted_cdf'"
        )
    if weights is not None:
        weights = rc.to_array(weights)
        if dtypes.issubdtype(weights.dtype, np.complexfloating):
            raise ValueError("Weights cannot be complex types.")
        if method != "inverted_cdf":
            raise NotImplementedError(
                f"{method} doesn't support weights. Only method 'inverted_cdf' supports weights."
            )
        a, weights = promote_dtypes_inexact(a, weights)
    else:
        (a,) = promote_dtypes_inexact(a)
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError(
            "quantile does not support complex input, as the operation is poorly defined."
        )
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    axes = _quantile_axes(axis, a.ndim)
    if weights is not None:
        weights = _check_weights(a, weights, axes, axis)
    if isinstance(axis, int) and spec_of(typed_value_aval(a, a.aval))[axes[0]] is not None:
        lax.sort(a, dimension=axes[0])  # JAX sorts along a split axis first: its error
    if any(a.shape[d] == 0 for d in axes):
        # JAX fails here too (its gather cannot take a slice of an empty axis).
        error = IndexError if skip_nans else TypeError
        raise error(
            f"jnp.{name}: cannot take a quantile over an empty axis; the reduced axes of "
            f"an array of shape {a.shape} hold no elements."
        )
    out_shape = tuple(
        1 if d in axes else n for d, n in enumerate(a.shape) if keepdims or d not in axes
    )
    if axis is None and keepdims and a.ndim == 0:
        out_shape = (1,)  # JAX flattens first, so a scalar keeps one axis
    if 0 in out_shape:  # no slices to take quantiles of
        return rc.full((*q.shape, *out_shape), 0, a.dtype)
    data = _merge_axes_last(a, axes)
    if weights is not None:
        weights = _merge_axes_last(weights, axes)
    (q_inexact,) = promote_dtypes_inexact(q)
    q_flat = lax.reshape(q_inexact, (q.size,))
    if method == "inverted_cdf":
        values = _inverted_cdf(data, q_flat, weights, skip_nans)
    else:
        values = _interpolated(data, q_flat, method, skip_nans)
    values = moveaxis(values, -1, 0)
    return rc.convert(lax.reshape(values, (*q.shape, *out_shape)), a.dtype)


def _sorted(data, weights, skip_nans):
    """``data`` (and ``weights``) sorted along the last axis; without ``skip_nans`` a row
    holding a NaN becomes all NaN."""
    if not skip_nans:
        has_nan = lax.reduce_or(rc.isnan(data), (data.ndim - 1,))
        data = rc.promoting_select(lax.expand_dims(has_nan, (data.ndim - 1,)), np.nan, data)
    if weights is None:
        return lax.sort(data, dimension=data.ndim - 1), None
    return lax.sort_key_val(data, weights, dimension=data.ndim - 1)


def _gather_rows(data, index):
    """``data[..., index[..., j]]`` for each row of ``data`` (index shaped
    ``data.shape[:-1] + (k,)``)."""
    index = lax.convert_element_type(index, np.int32)
    return take_along(data, index, data.ndim - 1)


def _interpolated(data, q, method, skip_nans):
    n = data.shape[-1]
    data, _ = _sorted(data, None, skip_nans)
    batch_shape = data.shape[:-1]
    positions_shape = (*batch_shape, q.shape[0])
    q = broadcast_to(q, positions_shape)
    if skip_nans:
        counts = lax.reduce_sum(
            lax.convert_element_type(lax.bitwise_not(rc.isnan(data)), q.dtype), (data.ndim - 1,)
        )
        last = lax.sub(lax.expand_dims(counts, (data.ndim - 1,)), np.array(1, q.dtype))
    else:
        last = np.array(n - 1, q.dtype)
    position = lax.mul(q, last)
    low, high = lax.floor(position), lax.ceil(position)
    high_weight = lax.sub(position, low)
    zero = np.array(0, q.dtype)
    low = lax.max(zero, lax.min(low, last))
    high = lax.max(zero, lax.min(high, last))
    low_value = _gather_rows(data, broadcast_to(low, positions_shape))
    high_value = _gather_rows(data, broadcast_to(high, positions_shape))
    if method == "linear":
        low_weight = lax.sub(np.array(1, q.dtype), high_weight)
        return lax.add(
            lax.mul(rc.convert(low_value, q.dtype), low_weight),
            lax.mul(rc.convert(high_value, q.dtype), high_weight),
        )
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "nearest":
        return rc.promoting_select(
            lax.le(high_weight, np.array(0.5, q.dtype)), low_value, high_value
        )
    half = np.array(0.5, data.dtype)
    return lax.mul(lax.add(low_value, high_value), half)


def _inverted_cdf(data, q, weights, skip_nans):
    last_axis = data.ndim - 1
    n = data.shape[-1]
    if weights is None:
        weights = rc.full(data.shape, 1, data.dtype)
    nan_data = rc.isnan(data)
    any_nan = lax.reduce_or(nan_data, (last_axis,))
    zero = np.array(0, weights.dtype)
    bad_weights = lax.bitwise_or(lax.lt(weights, zero), rc.isnan(weights))
    any_bad_weight = lax.reduce_or(bad_weights, (last_axis,))
    weights = rc.promoting_select(lax.bitwise_or(bad_weights, nan_data), zero, weights)
    data, weights = _sorted(data, weights, True)
    cumulative = lax.cumsum(weights, last_axis)
    total = rc.take_index(cumulative, -1, last_axis)
    q_row = lax.reshape(rc.convert(q, total.dtype), (1,) * last_axis + q.shape)
    target = lax.mul(lax.expand_dims(total, (last_axis,)), q_row)
    # How many cumulative weights fall short of each target: a count over the samples.
    below = lax.lt(
        lax.expand_dims(cumulative, (last_axis,)), lax.expand_dims(target, (last_axis + 1,))
    )
    index = lax.reduce_sum(lax.convert_element_type(below, np.int32), (last_axis + 1,))
    valid = (
        lax.reduce_sum(lax.convert_element_type(lax.bitwise_not(nan_data), np.int32), (last_axis,))
        if skip_nans
        else np.array(n, np.int32)
    )
    limit = lax.sub(valid, np.array(1, np.int32))
    if skip_nans:
        limit = lax.expand_dims(limit, (last_axis,))
    index = lax.max(np.array(0, np.int32), lax.min(index, limit))
    result = _gather_rows(data, broadcast_to(index, (*data.shape[:-1], q.shape[0])))
    if skip_nans:
        all_nan = lax.eq(valid, np.array(0, np.int32))
        force_nan = lax.bitwise_or(any_bad_weight, all_nan)
    else:
        force_nan = lax.bitwise_or(any_bad_weight, any_nan)
    return rc.promoting_select(lax.expand_dims(force_nan, (last_axis,)), np.nan, result)
