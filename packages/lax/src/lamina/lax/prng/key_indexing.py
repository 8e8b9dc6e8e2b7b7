"""NumPy indexing of concrete key arrays (``keys[1]``, ``keys[1:3, None]``,
``keys[idx_array]``), written with lax's structural primitives on the keys themselves.

(Traced key arrays index through the tracers' ``__getitem__``, lamina.numpy's.)
Supported: integers, slices (any step), ``None``, ``...`` and one integer array (or
list) index, whose dimensions replace the indexed axis.
"""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters import Array
from lamina.lax.base import reshaping
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import convert_element_type, lt, select_n
from lamina.lax.base.reshaping import expand_dims, rev, slice_in_dim, squeeze
from lamina.lax.slicing.gather_scatter import GatherDimensionNumbers, GatherScatterMode, gather

__all__ = ["index_keys", "take_keys"]


def _expand_ellipsis(idx: tuple, ndim: int) -> tuple:
    n_ellipsis = sum(i is Ellipsis for i in idx)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(i is not None and i is not Ellipsis for i in idx)
    if used > ndim:
        raise IndexError(
            f"Too many indices: {ndim}-dimensional array indexed with {used} regular indices."
        )
    if not n_ellipsis:
        return (*idx, *[slice(None)] * (ndim - used))
    at = idx.index(Ellipsis)
    return (*idx[:at], *[slice(None)] * (ndim - used), *idx[at + 1 :])


def _is_int_array(i) -> bool:
    if isinstance(i, (list, np.ndarray, Array)) or hasattr(i, "aval"):
        dtype = aval_of(np.asarray(i) if isinstance(i, list) else i).dtype
        if np.issubdtype(dtype, np.integer):
            return True
        raise IndexError(f"indexing key arrays needs integer indices, got dtype {dtype}")
    return False


def take_keys(keys, indices, axis: int):
    """``keys`` gathered at the (in-bounds, non-negative) integer array ``indices`` along
    ``axis``; the index dimensions replace ``axis`` in the result (as ``jnp.take``)."""
    shape = tuple(aval_of(keys).shape)
    ind_ndim = aval_of(indices).ndim
    offset_dims = tuple(range(axis)) + tuple(range(axis + ind_ndim, len(shape) - 1 + ind_ndim))
    dnums = GatherDimensionNumbers(
        offset_dims=offset_dims, collapsed_slice_dims=(axis,), start_index_map=(axis,)
    )
    slice_sizes = tuple(1 if i == axis else d for i, d in enumerate(shape))
    return gather(
        keys,
        expand_dims(indices, (ind_ndim,)),
        dnums,
        slice_sizes,
        mode=GatherScatterMode.PROMISE_IN_BOUNDS,
    )


def _strided(keys, axis: int, start: int, stop: int, step: int):
    if step < 0:  # NumPy's negative steps: reverse, then slice forward
        n = keys.shape[axis]
        keys = rev(keys, (axis,))
        start, stop, step = n - 1 - start, n - 1 - stop, -step
    stop = max(start, stop)
    starts = [0] * keys.ndim
    limits = list(keys.shape)
    strides = [1] * keys.ndim
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return reshaping.slice(keys, starts, limits, None if step == 1 else strides)


def index_keys(keys, idx):
    """``keys[idx]`` for a concrete key array."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    idx = _expand_ellipsis(idx, keys.ndim)
    axis = 0
    for i in idx:
        if i is None:
            keys = expand_dims(keys, (axis,))
            axis += 1
        elif isinstance(i, slice):
            start, stop, step = i.indices(keys.shape[axis])
            keys = _strided(keys, axis, start, stop, step)
            axis += 1
        elif _is_int_array(i):
            n = keys.shape[axis]
            positions = convert_element_type(np.asarray(i) if isinstance(i, list) else i, np.int32)
            positions = select_n(lt(positions, np.int32(0)), positions, positions + np.int32(n))
            keys = take_keys(keys, positions, axis)
            axis += positions.ndim
        else:
            n = keys.shape[axis]
            j = operator.index(i)
            if not -n <= j < n:
                raise IndexError(f"index {j} is out of bounds for axis {axis} with size {n}")
            j %= n
            keys = squeeze(slice_in_dim(keys, j, j + 1, axis=axis), (axis,))
    return keys
