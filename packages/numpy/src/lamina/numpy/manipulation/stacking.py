"""Joining arrays (``jax.numpy``): ``concatenate``/``concat``, ``stack``, ``hstack``,
``vstack``, ``dstack``, ``column_stack`` and ``block`` (splitting them again is in
:mod:`.splitting`).

The joining functions take a sequence of arrays, or one array whose leading axis
lists the pieces (joined without cutting it up first)."""

from __future__ import annotations

from functools import partial

import numpy as np
from lamina import lax
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    canonicalize_axis,
    check_arraylike,
    is_arraylike,
    promote_dtypes,
    to_array,
)
from lamina.numpy.manipulation.static import shape_3d, shape_of

__all__ = [
    "block",
    "column_stack",
    "concat",
    "concatenate",
    "dstack",
    "hstack",
    "stack",
    "vstack",
]


def _is_single_array(arrays) -> bool:
    return is_arraylike(arrays) and not isinstance(arrays, (bool, int, float, complex))


def _with_dtype(arrays, dtype):
    """The arrays in ``dtype`` (not weakly typed), or in their promoted common dtype."""
    if dtype is None:
        return promote_dtypes(*arrays)
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "concatenate")
    return [lax.convert_element_type(to_array(x), dtype) for x in arrays]


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _join_leading(x, axis: int | None):
    """The pieces ``x[0], x[1], ...`` of one array concatenated along ``axis`` of a
    piece: a transpose bringing the leading axis next to ``axis``, and a reshape."""
    shape = shape_of(x)
    if not shape:
        raise ValueError("Need at least one array to concatenate.")
    if len(shape) == 1:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    if axis is None:
        return lax.reshape(x, (_size(shape),))
    axis = canonicalize_axis(axis, len(shape) - 1)
    perm = (*range(1, axis + 1), 0, *range(axis + 1, len(shape)))
    moved = lax.transpose(x, perm) if axis else x
    piece = shape[1:]
    return lax.reshape(moved, (*piece[:axis], shape[0] * piece[axis], *piece[axis + 1 :]))


def concatenate(arrays, axis=0, dtype=None):
    """The ``arrays`` joined along an existing ``axis`` (all flattened first when
    ``axis`` is None), in their promoted dtype or ``dtype``."""
    if _is_single_array(arrays):
        x = _join_leading(to_array(arrays), axis)
        return x if dtype is None else _with_dtype([x], dtype)[0]
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    check_arraylike("concatenate", *arrays)
    arrays = _with_dtype(arrays, dtype)
    if axis is None:
        arrays = [lax.reshape(x, (_size(shape_of(x)),)) for x in arrays]
        axis = 0
    shapes = [shape_of(x) for x in arrays]
    if len({len(s) for s in shapes}) > 1:
        raise TypeError(
            "Cannot concatenate arrays with different numbers of dimensions: got "
            f"{', '.join(map(str, shapes))}."
        )
    if not shapes[0]:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, len(shapes[0]))
    if len({s[:axis] + s[axis + 1 :] for s in shapes}) > 1:
        raise TypeError(
            "Cannot concatenate arrays with shapes that differ in dimensions other than "
            f"the one being concatenated: concatenating along dimension {axis} for shapes "
            f"{', '.join(map(str, shapes))}."
        )
    return arrays[0] if len(arrays) == 1 else lax.concatenate(arrays, axis)


def concat(arrays, /, *, axis=0):
    """The array API's ``concatenate``."""
    return concatenate(arrays, axis)


