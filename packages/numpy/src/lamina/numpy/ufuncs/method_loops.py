"""The methods of ``jnp.ufunc`` for any binary function, in loops over the reduced
axis (``fori_loop`` for ``reduce``, ``scan`` for ``accumulate`` and ``at``,
``fori_loop`` for ``reduceat``), plus the scatter behind ``ufunc.at`` of the ufuncs
that have a lax scatter (add, subtract, multiply, maximum, minimum)."""

from __future__ import annotations

import math

import numpy as np
from lamina import lax
from lamina.interpreters import Tracer, eval_shape
from lamina.interpreters import vmap as vmap_
from lamina.numpy.base.arguments import aval_of, to_array
from lamina.numpy.base.shaping import broadcast_to
from lamina.numpy.ufuncs.operands import dtype_of, select

__all__ = [
    "accumulate_by_scan",
    "at_by_scan",
    "at_by_scatter",
    "call_elementwise",
    "reduce_by_loop",
    "reduceat_by_loop",
    "result_dtype",
]


def result_dtype(func, *args):
    """The dtype ``func`` gives for scalars of the dtypes of ``args``."""
    ones = [np.ones((), dtype_of(a)) for a in args]
    return eval_shape(func, *ones).dtype


def call_elementwise(func, args):
    """``func`` applied to each element of the broadcast ``args`` (``vmap`` over the
    flattened elements), as ``np.frompyfunc`` applies a Python function."""
    args = [to_array(a) for a in args]
    shape = np.broadcast_shapes(*(aval_of(a).shape for a in args))
    if not shape:
        return func(*args)
    size = math.prod(shape)
    flat = [lax.reshape(broadcast_to(a, shape), (size,)) for a in args]
    out = vmap_(func)(*flat)
    if isinstance(out, tuple):
        return tuple(lax.reshape(o, shape) for o in out)
    return lax.reshape(out, shape)


def _axes_first(x, axes):
    """``x`` with ``axes`` moved to the front and merged into one (C order)."""
    shape = aval_of(x).shape
    rest = [i for i in range(len(shape)) if i not in axes]
    x = lax.transpose(x, (*axes, *rest))
    return lax.reshape(x, (math.prod(shape[i] for i in axes), *(shape[i] for i in rest)))


def reduce_by_loop(ufunc, a, axes, dtype, keepdims, initial, where):
    """``ufunc.reduce`` folding the merged ``axes`` one element at a time, in order."""
    a = to_array(a)
    shape = aval_of(a).shape
    if initial is None:
        initial = ufunc.identity
    if dtype is None:
        dtype = result_dtype(ufunc._func, a, a)
    if keepdims:
        final_shape = tuple(1 if i in axes else d for i, d in enumerate(shape))
    else:
        final_shape = tuple(d for i, d in enumerate(shape) if i not in axes)
    arr = _axes_first(a, axes)
    mask = None if where is None else _axes_first(broadcast_to(where, shape), axes)
    length = aval_of(arr).shape[0]
    if length == 0:
        if initial is None:
            raise ValueError(
                f"zero-size array to reduction operation {ufunc.__name__} which has no identity"
            )
        return lax.full(final_shape, initial, dtype)

    def element(i):
        return lax.convert_element_type(lax.dynamic_index_in_dim(arr, i, 0, False), dtype)

    def body(i, acc):
        new = lax.convert_element_type(ufunc(acc, element(i)), dtype)
        if mask is None:
            return new
        return select(lax.dynamic_index_in_dim(mask, i, 0, False), new, acc)

    if initial is None:
        start, acc = 1, element(0)
    else:
        start = 0
        initial = lax.convert_element_type(to_array(initial), dtype)
        acc = broadcast_to(initial, aval_of(arr).shape[1:])
    result = lax.fori_loop(start, length, body, acc)
    return lax.reshape(result, final_shape)


