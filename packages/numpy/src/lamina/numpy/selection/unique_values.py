"""``unique`` and its array-API relatives (``unique_all``, ``unique_counts``,
``unique_inverse``, ``unique_values``).

The array (or its slices along ``axis``) is sorted, and a mask marks each entry that
differs from its predecessor: the first of each group of equal values. Everything else
(first indices, inverse, counts) follows from the mask and the sorting permutation.
Outside ``jit`` the number of groups sets the output length; inside, ``size=`` does,
and missing entries are padded.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    aval_of,
    canonicalize_axis,
    check_arraylike,
    from_jax_array,
    to_array,
)
from lamina.numpy.base.shaping import broadcast_to, moveaxis, ravel
from lamina.numpy.base.static_values import concrete_int, static_int
from lamina.numpy.selection.plumbing import (
    count_true,
    flat_true_positions,
    gather_rows,
    scalar_like,
)

__all__ = [
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]

UNIQUE_SIZE_HINT = (
    "To make jnp.unique() compatible with JIT and other transforms, you can specify a "
    "concrete value for the size argument, which will determine the output size."
)


class _UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class _UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _is_nan(x):
    return lax.ne(x, x)


def unique_sorted(rows, equal_nan: bool):
    """For ``rows`` of shape ``(n, ...)``: the rows sorted (lexicographically), a
    boolean mask of the rows that start a group of equal rows, and the sorting
    permutation (stable: a group's first row is the earliest in ``rows``)."""
    shape = aval_of(rows).shape
    n, width = shape[0], math.prod(shape[1:])
    index_dtype = dtypes.default_int_dtype()
    iota = lax.iota(index_dtype, n)
    is_complex = dtypes.issubdtype(aval_of(rows).dtype, np.complexfloating)
    if is_complex and equal_nan:
        # One NaN for every complex number with a NaN part, so they group together.
        nan = lax.full(shape, complex(np.nan, 0), aval_of(rows).dtype)
        rows = lax.select_n(
            lax.bitwise_or(_is_nan(lax.real(rows)), _is_nan(lax.imag(rows))), rows, nan
        )
    columns = lax.reshape(rows, (n, width))
    keys = [lax.reshape(lax.slice_in_dim(columns, j, j + 1, axis=1), (n,)) for j in range(width)]
    perm = lax.sort((*keys, iota), dimension=0, num_keys=width)[-1] if width else iota
    ordered = gather_rows(rows, perm, mode="promise_in_bounds")
    flat = lax.reshape(ordered, (n, width))
    later, earlier = lax.slice_in_dim(flat, 1, n), lax.slice_in_dim(flat, 0, n - 1)
    differs = lax.ne(later, earlier)
    if equal_nan and dtypes.issubdtype(aval_of(rows).dtype, np.inexact):
        differs = lax.bitwise_and(
            differs, lax.bitwise_not(lax.bitwise_and(_is_nan(later), _is_nan(earlier)))
        )
    starts = lax.reduce_or(differs, (1,)) if width else lax.full((n - 1,), False, np.bool_)
    mask = lax.concatenate([lax.full((1,), True, np.bool_), starts], 0)
    return ordered, mask, perm


def _empty_core(rows, fill_value, *, size, return_index, return_inverse, return_counts):
    index_dtype = dtypes.default_int_dtype()
    values = lax.full((size, *aval_of(rows).shape[1:]), 0, aval_of(rows).dtype)
    if size:
        values = broadcast_to(scalar_like(fill_value, aval_of(rows).dtype), aval_of(values).shape)
    empty = lax.full((0,), 0, index_dtype)
    flags = (return_index, return_inverse, return_counts)
    return (values, *(empty for flag in flags if flag), lax.full((), 0, index_dtype))


def _unique_core(rows, fill_value, *, size, return_index, return_inverse, return_counts, equal_nan):
    n = aval_of(rows).shape[0]
    if n == 0:
        return _empty_core(
            rows, fill_value, size=size, return_index=return_index,
            return_inverse=return_inverse, return_counts=return_counts,
        )  # fmt: skip
    index_dtype = dtypes.default_int_dtype()
    ordered, mask, perm = unique_sorted(rows, equal_nan)
    count = count_true(mask, index_dtype)
    starts = flat_true_positions(mask, size + 1, index_dtype)
    first = lax.slice_in_dim(starts, 0, size)
    # Padding slots repeat the first (smallest) value, as JAX does without fill_value.
    inside = lax.lt(first, lax.full((), n, index_dtype))
    first_or_zero = lax.select_n(inside, lax.full((size,), 0, index_dtype), first)
    values = gather_rows(ordered, first_or_zero, mode="promise_in_bounds")
    if fill_value is not None:
        valid = lax.lt(lax.iota(index_dtype, size), count)
        trailing = (1,) * (len(aval_of(values).shape) - 1)
        valid = broadcast_to(lax.reshape(valid, (size, *trailing)), aval_of(values).shape)
        fill = broadcast_to(scalar_like(fill_value, aval_of(values).dtype), aval_of(values).shape)
        values = lax.select_n(valid, fill, values)
    out = [values]
    if return_index:
        out.append(gather_rows(perm, first_or_zero, mode="promise_in_bounds"))
    if return_inverse:
        one = lax.full((), 1, index_dtype)
        group = lax.cumsum(lax.convert_element_type(mask, index_dtype), axis=0) - one
        numbers = lax.ScatterDimensionNumbers(
            update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
        )
        inverse = lax.scatter(
            lax.full((n,), 0, index_dtype), lax.reshape(perm, (n, 1)), group, numbers,
            mode="promise_in_bounds", unique_indices=True,
        )  # fmt: skip
        out.append(inverse)
    if return_counts:
        out.append(lax.slice_in_dim(starts, 1, size + 1) - first)
    out.append(count)
    return tuple(out)


_unique_core = jit(
    _unique_core,
    static_argnames=("size", "return_index", "return_inverse", "return_counts", "equal_nan"),
)


def unique_rows(rows, *, size=None, fill_value=None, return_index=False, return_inverse=False,
                return_counts=False, equal_nan=True, hint=UNIQUE_SIZE_HINT):  # fmt: skip
    """The unique rows of ``rows`` (along axis 0) padded or cut to ``size``, what was
    asked for, and last the number of unique rows (a 0-d array)."""
    n = aval_of(rows).shape[0]
    if n == 0 and size and fill_value is None:
        raise ValueError(
            "jnp.unique: for zero-sized input with nonzero size argument, fill_value must be "
            "specified"
        )
    flags = dict(
        return_index=return_index,
        return_inverse=return_inverse,
        return_counts=return_counts,
        equal_nan=equal_nan,
    )
    if size is not None:
        return _unique_core(rows, fill_value, size=size, **flags)
    # Computed at the largest possible length, so one compilation serves all data of
    # this shape, then cut to the number of unique rows.
    *out, count = _unique_core(rows, fill_value, size=n, **flags)
    length = concrete_int(count, hint)
    cut = [lax.slice_in_dim(o, 0, length) for o in out]
    if return_inverse:
        position = 2 if return_index else 1
        cut[position] = out[position]
    return (*cut, count)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):  # fmt: skip
    ar = from_jax_array(ar)
    del sorted  # the result is always sorted
    check_arraylike("unique", ar)
    arr = to_array(ar)
    if size is not None:
        size = static_int(size, "size argument of jnp.unique()")
    shape = aval_of(arr).shape
    if axis is None:
        rows, axis_int = ravel(arr), 0
    else:
        axis_int = canonicalize_axis(operator.index(axis), len(shape))
        rows = moveaxis(arr, axis_int, 0)
    values, *rest = unique_rows(
        rows,
        size=size,
        fill_value=fill_value,
        return_index=bool(return_index),
        return_inverse=bool(return_inverse),
        return_counts=bool(return_counts),
        equal_nan=bool(equal_nan),
        hint="The error arose for the first argument of jnp.unique(). " + UNIQUE_SIZE_HINT,
    )[:-1]
    values = moveaxis(values, 0, axis_int)
    if return_inverse and axis is None:
        # NumPy 2 and JAX give the inverse the input's shape.
        position = 1 if return_index else 0
        rest[position] = lax.reshape(rest[position], shape)
    return values if not rest else (values, *rest)


def unique_all(x, /, *, size=None, fill_value=None):
    x = from_jax_array(x)
    check_arraylike("unique_all", x)
    values, indices, inverse, counts = unique(
        x, True, True, True, equal_nan=False, size=size, fill_value=fill_value
    )
    return _UniqueAllResult(values, indices, inverse, counts)


def unique_counts(x, /, *, size=None, fill_value=None):
    x = from_jax_array(x)
    check_arraylike("unique_counts", x)
    values, counts = unique(
        x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value
    )
    return _UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size=None, fill_value=None):
    x = from_jax_array(x)
    check_arraylike("unique_inverse", x)
    values, inverse = unique(
        x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value
    )
    return _UniqueInverseResult(values, inverse)


def unique_values(x, /, *, size=None, fill_value=None):
    x = from_jax_array(x)
    check_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)
