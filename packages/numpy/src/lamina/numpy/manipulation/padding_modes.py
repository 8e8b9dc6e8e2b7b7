"""The modes of ``jnp.pad``, each taking the array, its ``(before, after)`` pad
widths per axis (checked, non-negative ints) and the mode's options. Every mode is
built from slices, reversals, broadcasts and concatenations (a gather where a
periodic pattern would need too many slices), so all are differentiable."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.interpreters import vmap
from lamina.ir import dtypes
from lamina.lax import to_dtype
from lamina.numpy.base.arguments import aval_of, is_arraylike, to_array
from lamina.numpy.manipulation.shapes import broadcast_to
from lamina.numpy.manipulation.static import broadcast_along, shape_of, slice_along, take_static

__all__ = [
    "pad_constant",
    "pad_edge",
    "pad_linear_ramp",
    "pad_reflect",
    "pad_statistic",
    "pad_with_function",
    "pad_wrap",
]


def _like(x, value):
    """``value`` in ``x``'s dtype, weakly typed when ``x`` is (as JAX converts pad
    values)."""
    aval = aval_of(x)
    return to_dtype(value, aval.dtype, weak_type=aval.weak_type)


def _no_empty_axis(size: int, widths: tuple[int, int], mode: str) -> None:
    if size == 0 and (widths[0] > 0 or widths[1] > 0):
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _join(parts, axis: int):
    parts = [p for p in parts if shape_of(p)[axis] > 0] or parts[1:2]
    return parts[0] if len(parts) == 1 else lax.concatenate(parts, axis)


def _config(ndim: int, axis: int | None = None, before: int = 0, after: int = 0, widths=None):
    if widths is not None:
        return [(lo, hi, 0) for lo, hi in widths]
    return [(before, after, 0) if d == axis else (0, 0, 0) for d in range(ndim)]


def pad_constant(x, widths, constant_values):
    """Padding with ``constant_values``: one value, ``(before, after)``, or a pair per
    axis (the corners take the value of the later axis, as in NumPy)."""
    if not is_arraylike(constant_values):
        constant_values = np.asarray(constant_values)
    values = _like(x, to_array(constant_values))
    shape, ndim = shape_of(values), len(shape_of(x))
    if shape in ((), (1,)):
        return lax.pad(x, lax.reshape(values, ()), _config(ndim, widths=widths))
    if len(shape) == 1 and shape[-1] != 2:
        raise ValueError(
            f"jnp.pad: constant_values has unsupported shape {shape}. If the shape is 1D or "
            "2D, the last dimension must be of size 1 or 2."
        )
    table = broadcast_to(values, (ndim, 2))
    for axis, pair in enumerate(widths):
        for side, width in enumerate(pair):
            if width:
                value = lax.reshape(lax.slice(table, (axis, side), (axis + 1, side + 1)), ())
                x = lax.pad(
                    x, value, _config(ndim, axis, *((width, 0) if side == 0 else (0, width)))
                )
    return x


def pad_edge(x, widths):
    """Padding with copies of the first and last elements along each axis."""
    for axis, (before, after) in enumerate(widths):
        size = shape_of(x)[axis]
        _no_empty_axis(size, (before, after), "edge")
        if before or after:
            first = broadcast_along(slice_along(x, 0, 1, axis), before, axis)
            last = broadcast_along(slice_along(x, size - 1, size, axis), after, axis)
            x = _join([first, x, last], axis)
    return x


def pad_wrap(x, widths):
    """Periodic padding: the array continues with its other end."""
    for axis, (before, after) in enumerate(widths):
        size = shape_of(x)[axis]
        _no_empty_axis(size, (before, after), "wrap")
        if before or after:
            x = take_static(x, np.arange(-before, size + after) % size, axis)
    return x


def _mirror_indices(size: int, before: int, after: int, mode: str) -> np.ndarray:
    """For each padded position, the element it mirrors: reflections about the edge
    elements (``reflect``) or about the edges between elements (``symmetric``),
    repeated as far as the padding reaches."""
    positions = np.arange(-before, size + after)
    if mode == "reflect":
        if size == 1:
            return np.zeros_like(positions)
        period = 2 * (size - 1)
        folded = positions % period
        return np.where(folded < size, folded, period - folded)
    folded = positions % (2 * size)
    return np.where(folded < size, folded, 2 * size - 1 - folded)


def _odd_extension(x, axis: int, size: int, count: int, at_front: bool, mode: str):
    """``count`` elements of odd reflection added on one side: each mirrored stretch
    (at most one period of the original axis) is negated about the current edge
    element, so the padding continues the array's trend."""
    skip = 1 if mode == "reflect" and size > 1 else 0
    while count > 0:
        length = shape_of(x)[axis]
        chunk = min(count, size - skip)
        if at_front:
            mirrored = slice_along(x, skip, skip + chunk, axis)
            edge = slice_along(x, 0, 1, axis)
        else:
            mirrored = slice_along(x, length - skip - chunk, length - skip, axis)
            edge = slice_along(x, length - 1, length, axis)
        edge = broadcast_along(edge, chunk, axis)
        piece = lax.sub(lax.add(edge, edge), lax.rev(mirrored, (axis,)))
        x = lax.concatenate([piece, x] if at_front else [x, piece], axis)
        count -= chunk
    return x