def accumulate_by_scan(ufunc, a, axis, dtype):
    """``ufunc.accumulate``: running results along ``axis``, in order."""
    a = to_array(a)
    if dtype is None:
        dtype = result_dtype(ufunc._func, a, a)
    shape = aval_of(a).shape
    if math.prod(shape) == 0:
        return lax.full(shape, 0, dtype)
    arr = _axes_first(a, (axis,))
    first = lax.convert_element_type(lax.index_in_dim(arr, 0, 0, False), dtype)

    def step(acc, x):
        new = lax.convert_element_type(ufunc(acc, lax.convert_element_type(x, dtype)), dtype)
        return new, new

    _, rest = lax.scan(step, first, lax.slice_in_dim(arr, 1, shape[axis], axis=0))
    out = lax.concatenate([lax.expand_dims(first, (0,)), rest], 0)
    perm = list(range(1, len(shape)))
    perm.insert(axis, 0)
    return lax.transpose(out, tuple(perm))


def _integer_index_parts(indices):
    """``indices`` as a tuple of integer arrays, or None when it holds anything else
    (slices, ``None``, ``Ellipsis``, boolean masks) that only full indexing handles."""
    parts = indices if isinstance(indices, tuple) else (indices,)
    out = []
    for part in parts:
        if isinstance(part, (bool, np.bool_)) or part is None or part is Ellipsis:
            return None
        if isinstance(part, (int, np.integer)):
            out.append(np.asarray(part, np.int32))
            continue
        if isinstance(part, (list, slice)):
            return None
        if not (isinstance(part, (Tracer, np.ndarray)) or hasattr(part, "aval")):
            return None
        if not np.issubdtype(dtype_of(part), np.integer):
            return None
        out.append(part)
    return tuple(out)


def _scatter_plan(a, parts):
    """Flattened (N, k) int32 start indices (negative ones counted from the end), the
    index shape, and the dimension numbers addressing ``a[parts]``."""
    shape = aval_of(a).shape
    k = len(parts)
    if k > len(shape):
        raise IndexError(
            f"Too many indices: {len(shape)}-dimensional array indexed with {k} regular indices."
        )
    index_shape = np.broadcast_shapes(*(aval_of(p).shape for p in parts))
    count = math.prod(index_shape)
    columns = []
    for dim, part in enumerate(parts):
        part = lax.convert_element_type(to_array(part), np.int32)
        part = lax.reshape(broadcast_to(part, index_shape), (count, 1))
        wrapped = lax.add(part, np.array(shape[dim], np.int32))
        columns.append(select(lax.lt(part, np.array(0, np.int32)), wrapped, part))
    starts = lax.concatenate(columns, 1) if columns else np.zeros((count, 0), np.int32)
    window = len(shape) - k
    numbers = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, 1 + window)),
        inserted_window_dims=tuple(range(k)),
        scatter_dims_to_operand_dims=tuple(range(k)),
    )
    return starts, index_shape, count, numbers


def _flat_updates(b, index_shape, count, window_shape, dtype):
    b = lax.convert_element_type(to_array(b), dtype)
    b = broadcast_to(b, (*index_shape, *window_shape))
    return lax.reshape(b, (count, *window_shape))


_SCATTERS = {
    "add": lax.scatter_add,
    "subtract": lax.scatter_sub,
    "multiply": lax.scatter_mul,
    "maximum": lax.scatter_max,
    "minimum": lax.scatter_min,
}


def at_by_scatter(ufunc, a, indices, b):
    """``ufunc.at`` as one lax scatter (repeated indices accumulate; out-of-bounds
    updates are dropped, as ``x.at[...]`` does)."""
    a = to_array(a)
    parts = _integer_index_parts(indices)
    if parts is None:
        return _at_by_indexing(ufunc, a, indices, b)
    dtype = dtype_of(a)
    work = lax.convert_element_type(a, np.int32) if dtype == np.bool_ else a
    if dtype == np.bool_:  # counts of true updates, then back to bool
        b = lax.convert_element_type(lax.convert_element_type(to_array(b), np.bool_), np.int32)
    starts, index_shape, count, numbers = _scatter_plan(work, parts)
    window_shape = aval_of(work).shape[len(parts) :]
    updates = _flat_updates(b, index_shape, count, window_shape, dtype_of(work))
    scatter = _SCATTERS[ufunc.__name__]
    out = scatter(work, starts, updates, numbers, mode=lax.GatherScatterMode.FILL_OR_DROP)
    return lax.convert_element_type(out, dtype)


