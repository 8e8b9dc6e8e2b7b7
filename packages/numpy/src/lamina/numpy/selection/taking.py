"""Reading and writing elements at integer positions: ``take``, ``take_along_axis``,
``put``, ``put_along_axis``, ``place`` and ``fill_diagonal``.

The writers return a new array: JAX arrays are immutable, so like JAX they insist on
``inplace=False``.
"""

from __future__ import annotations

import math
import operator

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit
from lamina.ir import dtypes, is_symbolic_dim
from lamina.numpy.base.arguments import aval_of, canonicalize_axis, check_arraylike, to_array
from lamina.numpy.base.shaping import broadcast_to, ravel
from lamina.numpy.selection.plumbing import flat_true_positions, gather_rows

__all__ = ["fill_diagonal", "place", "put", "put_along_axis", "take", "take_along_axis"]


def _const(value, like):
    if is_symbolic_dim(value):  # an axis size computed in the program
        return lax.convert_element_type(value, aval_of(like).dtype)
    return lax.full((), value, aval_of(like).dtype)


def _wrap_negative(indices, size: int):
    """Negative indices counted from the end (once; unsigned ones are left alone)."""
    if dtypes.issubdtype(aval_of(indices).dtype, np.unsignedinteger):
        return indices
    negative = lax.lt(indices, _const(0, indices))
    return lax.select_n(negative, indices, lax.add(indices, _const(size, indices)))


def _floor_mod(indices, size: int):
    r = lax.rem(indices, _const(size, indices))
    if dtypes.issubdtype(aval_of(indices).dtype, np.unsignedinteger):
        return r
    return lax.select_n(lax.lt(r, _const(0, indices)), r, lax.add(r, _const(size, indices)))


def _check_integer(name, indices):
    dtype = aval_of(indices).dtype
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"{name} indices must be of integer type, got {dtype}")


def _wide_enough(indices, size: int):
    """``indices`` in a dtype that holds ``size`` (int8 indices into a long axis)."""
    dtype = aval_of(indices).dtype
    if is_symbolic_dim(size):  # taken to fit an int32, as the dimension values do
        wide = dtypes.iinfo(dtype).bits >= 32
        return indices if wide else lax.convert_element_type(indices, np.int32)
    if dtypes.iinfo(dtype).max >= size:
        return indices
    wider = np.int32 if size <= np.iinfo(np.int32).max else np.int64
    return lax.convert_element_type(indices, wider)


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):  # fmt: skip
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    check_arraylike("take", a, indices)
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    if mode not in (None, "fill", "wrap", "clip"):
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    return _take(
        a,
        indices,
        axis=None if axis is None else operator.index(axis),
        mode=mode,
        unique_indices=bool(unique_indices),
        indices_are_sorted=bool(indices_are_sorted),
        fill_value=fill_value,
    )


def _take_impl(a, indices, *, axis, mode, unique_indices, indices_are_sorted, fill_value):
    a, indices = to_array(a), to_array(indices)
    if axis is None:
        a, axis = ravel(a), 0
    shape = aval_of(a).shape
    axis = canonicalize_axis(axis, len(shape))
    index_shape = aval_of(indices).shape
    if not dtypes.issubdtype(aval_of(indices).dtype, np.integer):
        raise ValueError("indices must have an integer type")
    if shape[axis] == 0:
        if math.prod(index_shape) != 0:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    out_shape = (*shape[:axis], *index_shape, *shape[axis + 1 :])
    if math.prod(index_shape) == 0:
        return lax.full(out_shape, 0, aval_of(a).dtype)
    if mode in (None, "fill"):
        indices, gather_mode = (
            _wrap_negative(_wide_enough(indices, shape[axis]), shape[axis]),
            "fill",
        )
    elif mode == "wrap":
        indices, gather_mode = _floor_mod(indices, shape[axis]), "promise_in_bounds"
    else:
        gather_mode = "clip"
    k = len(index_shape)
    numbers = lax.GatherDimensionNumbers(
        offset_dims=(*range(axis), *range(axis + k, len(shape) + k - 1)),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
    )
    return lax.gather(
        a,
        lax.reshape(indices, (*index_shape, 1)),
        numbers,
        tuple(1 if d == axis else n for d, n in enumerate(shape)),
        mode=gather_mode,
        fill_value=fill_value,
        unique_indices=unique_indices,
        indices_are_sorted=indices_are_sorted,
    )


_take = jit(
    _take_impl,
    static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted", "fill_value"),
)


