"""One gather (or scatter) that performs a parsed index: the index array and the
dimension numbers.

Each axis of the expanded operand contributes to the result as follows:

* a window of step 1: an *offset* axis (slice size = its length; a start index
  component unless it covers the whole axis);
* a window of another step: a *batch* axis of its own, indexed by
  ``start + step * arange(length)``;
* integers and integer arrays: the axes of their common broadcast shape (the
  *advanced block*), placed where the first of them stands, or in front when NumPy's
  rule says so (they are not next to each other in the index).

The index array has the batch axes in result order followed by one vector axis, so
the gather's result needs no transposition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from lamina.ir import dtypes, is_symbolic_dim
from lamina.lax import add, aval_of, broadcast_in_dim, concatenate, lt, select_n, to_dtype
from lamina.numpy.indexing.parsing import Advanced, ParsedIndex, StaticInt, Window

__all__ = ["GatherPlan", "plan_gather"]


@dataclass(frozen=True)
class GatherPlan:
    indices: object  # integer array (NumPy when every component is static)
    offset_dims: tuple[int, ...]
    collapsed_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    slice_sizes: tuple[int, ...]
    out_shape: tuple[int, ...]
    empty_axis: int | None  # an indexed axis of size 0: nothing can be addressed
    static: bool  # no component is traced

    @property
    def is_empty(self) -> bool:
        return math.prod(self.out_shape) == 0


def _shape_of(index) -> tuple[int, ...]:
    return index.shape if isinstance(index, np.ndarray) else aval_of(index).shape


def _block_shape(entries) -> tuple[int, ...]:
    shapes = [_shape_of(e.index) for e in entries if isinstance(e, Advanced)]
    try:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        raise ValueError(
            f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}"
        ) from None


def _layout(parsed: ParsedIndex, block: tuple[int, ...]):
    """The result axes as ``(kind, axis)`` pairs (kind: offset, strided, block) and
    their sizes."""
    layout: list[tuple[str, int]] = []
    sizes: list[int] = []

    def put_block():
        layout.extend(("block", j) for j in range(len(block)))
        sizes.extend(block)

    placed = parsed.advanced_first
    if placed:
        put_block()
    for axis, entry in enumerate(parsed.entries):
        if isinstance(entry, Window):
            layout.append(("offset" if entry.step == 1 else "strided", axis))
            sizes.append(entry.length)
        elif not placed:
            put_block()
            placed = True
    if not placed:
        put_block()
    return layout, tuple(sizes)


def _index_dtype(shape) -> np.dtype:
    static = (d for d in shape if not is_symbolic_dim(d))  # symbolic sizes fit an int32
    if max(static, default=0) < 2**31 or not dtypes.x64_enabled():
        return np.dtype(np.int32)
    return np.dtype(np.int64)


def _traced_component(index, size, wrap, index_dtype):
    """A traced integer index counted from the end when negative (in its own dtype),
    then of ``index_dtype``, in JAX's order."""
    aval = aval_of(index)
    if wrap and not dtypes.issubdtype(aval.dtype, np.unsignedinteger):
        zero, size = (to_dtype(v, aval.dtype, aval.weak_type) for v in (0, size))
        index = select_n(lt(index, zero), index, add(index, size))
    return to_dtype(index, index_dtype, weak_type=False)


def plan_gather(parsed: ParsedIndex, wrap_negative: bool = True) -> GatherPlan:
    shape, entries = parsed.expanded_shape, parsed.entries
    block = _block_shape(entries)
    layout, out_shape = _layout(parsed, block)
    batch = [i for i, (kind, _) in enumerate(layout) if kind != "offset"]
    batch_shape = tuple(out_shape[i] for i in batch)
    batch_of_result = {i: b for b, i in enumerate(batch)}
    block_dims = [batch_of_result[i] for i, (kind, _) in enumerate(layout) if kind == "block"]
    strided_dim = {axis: batch_of_result[i] for i, (kind, axis) in enumerate(layout)
                   if kind == "strided"}  # fmt: skip
    index_dtype = _index_dtype(shape)

    components = []  # (value, the index-array batch dims its axes map to)
    start_index_map, collapsed, slice_sizes = [], [], []
    empty_axis = None
    for axis, entry in enumerate(entries):
        if isinstance(entry, Window) and entry.step == 1:
            slice_sizes.append(entry.length)
            if entry.is_full(shape[axis]):
                continue
            components.append((np.array(entry.start), ()))
        else:
            slice_sizes.append(1)
            collapsed.append(axis)
            empty_axis = axis if shape[axis] == 0 and empty_axis is None else empty_axis
            if isinstance(entry, Window):
                steps = entry.start + entry.step * np.arange(entry.length)
                components.append((steps, (strided_dim[axis],)))
            elif isinstance(entry, StaticInt):
                components.append((np.array(entry.value), ()))
            else:
                index = entry.index
                rank = len(_shape_of(index))
                if not isinstance(index, np.ndarray):
                    index = _traced_component(index, shape[axis], wrap_negative, index_dtype)
                dims = tuple(block_dims[len(block_dims) - rank :])
                components.append((index, dims))
        start_index_map.append(axis)

    static = all(isinstance(v, np.ndarray) for v, _ in components)
    indices = _build_indices(components, batch_shape, index_dtype, static)
    offset_dims = tuple(i for i, (kind, _) in enumerate(layout) if kind == "offset")
    return GatherPlan(
        indices=indices,
        offset_dims=offset_dims,
        collapsed_dims=tuple(collapsed),
        start_index_map=tuple(start_index_map),
        slice_sizes=tuple(slice_sizes),
        out_shape=out_shape,
        empty_axis=empty_axis,
        static=static,
    )


def _place(value_shape, dims, batch_shape):
    """The shape that lines ``value``'s axes up with ``dims`` of ``batch_shape``."""
    shape = [1] * len(batch_shape)
    for size, dim in zip(value_shape, dims, strict=True):
        shape[dim] = size
    return shape


def _build_indices(components, batch_shape, index_dtype, static):
    full = (*batch_shape, 1)
    if static and not batch_shape and components:
        # Integer indices only: built from scalar literals in the program, as JAX does.
        columns = [broadcast_in_dim(np.asarray(v, index_dtype), (1,), ()) for v, _ in components]
        return columns[0] if len(columns) == 1 else concatenate(columns, 0)
    if static:
        columns = [
            np.broadcast_to(
                np.reshape(value, _place(value.shape, dims, batch_shape)), batch_shape
            ).astype(index_dtype)
            for value, dims in components
        ]
        if not columns:
            return np.zeros((*batch_shape, 0), index_dtype)
        return np.stack(columns, axis=-1)
    columns = []
    for value, dims in components:
        if isinstance(value, np.ndarray):
            value = value.astype(index_dtype)
        columns.append(broadcast_in_dim(value, full, dims))
    return columns[0] if len(columns) == 1 else concatenate(columns, len(batch_shape))
