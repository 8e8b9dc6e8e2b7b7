"""``append``, ``insert`` and ``delete``: arrays with elements added or removed
along an axis. Where the positions are known in advance the result is built from
slices; traced positions (``insert``, and ``delete`` with unique indices) go
through a permutation computed in the program."""

from __future__ import annotations

from functools import partial

import numpy as np
from lamina import lax
from lamina.interpreters import ConcretizationTypeError, jit
from lamina.lax import to_dtype
from lamina.numpy.base.arguments import aval_of, canonicalize_axis, check_arraylike, to_array
from lamina.numpy.base.static_values import concrete_value, is_unknown
from lamina.numpy.manipulation.shapes import broadcast_to
from lamina.numpy.manipulation.stacking import concatenate
from lamina.numpy.manipulation.static import gather_along, scatter_1d, shape_of, take_static

__all__ = ["append", "delete", "insert"]


def _flat(x):
    return lax.reshape(x, (int(np.prod(shape_of(x), dtype=np.int64)),))


def append(arr, values, axis=None):
    """``values`` joined to the end of ``arr`` along ``axis`` (both flattened when
    ``axis`` is None)."""
    check_arraylike("append", arr, values)
    if axis is None:
        return concatenate([_flat(to_array(arr)), _flat(to_array(values))], 0)
    return concatenate([arr, values], axis)


def _iota(size: int):
    return lax.iota(np.int32, size)


def _values_block(values, x, axis: int, count: int | None, move_first: bool):
    """``values`` in ``x``'s dtype, shaped as the block inserted along ``axis``: with
    at least ``x``'s rank (new axes in front), for a scalar index their first axis
    moved to ``axis`` (NumPy's rule); ``count`` wide, or as wide as the values are."""
    aval = aval_of(x)
    v = to_dtype(to_array(values), aval.dtype, weak_type=aval.weak_type)
    ndim, vshape = len(aval.shape), shape_of(v)
    if len(vshape) < ndim:
        v = lax.reshape(v, (1,) * (ndim - len(vshape)) + vshape)
    if move_first and ndim > 1:
        v = lax.transpose(v, _move_first_to(len(shape_of(v)), axis))
    target = list(aval.shape)
    target[axis] = shape_of(v)[axis] if count is None else count
    return broadcast_to(v, tuple(target))


def _move_first_to(ndim: int, axis: int) -> tuple[int, ...]:
    order = list(range(1, ndim))
    order.insert(axis, 0)
    return tuple(order)


def _static_insert_permutation(positions: np.ndarray, size: int) -> np.ndarray:
    """Where each element of ``concatenate([arr, inserted])`` comes from: inserted
    element ``j`` goes before old element ``positions[j]`` (ties in the given order)."""
    order = np.argsort(positions, kind="stable")
    new_at = positions[order] + np.arange(len(positions))
    old_at = np.arange(size) + np.searchsorted(positions[order], np.arange(size), side="right")
    source = np.empty(size + len(positions), np.int64)
    source[old_at] = np.arange(size)
    source[new_at] = size + order
    return source


def _traced_insert_permutation(positions, size: int):
    """:func:`_static_insert_permutation` computed in the program (``positions`` traced)."""
    count = shape_of(positions)[0]
    sorted_positions, order = lax.sort((positions, _iota(count)), dimension=0, num_keys=1)
    new_at = lax.add(sorted_positions, _iota(count))
    ones = lax.broadcast_in_dim(np.int32(1), (count,), ())
    at_or_before = lax.cumsum(
        scatter_1d(
            "add", lax.broadcast_in_dim(np.int32(0), (size + 1,), ()), sorted_positions, ones
        ),
        axis=0,
    )
    old_at = lax.add(_iota(size), lax.slice(at_or_before, (0,), (size,)))
    source = lax.broadcast_in_dim(np.int32(0), (size + count,), ())
    source = scatter_1d("set", source, old_at, _iota(size))
    return scatter_1d("set", source, new_at, lax.add(order, np.int32(size)))


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted along ``axis`` (the flattened array when None)
    before the positions ``obj`` (an int, a 1-D integer array that may be traced, or a
    slice); ``values`` are converted to ``arr``'s dtype and broadcast to the block."""
    check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    x = to_array(arr)
    if axis is None:
        x, axis = _flat(x), 0
    axis = canonicalize_axis(axis, len(shape_of(x)))
    size = shape_of(x)[axis]
    if isinstance(obj, slice):
        obj = np.arange(*obj.indices(size))
    traced = is_unknown(obj)
    if traced:
        index, index_dtype, index_shape = obj, lax.dtype(obj), shape_of(obj)
    else:
        index = concrete_value(obj, "obj argument of jnp.insert()")
        index_dtype, index_shape = index.dtype, index.shape
    if not np.issubdtype(index_dtype, np.integer):
        raise ValueError(f"jnp.insert(): index array must be integer typed; got {index}")
    if len(index_shape) > 1:
        raise ValueError(
            f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {index}"
        )
    values = to_array(values)
    if traced:
        return _insert_compiled(x, values, index, axis, index_shape, None)
    positions = np.clip(np.where(index < 0, index + size, index), 0, size).reshape(-1)
    return _insert_compiled(x, values, None, axis, index_shape, tuple(positions.tolist()))