def pad_reflect(x, widths, mode: str, reflect_type: str):
    """``reflect`` / ``symmetric`` padding, ``even`` (mirrored values) or ``odd``
    (mirrored and negated about the edge value)."""
    for axis, (before, after) in enumerate(widths):
        size = shape_of(x)[axis]
        _no_empty_axis(size, (before, after), mode)
        if not (before or after):
            continue
        if reflect_type == "even":
            x = take_static(x, _mirror_indices(size, before, after, mode), axis)
        else:
            x = _odd_extension(x, axis, size, before, True, mode)
            x = _odd_extension(x, axis, size, after, False, mode)
    return x


def _ramp(start, edge, count: int, axis: int, compute_dtype):
    """``count`` values from ``start`` towards ``edge`` (which they do not reach), laid
    along ``axis``: ``start * (1 - t) + edge * t`` for ``t = k / count``."""
    real = np.dtype(dtypes.finfo(compute_dtype).dtype)
    shape = list(shape_of(edge))
    shape[axis] = count
    t = lax.div(
        lax.broadcasted_iota(real, tuple(shape), axis), lax.convert_element_type(count, real)
    )
    t = lax.convert_element_type(t, compute_dtype)
    one = lax.convert_element_type(1, compute_dtype)
    start = lax.convert_element_type(start, compute_dtype)
    return lax.add(lax.mul(start, lax.sub(one, t)), lax.mul(broadcast_along(edge, count, axis), t))


def pad_linear_ramp(x, widths, end_values):
    """Padding that ramps linearly from the edge values to ``end_values``."""
    aval = aval_of(x)
    compute_dtype = dtypes.to_inexact_dtype(aval.dtype)
    integer = dtypes.issubdtype(aval.dtype, np.integer)
    for axis, (before, after) in enumerate(widths):
        size = shape_of(x)[axis]
        _no_empty_axis(size, (before, after), "linear_ramp")
        if not (before or after):
            continue
        parts = [x]
        for width, end, at_front in ((before, end_values[axis][0], True),
                                     (after, end_values[axis][1], False)):  # fmt: skip
            if not width:
                continue
            edge = slice_along(x, 0, 1, axis) if at_front else slice_along(x, size - 1, size, axis)
            ramp = _ramp(
                end, lax.convert_element_type(edge, compute_dtype), width, axis, compute_dtype
            )
            ramp = _like(x, lax.floor(ramp) if integer else ramp)
            parts = [ramp, *parts] if at_front else [*parts, lax.rev(ramp, (axis,))]
        x = lax.concatenate(parts, axis)
    return x