def _one_hot_take(arr, indices, axis: int, out_shape):
    """``take_along_axis`` as a one-hot contraction (JAX's ``mode='one_hot'``): an
    index out of range gives 0, and NaNs elsewhere along the axis propagate."""
    size = aval_of(arr).shape[axis]
    positions = lax.broadcasted_iota(aval_of(indices).dtype, (*out_shape, size), len(out_shape))
    hot = lax.eq(lax.expand_dims(broadcast_to(indices, out_shape), (len(out_shape),)), positions)
    # arr's axis moves last, to meet the one-hot positions; its other dims broadcast.
    moved = lax.expand_dims(
        lax.transpose(arr, (*(d for d in range(len(out_shape)) if d != axis), axis)), (axis,)
    )
    moved = broadcast_to(moved, (*out_shape, size))
    if aval_of(arr).dtype == np.bool_:
        return lax.reduce_or(lax.bitwise_and(hot, moved), (len(out_shape),))
    product = lax.mul(lax.convert_element_type(hot, aval_of(arr).dtype), moved)
    return lax.reduce_sum(product, (len(out_shape),))


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):  # fmt: skip
    check_arraylike("take_along_axis", arr, indices)
    arr, indices = to_array(arr), to_array(indices)
    _check_integer("take_along_axis", indices)
    index_shape = aval_of(indices).shape
    if axis is None:
        if len(index_shape) != 1:
            raise ValueError(
                f"take_along_axis indices must be 1D if axis=None, got shape {index_shape}"
            )
        arr, axis = ravel(arr), 0
    shape = aval_of(arr).shape
    if len(shape) != len(index_shape):
        raise ValueError(
            "indices and arr must have the same number of dimensions; "
            f"{len(index_shape)} vs. {len(shape)}"
        )
    axis = canonicalize_axis(axis, len(shape))
    if isinstance(mode, lax.GatherScatterMode):
        mode = {
            lax.GatherScatterMode.CLIP: "clip",
            lax.GatherScatterMode.FILL_OR_DROP: "fill",
            lax.GatherScatterMode.PROMISE_IN_BOUNDS: "promise_in_bounds",
            lax.GatherScatterMode.ONE_HOT: "one_hot",
        }[mode]
    if mode not in (None, "fill", "clip", "promise_in_bounds", "one_hot"):
        raise ValueError(f'Unknown gather mode "{mode}"')
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    return _take_along(
        arr,
        indices,
        axis=axis,
        mode=mode,
        fill_value=fill_value,
        wrap_negative_indices=bool(wrap_negative_indices),
    )


def _take_along_impl(arr, indices, *, axis, mode, fill_value, wrap_negative_indices):
    shape, index_shape = aval_of(arr).shape, aval_of(indices).shape
    size = shape[axis]
    out_shape = lax.broadcast_shapes(index_shape, (*shape[:axis], 1, *shape[axis + 1 :]))
    if size == 0:
        return lax.full(out_shape, 0, aval_of(arr).dtype)
    if wrap_negative_indices:
        indices = _wrap_negative(_wide_enough(indices, size), size)
    if mode == "one_hot":
        return _one_hot_take(arr, indices, axis, out_shape)
    indices = broadcast_to(indices, out_shape)
    arr = broadcast_to(arr, (*out_shape[:axis], size, *out_shape[axis + 1 :]))
    others = tuple(d for d in range(len(shape)) if d != axis)
    numbers = lax.GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        operand_batching_dims=others,
        start_indices_batching_dims=others,
    )
    return lax.gather(
        arr,
        lax.reshape(indices, (*out_shape, 1)),
        numbers,
        (1,) * len(shape),
        mode="fill" if mode is None else mode,
        fill_value=fill_value,
    )


_take_along = jit(
    _take_along_impl,
    static_argnames=("axis", "mode", "fill_value", "wrap_negative_indices"),
)


def _immutable(name):
    return ValueError(
        f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are immutable. "
        "Pass inplace=False to instead return an updated array."
    )


def _set_points(arr, coordinates, values, mode):
    """``arr`` with ``values`` written at the points whose coordinates (one array per
    dimension, all of ``values``' shape) are given."""
    shape = aval_of(values).shape
    index_dtype = (
        np.int64 if max(aval_of(arr).shape, default=0) > np.iinfo(np.int32).max else np.int32
    )
    columns = [lax.convert_element_type(c, index_dtype) for c in coordinates]
    indices = lax.concatenate([lax.reshape(c, (*shape, 1)) for c in columns], len(shape))
    ndim = len(aval_of(arr).shape)
    numbers = lax.ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=tuple(range(ndim)),
        scatter_dims_to_operand_dims=tuple(range(ndim)),
    )
    values = lax.convert_element_type(values, aval_of(arr).dtype)
    return lax.scatter(arr, indices, values, numbers, mode=mode)


