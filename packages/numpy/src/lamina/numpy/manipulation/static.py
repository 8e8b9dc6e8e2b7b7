"""Helpers shared by the shape-manipulation, stacking and padding modules: reading
shapes that must be known while tracing, and taking elements along an axis at indices
known in advance (as slices where they form runs, as one gather otherwise). Arrays
from arguments and other static values come from :mod:`lamina.numpy.base.static_values`."""

from __future__ import annotations

import math
import operator

import numpy as np
from lamina import lax
from lamina.interpreters import Tracer
from lamina.ir import canonicalize_dim, is_symbolic_dim
from lamina.lax import GatherDimensionNumbers, ScatterDimensionNumbers
from lamina.numpy.base.arguments import aval_of, to_array

# Above this many pieces, one gather is cheaper to trace and compile than the
# slices and the concatenation.
_MAX_SLICE_PIECES = 16


def shape_of(x) -> tuple[int, ...]:
    return tuple(aval_of(x).shape)


def axis_error(axis: int, ndim: int) -> np.exceptions.AxisError:
    """NumPy's AxisError: a ValueError and an IndexError at once, so code catching
    either (JAX raises one or the other, depending on the function) catches it."""
    return np.exceptions.AxisError(axis, ndim)


def axis_tuple(axis) -> tuple:
    """``axis`` (an int or a sequence of them) as a tuple."""
    if isinstance(axis, (tuple, list)):
        return tuple(axis)
    if isinstance(axis, np.ndarray) and axis.ndim:
        return tuple(axis.tolist())
    return (axis,)


def shape_3d(shape) -> tuple[int, ...]:
    """``shape`` with at least three axes, as ``atleast_3d`` and ``dstack`` make it:
    ``()`` becomes ``(1, 1, 1)``, ``(n,)`` ``(1, n, 1)``, ``(m, n)`` ``(m, n, 1)``."""
    if len(shape) >= 3:
        return shape
    return {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}[len(shape)]


def size_of(x) -> int:
    return math.prod(shape_of(x))


def static_shape(shape, what: str = "Shapes") -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints) as a tuple of Python ints; JAX's
    TypeError for anything else (floats, traced values)."""
    try:
        if isinstance(shape, Tracer):
            raise TypeError
        if type(shape) is int:
            return (shape,)
        if is_symbolic_dim(shape):
            return (shape,)
        if np.ndim(shape) == 0 and not isinstance(shape, (tuple, list)):
            return (operator.index(shape),)
        return tuple(canonicalize_dim(d) for d in _host_sequence(shape))
    except TypeError:
        raise TypeError(
            f"{what} must be 1D sequences of concrete values of integer type, got {shape}."
        ) from None


def _host_sequence(shape):
    if hasattr(shape, "aval") and not isinstance(shape, Tracer):
        return np.asarray(shape).tolist()
    return [_host_scalar(d) for d in shape]


def _host_scalar(d):
    if isinstance(d, Tracer):
        raise TypeError
    if hasattr(d, "aval") or isinstance(d, np.ndarray):
        value = np.asarray(d)
        if value.ndim or not np.issubdtype(value.dtype, np.integer):
            raise TypeError
        return int(value)
    return d


def slice_along(x, start: int, stop: int, axis: int):
    """``x[..., start:stop, ...]`` along ``axis`` (no-op when it is the whole axis)."""
    if start == 0 and stop == shape_of(x)[axis]:
        return x
    return lax.slice_in_dim(x, start, stop, axis=axis)


def broadcast_along(x, size: int, axis: int):
    """``x`` (of size 1 along ``axis``) repeated ``size`` times along ``axis``."""
    shape = list(shape_of(x))
    shape[axis] = size
    return lax.broadcast_in_dim(x, tuple(shape), tuple(range(len(shape))))


def _runs(indices: np.ndarray) -> list[tuple[int, int, int]]:
    """``indices`` cut into maximal runs ``(first, length, step)`` with step 1 or -1."""
    runs, start = [], 0
    while start < len(indices):
        step, end = 1, start + 1
        if end < len(indices) and indices[end] - indices[start] in (1, -1):
            step = int(indices[end] - indices[start])
            while end < len(indices) and indices[end] - indices[end - 1] == step:
                end += 1
        runs.append((int(indices[start]), end - start, step))
        start = end
    return runs


def take_static(x, indices, axis: int):
    """The elements of ``x`` at ``indices`` (known non-negative in-range ints) along
    ``axis``: slices (reversed where the run descends) joined by one concatenation, or
    a gather when the indices are too scattered for that."""
    indices = np.asarray(indices, dtype=np.int64).reshape(-1)
    size = shape_of(x)[axis]
    if len(indices) == size and np.array_equal(indices, np.arange(size)):
        return x
    if len(indices) == 0:
        return slice_along(x, 0, 0, axis)
    runs = _runs(indices)
    if len(runs) > _MAX_SLICE_PIECES:
        return gather_along(x, to_array(indices.astype(np.int32)), axis)
    pieces = []
    for first, length, step in runs:
        if step == 1:
            pieces.append(slice_along(x, first, first + length, axis))
        else:
            pieces.append(lax.rev(slice_along(x, first - length + 1, first + 1, axis), (axis,)))
    return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, axis)


def gather_along(x, indices, axis: int, mode="promise_in_bounds"):
    """``x`` indexed along ``axis`` by the 1-D integer array ``indices`` (which may be
    traced): the result has ``len(indices)`` elements along ``axis``."""
    shape = shape_of(x)
    numbers = GatherDimensionNumbers(
        offset_dims=tuple(d for d in range(len(shape)) if d != axis),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
    )
    sizes = tuple(1 if d == axis else n for d, n in enumerate(shape))
    starts = lax.reshape(indices, (*shape_of(indices), 1))
    return lax.gather(x, starts, numbers, sizes, mode=mode)


def scatter_1d(kind: str, operand, indices, updates, mode="drop"):
    """The 1-D ``operand`` with ``updates`` combined (``kind``: ``"add"`` or ``"set"``)
    into it at the 1-D ``indices`` (out-of-range ones dropped by default)."""
    numbers = ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    starts = lax.reshape(indices, (*shape_of(indices), 1))
    fun = lax.scatter_add if kind == "add" else lax.scatter
    return fun(operand, starts, updates, numbers, mode=mode)