def stack(arrays, axis=0, out=None, dtype=None):
    """The ``arrays`` (all of one shape) joined along a new axis ``axis``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if _is_single_array(arrays):
        x = to_array(arrays)
        shape = shape_of(x)
        if not shape:
            raise ValueError("Need at least one array to stack.")
        axis = canonicalize_axis(axis, len(shape))
        perm = (*range(1, axis + 1), 0, *range(axis + 1, len(shape)))
        x = lax.transpose(x, perm) if axis else x
        return x if dtype is None else _with_dtype([x], dtype)[0]
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    check_arraylike("stack", *arrays)
    arrays = [to_array(x) for x in arrays]
    shapes = [shape_of(x) for x in arrays]
    if len(set(shapes)) > 1:
        raise ValueError(
            f"All input arrays must have the same shape. Got {', '.join(map(str, shapes))}."
        )
    axis = canonicalize_axis(axis, len(shapes[0]) + 1)
    return _stack_compiled(tuple(_with_dtype(arrays, dtype)), axis)


@partial(jit, static_argnums=(1,))
def _stack_compiled(arrays: tuple, axis: int):
    expanded = [lax.expand_dims(x, (axis,)) for x in arrays]
    return expanded[0] if len(expanded) == 1 else lax.concatenate(expanded, axis)


def _stack_reshaped(fun_name, tup, piece_shape, axis_of, dtype):
    """``tup``'s pieces reshaped by ``piece_shape`` (a function of a piece's shape) and
    concatenated along ``axis_of(new piece rank)``."""
    if _is_single_array(tup):
        x = to_array(tup)
        shape = shape_of(x)
        if not shape:
            raise ValueError(f"{fun_name} needs a sequence of arrays; got a 0-d array.")
        new_piece = piece_shape(shape[1:])
        x = lax.reshape(x, (shape[0], *new_piece)) if new_piece != shape[1:] else x
        return concatenate(x, axis_of(len(new_piece)), dtype)
    tup = list(tup)
    check_arraylike(fun_name, *tup)
    pieces = []
    for piece in tup:
        x = to_array(piece)
        new_piece = piece_shape(shape_of(x))
        pieces.append(lax.reshape(x, new_piece) if new_piece != shape_of(x) else x)
    if not pieces:
        raise ValueError("Need at least one array to concatenate.")
    return concatenate(pieces, axis_of(len(shape_of(pieces[0]))), dtype)


def _at_least(rank: int):
    return lambda s: s if len(s) >= rank else (1,) * (rank - len(s)) + s


def hstack(tup, dtype=None):
    """The arrays joined column-wise: along axis 1, or axis 0 for 1-D arrays."""
    return _stack_reshaped("hstack", tup, _at_least(1), lambda r: 0 if r == 1 else 1, dtype)


def vstack(tup, dtype=None):
    """The arrays joined row-wise (along axis 0; 1-D arrays become rows)."""
    return _stack_reshaped("vstack", tup, _at_least(2), lambda r: 0, dtype)


def dstack(tup, dtype=None):
    """The arrays joined depth-wise (along axis 2, after ``atleast_3d``)."""
    return _stack_reshaped("dstack", tup, shape_3d, lambda r: 2, dtype)


def _as_column(shape):
    return shape if len(shape) >= 2 else ((*shape, 1) if shape else (1, 1))


def column_stack(tup):
    """1-D arrays as the columns of a 2-D array (2-D arrays joined along axis 1)."""
    return _stack_reshaped("column_stack", tup, _as_column, lambda r: 1, None)


def _block_depth(arrays, path=()) -> tuple[int, list]:
    """The nesting depth of the lists in ``arrays`` (all leaves at one depth) and the
    leaves in order."""
    if isinstance(arrays, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {arrays}")
    if not isinstance(arrays, list):
        return 0, [arrays]
    if not arrays:
        raise ValueError("jax.numpy.block does not allow empty list arguments")
    depths, leaves = set(), []
    for item in arrays:
        depth, inner = _block_depth(item)
        depths.add(depth)
        leaves += inner
    if len(depths) > 1:
        raise ValueError("Mismatched list depths in jax.numpy.block")
    return depths.pop() + 1, leaves


def block(arrays):
    """An array assembled from nested lists of blocks: the innermost lists are joined
    along the last axis, the next ones along the axis before it, and so on."""
    depth, leaves = _block_depth(arrays)
    check_arraylike("block", *leaves)
    leaves = promote_dtypes(*leaves) if len(leaves) > 1 else [to_array(leaves[0])]
    rank = max(depth, *(len(shape_of(x)) for x in leaves))
    return _assemble(arrays, iter(leaves), depth, rank)


def _assemble(arrays, leaves, depth: int, rank: int):
    if not isinstance(arrays, list):
        x = next(leaves)
        shape = shape_of(x)
        return lax.reshape(x, (1,) * (rank - len(shape)) + shape) if len(shape) < rank else x
    parts = [_assemble(item, leaves, depth - 1, rank) for item in arrays]
    return concatenate(parts, rank - depth)