def _tile_to(values, length: int):
    """The 1-d ``values`` repeated cyclically to ``length`` entries."""
    k = aval_of(values).shape[0]
    if k == length:
        return values
    positions = lax.rem(lax.iota(np.int32, length), lax.full((), k, np.int32))
    return gather_rows(values, positions, mode="promise_in_bounds")


def put(a, ind, v, mode=None, *, inplace=True):
    if inplace:
        raise _immutable("put")
    check_arraylike("put", a, ind, v)
    arr, ind, v = to_array(a), ravel(ind), ravel(v)
    n, m = aval_of(arr).size, aval_of(ind).size
    if not n or not m or not aval_of(v).size:
        return arr
    _check_integer("put", ind)
    if mode is None:
        # As JAX (through unravel_index): out-of-range indices are clipped, negative
        # ones count from the end.
        ind = _floor_mod(lax.clamp(_const(-n, ind), _wide_enough(ind, n), _const(n - 1, ind)), n)
    elif mode == "clip":
        ind = lax.clamp(_const(0, ind), _wide_enough(ind, n), _const(n - 1, ind))
    elif mode == "wrap":
        ind = _floor_mod(_wide_enough(ind, n), n)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    flat = _set_points(ravel(arr), [ind], _tile_to(v, m), "promise_in_bounds")
    return lax.reshape(flat, aval_of(arr).shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    if inplace:
        raise _immutable("put_along_axis")
    check_arraylike("put_along_axis", arr, indices, values)
    arr, indices, values = to_array(arr), to_array(indices), to_array(values)
    original_shape = aval_of(arr).shape
    if axis is None:
        arr, axis = ravel(arr), 0
    shape, index_shape = aval_of(arr).shape, aval_of(indices).shape
    if len(shape) != len(index_shape):
        raise ValueError(
            "put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
            f"arr.ndim={len(shape)} and indices.ndim={len(index_shape)}."
        )
    _check_integer("put_along_axis", indices)
    try:
        values = broadcast_to(values, index_shape)
    except ValueError:
        raise ValueError(
            "put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
            f"values.shape={aval_of(values).shape} and indices.shape={index_shape}."
        ) from None
    axis = canonicalize_axis(axis, len(shape))
    points = lax.broadcast_shapes(
        index_shape,
        *(
            tuple(n if d == i else 1 for d, n in enumerate(shape))
            for i in range(len(shape))
            if i != axis
        ),
    )
    coordinates = [
        broadcast_to(_wrap_negative(_wide_enough(indices, shape[axis]), shape[axis]), points)
        if i == axis
        else lax.broadcasted_iota(np.int32, points, i)
        for i in range(len(shape))
    ]
    result = _set_points(
        arr, coordinates, broadcast_to(values, points), "drop" if mode is None else mode
    )
    return lax.reshape(result, original_shape)


def place(arr, mask, vals, *, inplace=True):
    check_arraylike("place", arr, mask, vals)
    data, mask, vals = to_array(arr), to_array(mask), ravel(vals)
    if inplace:
        raise _immutable("place")
    n = aval_of(data).size
    if n != aval_of(mask).size:
        raise ValueError("place: arr and mask must be the same size")
    if not aval_of(vals).size:
        raise ValueError("Cannot place values from an empty array")
    if not n:
        return data
    flat_mask = ravel(mask)
    if aval_of(flat_mask).dtype != np.bool_:
        flat_mask = lax.ne(flat_mask, _const(0, flat_mask))
    # The k-th true entry takes vals[k % len(vals)]; unused slots point past the end.
    positions = flat_true_positions(flat_mask, n, np.int32)
    flat = _set_points(ravel(data), [positions], _tile_to(vals, n), "drop")
    return lax.reshape(flat, aval_of(data).shape)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    a, val = to_array(a), to_array(val)
    shape = aval_of(a).shape
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) > 2 and not all(n == shape[0] for n in shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = min(shape)
    if n == 0:
        return a
    diagonal = lax.iota(np.int32, n)
    if aval_of(val).shape:
        if not aval_of(val).size:
            raise ValueError("fill_diagonal: cannot fill the diagonal from an empty array")
        values = _tile_to(ravel(val), n)
    else:
        values = broadcast_to(val, (n,))
    return _set_points(a, [diagonal] * len(shape), values, "promise_in_bounds")