def _at_by_indexing(ufunc, a, indices, b):
    """``ufunc.at`` for index forms beyond integer arrays: through ``x.at[...]``."""
    ref = a.at[indices]
    method = {"add": "add", "subtract": "subtract", "multiply": "multiply",
              "maximum": "max", "minimum": "min"}[ufunc.__name__]  # fmt: skip
    return getattr(ref, method)(b)


def at_by_scan(ufunc, a, indices, args):
    """``ufunc.at`` for any ufunc: ``a[i] = ufunc(a[i], b[i])`` for each index in turn."""
    dtype = result_dtype(ufunc._func, a, *args)
    a = lax.convert_element_type(to_array(a), dtype)
    args = [lax.convert_element_type(to_array(x), dtype) for x in args]
    parts = _integer_index_parts(indices)
    if parts is None:
        ref = a.at[indices]
        return ref.set(ufunc(ref.get(), *args))
    starts, index_shape, count, numbers = _scatter_plan(a, parts)
    window_shape = aval_of(a).shape[len(parts) :]
    args = [_flat_updates(x, index_shape, count, window_shape, dtype) for x in args]
    gather_numbers = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(len(window_shape))),
        collapsed_slice_dims=numbers.inserted_window_dims,
        start_index_map=numbers.scatter_dims_to_operand_dims,
    )
    slice_sizes = (1,) * len(parts) + tuple(window_shape)
    one_index = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(len(window_shape))),
        inserted_window_dims=numbers.inserted_window_dims,
        scatter_dims_to_operand_dims=numbers.scatter_dims_to_operand_dims,
    )

    def step(acc, xs):
        start, *values = xs
        current = lax.gather(acc, start, gather_numbers, slice_sizes,
                             mode=lax.GatherScatterMode.CLIP)  # fmt: skip
        new = lax.convert_element_type(ufunc(current, *values), dtype)
        acc = lax.scatter(acc, start, new, one_index, mode=lax.GatherScatterMode.FILL_OR_DROP)
        return acc, None

    out, _ = lax.scan(step, a, (starts, *args))
    return out


def reduceat_by_loop(ufunc, a, indices, axis, dtype):
    """``ufunc.reduceat``: ``ufunc.reduce(a[indices[i]:indices[i+1]])`` along ``axis``
    for each ``i`` (just ``a[indices[i]]`` where the next index is not larger)."""
    a = to_array(a)
    indices = to_array(indices)
    shape = aval_of(a).shape
    if not shape:
        raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={shape!r}")
    if aval_of(indices).ndim != 1:
        raise ValueError(
            f"reduceat: indices must be one-dimensional, got indices.shape="
            f"{aval_of(indices).shape!r}"
        )
    dtype = dtype or dtype_of(a)
    moved = lax.convert_element_type(_axes_first(a, (axis,)), dtype)
    indices = lax.convert_element_type(indices, np.int32)
    n = shape[axis]
    count = aval_of(indices).shape[0]
    starts = select(lax.lt(indices, np.array(0, np.int32)),
                    lax.add(indices, np.array(n, np.int32)), indices)  # fmt: skip
    ends = lax.concatenate([lax.slice_in_dim(starts, 1, count), np.full((1,), n, np.int32)], 0)
    gather_numbers = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape))), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    slice_sizes = (1, *aval_of(moved).shape[1:])
    out = lax.gather(moved, lax.reshape(starts, (count, 1)), gather_numbers, slice_sizes,
                     mode=lax.GatherScatterMode.CLIP)  # fmt: skip
    inside_shape = (count,) + (1,) * (len(shape) - 1)
    starts_b, ends_b = (lax.reshape(v, inside_shape) for v in (starts, ends))

    def body(i, acc):
        row = lax.dynamic_index_in_dim(moved, i, 0, True)
        inside = lax.bitwise_and(lax.gt(i, starts_b), lax.lt(i, ends_b))
        return select(inside, lax.convert_element_type(ufunc(acc, row), dtype), acc)

    out = lax.fori_loop(0, n, body, out)
    perm = list(range(1, len(shape)))
    perm.insert(axis, 0)
    return lax.transpose(out, tuple(perm))