def _window_bounds(size: int, length: int, at_front: bool) -> tuple[int, int]:
    """The ``length`` elements at one end of an axis (Python slice rules, so lengths
    past the axis take all of it)."""
    start, stop, _ = (slice(0, length) if at_front else slice(-length, None)).indices(size)
    return start, max(start, stop)


def _statistic(window, axis: int, mode: str):
    """The mode's statistic of ``window`` along ``axis`` (kept as a size-1 axis)."""
    dtype = aval_of(window).dtype
    if mode in ("maximum", "minimum"):
        if dtype == np.bool_:
            reduce = lax.reduce_or if mode == "maximum" else lax.reduce_and
        else:
            reduce = lax.reduce_max if mode == "maximum" else lax.reduce_min
        return lax.expand_dims(reduce(window, (axis,)), (axis,))
    compute_dtype = dtypes.to_inexact_dtype(dtype)
    values = lax.convert_element_type(window, compute_dtype)
    count = shape_of(window)[axis]
    if mode == "mean":
        total = lax.expand_dims(lax.reduce_sum(values, (axis,)), (axis,))
        return lax.div(total, lax.convert_element_type(count, compute_dtype))
    ordered = lax.sort(values, dimension=axis)
    low = slice_along(ordered, (count - 1) // 2, (count - 1) // 2 + 1, axis)
    high = slice_along(ordered, count // 2, count // 2 + 1, axis)
    median = lax.mul(lax.add(low, high), lax.convert_element_type(0.5, compute_dtype))
    if dtypes.issubdtype(compute_dtype, np.inexact):
        has_nan = lax.expand_dims(lax.reduce_or(lax.ne(values, values), (axis,)), (axis,))
        median = lax.select(has_nan, lax.full_like(median, np.nan), median)
    return median


def pad_statistic(x, widths, mode: str, stat_lengths):
    """Padding with the maximum, minimum, mean or median of the ``stat_lengths`` edge
    elements on each side (the whole axis when None); integer results are rounded."""
    aval = aval_of(x)
    if mode in ("maximum", "minimum") and 0 in aval.shape:
        raise ValueError(
            f"Cannot apply '{mode}' padding to an empty array: the {mode} of no elements "
            "is undefined."
        )
    integer = dtypes.issubdtype(aval.dtype, np.integer)
    for axis, (before, after) in enumerate(widths):
        size = shape_of(x)[axis]
        lengths = (size, size) if stat_lengths is None else stat_lengths[axis]
        if stat_lengths is not None and 0 in lengths:
            raise ValueError("stat_length of 0 yields no value for padding")
        if not (before or after):
            continue
        fills = []
        for width, length, at_front in ((before, lengths[0], True), (after, lengths[1], False)):
            start, stop = _window_bounds(size, int(length), at_front)
            value = _statistic(slice_along(x, start, stop, axis), axis, mode)
            if integer and mode in ("mean", "median"):
                value = lax.round(value, lax.RoundingMethod.TO_NEAREST_EVEN)
            fills.append(broadcast_along(_like(x, value), width, axis))
        x = _join([fills[0], x, fills[1]], axis)
    return x


def pad_with_function(x, widths, function, kwargs):
    """NumPy's callable mode: the array is zero-padded, then ``function(row, (before,
    after), axis, kwargs)`` fills in every 1-D row along each axis in turn."""
    ndim = len(shape_of(x))
    x = pad_constant(x, widths, 0)
    for axis in range(ndim):
        shape = shape_of(x)
        rows = int(np.prod(shape, dtype=np.int64)) // shape[axis] if shape[axis] else 0
        if rows == 0:
            continue
        order = (*(d for d in range(ndim) if d != axis), axis)
        moved = lax.transpose(x, order) if axis != ndim - 1 else x
        flat = lax.reshape(moved, (rows, shape[axis]))
        filled = vmap(lambda row, a=axis: function(row, widths[a], a, kwargs))(flat)
        filled = lax.reshape(to_array(filled), shape_of(moved))
        x = lax.transpose(filled, tuple(np.argsort(order))) if axis != ndim - 1 else filled
    return x