@partial(jit, static_argnums=(3, 4, 5))
def _insert_compiled(x, values, index, axis: int, index_shape: tuple, positions):
    """The insertion as one computation: ``positions`` when known (then ``index`` is
    None), else the traced ``index``."""
    single = index_shape in ((), (1,))
    block = _values_block(values, x, axis, None if single else index_shape[0], index_shape == ())
    count, size = shape_of(block)[axis], shape_of(x)[axis]
    joined = lax.concatenate([x, block], axis)
    if positions is None:
        positions = _clipped_positions(index, size, count)
        return gather_along(joined, _traced_insert_permutation(positions, size), axis)
    positions = np.asarray(positions, np.int64)
    positions = np.repeat(positions, count) if single else positions
    return take_static(joined, _static_insert_permutation(positions, size), axis)


def _clipped_positions(index, size: int, count: int):
    positions = lax.convert_element_type(index, np.int32)
    if shape_of(positions) in ((), (1,)):
        positions = lax.broadcast_in_dim(lax.reshape(positions, ()), (count,), ())
    wrapped = lax.select(
        lax.lt(positions, np.int32(0)), lax.add(positions, np.int32(size)), positions
    )
    return lax.clamp(np.int32(0), wrapped, np.int32(size))


_TRACED_DELETE = (
    "'obj' array argument of jnp.delete(). Traced indices are supported only with "
    "assume_unique_indices=True (the result's size must be known)."
)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the elements at ``obj`` (an int, an integer or boolean array, or
    a slice) along ``axis`` (the flattened array when None). Traced integer ``obj``
    works with ``assume_unique_indices=True``."""
    check_arraylike("delete", arr, 0 if isinstance(obj, slice) else obj)
    x = to_array(arr)
    if axis is None:
        x, axis = _flat(x), 0
    axis = canonicalize_axis(axis, len(shape_of(x)))
    size = shape_of(x)[axis]
    if isinstance(obj, slice):
        return _take_compiled(x, tuple(np.delete(np.arange(size), obj).tolist()), axis)
    if is_unknown(obj):
        if not assume_unique_indices:
            raise ConcretizationTypeError(obj, _TRACED_DELETE)
        return _delete_unique_traced(x, obj, axis)
    index = concrete_value(obj, _TRACED_DELETE)
    keep = np.ones(size, bool)
    if index.dtype == np.bool_:
        if index.shape != (size,):
            raise ValueError(
                "np.delete(arr, obj): for boolean indices, obj must be one-dimensional with "
                "length matching specified axis."
            )
        keep &= ~index
    elif np.issubdtype(index.dtype, np.integer):
        flat = index.reshape(-1)
        bad = flat[(flat < -size) | (flat >= size)]
        if len(bad):
            raise np.exceptions.AxisError(
                f"index {int(bad[0])} is out of bounds for axis {axis} with size {size}"
            )
        keep[flat] = False
    else:
        raise ValueError(
            f"np.delete(arr, obj): got obj.dtype={index.dtype}; must be integer or bool."
        )
    return _take_compiled(x, tuple(np.flatnonzero(keep).tolist()), axis)


@partial(jit, static_argnums=(1, 2))
def _take_compiled(x, indices: tuple, axis: int):
    return take_static(x, np.asarray(indices, np.int64), axis)


@partial(jit, static_argnums=(2,))
def _delete_unique_traced(x, obj, axis: int):
    """The kept positions found by a stable sort that moves the deleted ones last."""
    size = shape_of(x)[axis]
    index = lax.convert_element_type(obj, np.int32)
    count = int(np.prod(shape_of(index), dtype=np.int64))
    index = lax.reshape(index, (count,))
    index = lax.select(lax.lt(index, np.int32(0)), lax.add(index, np.int32(size)), index)
    deleted = scatter_1d(
        "set",
        lax.broadcast_in_dim(np.int32(0), (size,), ()),
        index,
        lax.broadcast_in_dim(np.int32(1), (count,), ()),
    )
    _, kept = lax.sort((deleted, _iota(size)), dimension=0, num_keys=1)
    return gather_along(x, lax.slice(kept, (0,), (max(size - count, 0),)), axis)
