"""Sorting: ``sort``, ``argsort``, ``lexsort``, ``sort_complex``, ``partition``,
``argpartition`` (``searchsorted`` is in :mod:`.searching`).

NaNs sort last (after +inf), as lax.sort orders them; descending sorts are the
ascending sort reversed, with the stable descending order JAX gives (equal elements
keep their original order).
"""

from __future__ import annotations

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    aval_of,
    canonicalize_axis,
    check_arraylike,
    is_arraylike,
    to_array,
)
from lamina.numpy.base.shaping import moveaxis, ravel
from lamina.numpy.selection.plumbing import default_index_dtype, keep_weak_type

__all__ = [
    "argpartition",
    "argsort",
    "lexsort",
    "partition",
    "sort",
    "sort_complex",
]


def _check_kind_and_order(name, kind, order):
    if kind is not None:
        raise TypeError(
            f"'kind' argument to {name} is not supported. Use stable=True or stable=False "
            "to specify sort stability."
        )
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def _along(a, axis):
    """``a`` and the canonical axis to sort along (``axis=None``: the flattened array)."""
    if axis is None:
        return ravel(a), 0
    return a, canonicalize_axis(axis, len(aval_of(a).shape))


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    check_arraylike("sort", a)
    _check_kind_and_order("sort", kind, order)
    arr, dim = _along(to_array(a), axis)
    if not aval_of(arr).shape:
        return arr
    result = keep_weak_type(lax.sort(arr, dimension=dim, is_stable=bool(stable)), arr)
    return lax.rev(result, (dim,)) if descending else result


sort = jit(sort, static_argnames=("axis", "kind", "order", "stable", "descending"))


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    check_arraylike("argsort", a)
    _check_kind_and_order("argsort", kind, order)
    arr, dim = _along(to_array(a), axis)
    shape = aval_of(arr).shape
    if dtype is None:
        index_dtype = default_index_dtype(shape[dim] if shape else 1)
    else:
        index_dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "argsort")
    if not shape:
        return lax.full((), 0, index_dtype)
    # the indices typed as the array is, as in JAX
    iota = lax.broadcasted_iota(index_dtype, shape, dim, out_sharding=aval_of(arr).type_sharding)
    if descending and stable:
        # Reversing first makes the stable ascending sort, reversed back, keep equal
        # elements in their original order.
        arr, iota = lax.rev(arr, (dim,)), lax.rev(iota, (dim,))
    _, indices = lax.sort_key_val(arr, iota, dimension=dim, is_stable=bool(stable))
    return lax.rev(indices, (dim,)) if descending else indices


argsort = jit(argsort, static_argnames=("axis", "kind", "order", "stable", "descending", "dtype"))


def sort_complex(a):
    check_arraylike("sort_complex", a)
    arr = to_array(a)
    if aval_of(arr).shape:
        arr = lax.sort(arr, dimension=len(aval_of(arr).shape) - 1)
    return lax.convert_element_type(arr, dtypes.to_complex_dtype(aval_of(arr).dtype))


sort_complex = jit(sort_complex)


def lexsort(keys, axis=-1):
    if is_arraylike(keys):  # a 2-d array: its rows are the keys
        stacked = to_array(keys)
        if not aval_of(stacked).shape:
            raise TypeError("iteration over a 0-d array")
        keys = [lax.index_in_dim(stacked, i, 0, False) for i in range(aval_of(stacked).shape[0])]
    keys = tuple(keys)
    check_arraylike("lexsort", *keys)
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    keys = [to_array(k) for k in keys]
    if len({aval_of(k).shape for k in keys}) > 1:
        raise ValueError("all keys need to be the same shape")
    shape = aval_of(keys[0]).shape
    if not shape:
        return lax.full((), 0, dtypes.default_int_dtype())
    dim = canonicalize_axis(axis, len(shape))
    iota = lax.broadcasted_iota(default_index_dtype(shape[dim]), shape, dim)
    # The last key is the primary one.
    return lax.sort((*keys[::-1], iota), dimension=dim, num_keys=len(keys))[-1]


lexsort = jit(lexsort, static_argnames=("axis",))


def _prepare_partition(name, a, kth, axis):
    check_arraylike(name, a)
    arr = to_array(a)
    dtype = aval_of(arr).dtype
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    if dtype == np.bool_:
        raise TypeError(
            f"jnp.{name} does not accept dtype bool. Accepted dtypes are subtypes of integer, "
            "floating."
        )
    ndim = len(aval_of(arr).shape)
    if ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension 0")
    dim = canonicalize_axis(axis, ndim)
    kth = canonicalize_axis(kth, aval_of(arr).shape[dim])
    return moveaxis(arr, dim, -1), dim, kth


def _smallest(arr, count):
    """The ``count`` smallest entries along the last axis in ascending order, and their
    indices (lower index first among equal entries, NaNs last)."""
    shape = aval_of(arr).shape
    last = len(shape) - 1
    # int32 even with x64 on: JAX takes these indices from top_k.
    iota = lax.broadcasted_iota(np.int32, shape, last)
    values, indices = lax.sort_key_val(arr, iota, dimension=last, is_stable=True)
    return lax.slice_in_dim(values, 0, count, axis=last), lax.slice_in_dim(
        indices, 0, count, axis=last
    )


def partition(a, kth, axis=-1):
    arr, dim, kth = _prepare_partition("partition", a, kth, axis)
    n = aval_of(arr).shape[-1]
    smallest, _ = _smallest(arr, kth + 1)
    largest = lax.top_k(arr, n - kth - 1)[0]
    out = lax.concatenate([smallest, largest], len(aval_of(arr).shape) - 1)
    return keep_weak_type(moveaxis(out, -1, dim), arr)


partition = jit(partition, static_argnames=("kth", "axis"))


def argpartition(a, kth, axis=-1):
    arr, dim, kth = _prepare_partition("argpartition", a, kth, axis)
    shape = aval_of(arr).shape
    last = len(shape) - 1
    _, smallest = _smallest(arr, kth + 1)
    # The remaining indices follow in increasing order: a stable sort on a key that is
    # 1 at the chosen indices and 0 elsewhere brings the others first.
    batch = tuple(range(last))
    numbers = lax.ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=(last,),
        scatter_dims_to_operand_dims=(last,),
        operand_batching_dims=batch,
        scatter_indices_batching_dims=batch,
    )
    chosen = lax.scatter(
        lax.full(shape, 0, np.int8),
        lax.reshape(smallest, (*aval_of(smallest).shape, 1)),
        lax.full(aval_of(smallest).shape, 1, np.int8),
        numbers,
        mode="promise_in_bounds",
    )
    iota = lax.broadcasted_iota(aval_of(smallest).dtype, shape, last)
    _, rest = lax.sort_key_val(chosen, iota, dimension=last, is_stable=True)
    rest = lax.slice_in_dim(rest, 0, shape[-1] - kth - 1, axis=last)
    out = lax.concatenate([smallest, rest], last)
    return moveaxis(out, -1, dim)


argpartition = jit(argpartition, static_argnames=("kth", "axis"))
