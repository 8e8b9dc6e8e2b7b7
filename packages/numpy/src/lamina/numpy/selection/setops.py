"""Set operations on arrays: ``isin``, ``intersect1d``, ``union1d``, ``setdiff1d``,
``setxor1d`` (``unique`` and its relatives are in :mod:`.unique_values`).

The results of the ``*1d`` functions are sorted 1-d arrays whose length depends on the
data: outside ``jit`` it comes from the concrete values, inside it is ``size=``, with
missing entries set to ``fill_value`` (by default the smallest entry of the result, or
0 where JAX uses 0).
"""

from __future__ import annotations

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.numpy.base.arguments import aval_of, check_arraylike, promote_dtypes, to_array
from lamina.numpy.base.shaping import broadcast_to, ravel
from lamina.numpy.base.static_values import concrete_int, static_int
from lamina.numpy.selection.plumbing import (
    count_true,
    flat_true_positions,
    gather_rows,
    scalar_like,
)
from lamina.numpy.selection.searching import searchsorted
from lamina.numpy.selection.unique_values import (
    unique_rows,
)

__all__ = [
    "intersect1d",
    "isin",
    "setdiff1d",
    "setxor1d",
    "union1d",
]

_METHODS = ("auto", "compare_all", "binary_search", "sort")


def _in1d(a, b, invert: bool, method: str):
    """Whether each entry of the 1-d ``a`` occurs in the 1-d ``b``."""
    n, m = aval_of(a).shape[0], aval_of(b).shape[0]
    if n == 0 or m == 0:
        return lax.full((n,), invert, np.bool_)
    if method in ("auto", "compare_all"):
        a_b = lax.broadcast_in_dim(a, (n, m), (0,))
        b_b = lax.broadcast_in_dim(b, (n, m), (1,))
        if invert:
            return lax.reduce_and(lax.ne(a_b, b_b), (1,))
        return lax.reduce_or(lax.eq(a_b, b_b), (1,))
    if method == "binary_search":
        b = lax.sort(b)
        found = gather_rows(b, searchsorted(b, a), mode="clip")
        return lax.ne(a, found) if invert else lax.eq(a, found)
    # method == "sort": merge a into b by sorting, b's entries before a's equal ones;
    # an entry of a is found when the last entry of b before it equals it.
    index_dtype = np.int32
    values = lax.concatenate([b, a], 0)
    from_a = lax.concatenate([lax.full((m,), 0, np.int8), lax.full((n,), 1, np.int8)], 0)
    origin = lax.iota(index_dtype, n + m)
    ordered, _, order = lax.sort((values, from_a, origin), dimension=0, num_keys=2)
    is_b = lax.lt(order, lax.full((), m, index_dtype))
    last_b = lax.cummax(lax.select_n(is_b, lax.full((n + m,), -1, index_dtype), origin), axis=0)
    last_b_value = gather_rows(ordered, lax.max(last_b, lax.full((), 0, index_dtype)), mode="clip")
    found = lax.bitwise_and(
        lax.ge(last_b, lax.full((), 0, index_dtype)), lax.eq(ordered, last_b_value)
    )
    numbers = lax.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    result = lax.scatter(
        lax.full((n,), False, np.bool_),
        lax.reshape(order - lax.full((), m, index_dtype), (n + m, 1)),
        found,
        numbers,
        mode="drop",
    )
    return lax.bitwise_not(result) if invert else result


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    del assume_unique  # every method is correct without it
    check_arraylike("isin", element, test_elements)
    if method not in _METHODS:
        raise ValueError(
            f"method={method!r} is not implemented; options are 'compare_all', "
            "'binary_search', 'sort', and 'auto'"
        )
    element, test_elements = promote_dtypes(element, test_elements)
    shape = aval_of(element).shape
    result = _in1d(ravel(element), ravel(test_elements), bool(invert), method)
    return lax.reshape(result, shape)


def _size_hint(name):
    return (
        f"The error arose in {name}(): its result's length depends on the values of its "
        "arguments. To use it inside jit or other transformations, pass size= (and "
        "optionally fill_value=)."
    )


def _compact(values, keep, size, fill_value):
    """The first ``size`` entries of ``values`` where ``keep`` is true, in order,
    padded with ``fill_value`` (default: the first entry kept, or 0 if none is); and
    the positions they came from, and which of them are real (not padding)."""
    dtype = aval_of(values).dtype
    n = aval_of(values).shape[0]
    positions = flat_true_positions(keep, size)
    picked = (
        gather_rows(values, positions, mode="fill", fill_value=0)
        if n
        else lax.full((size,), 0, dtype)
    )
    valid = lax.lt(
        lax.iota(aval_of(positions).dtype, size), count_true(keep, aval_of(positions).dtype)
    )
    if size == 0:
        return picked, positions, valid
    if fill_value is None:
        first_valid = lax.reshape(lax.slice_in_dim(valid, 0, 1), ())
        first = lax.reshape(lax.slice_in_dim(picked, 0, 1), ())
        fill = broadcast_to(lax.select_n(first_valid, lax.full((), 0, dtype), first), (size,))
    else:
        fill = broadcast_to(scalar_like(fill_value, dtype), (size,))
    return lax.select_n(valid, fill, picked), positions, valid


def _unique_padded(arr, assume_unique: bool):
    """``arr``'s unique values padded to its length, with their first indices and a
    mask of the real (not padding) entries."""
    n = aval_of(arr).shape[0]
    index_dtype = dtypes.default_int_dtype()
    if assume_unique or n == 0:
        return arr, lax.iota(index_dtype, n), lax.full((n,), True, np.bool_)
    values, first, count = unique_rows(arr, size=n, return_index=True)
    return values, first, lax.lt(lax.iota(index_dtype, n), count)


def _sorted_valid_first(values, valid, *extra):
    """``values`` (with ``extra`` arrays carried along) sorted, the valid entries first."""
    invalid = lax.convert_element_type(lax.bitwise_not(valid), np.int8)
    _, *out = lax.sort((invalid, values, *extra), dimension=0, num_keys=2)
    return out


def _setdiff_entries(a, b, assume_unique):
    values, _, valid = _unique_padded(a, assume_unique)
    compare_a, compare_b = promote_dtypes(values, b)
    return values, lax.bitwise_and(valid, _in1d(compare_a, compare_b, True, "auto"))


def _setxor_entries(a, b, assume_unique):
    a, _, valid_a = _unique_padded(a, assume_unique)
    b, _, valid_b = _unique_padded(b, assume_unique)
    values = lax.concatenate([a, b], 0)
    total = aval_of(values).shape[0]
    if total == 0:
        return values, lax.full((0,), False, np.bool_)
    valid = lax.concatenate([valid_a, valid_b], 0)
    (values,) = _sorted_valid_first(values, valid)
    position = lax.iota(np.int32, total)
    count = count_true(valid, np.int32)
    # Keep the entries equal to neither neighbour, among the valid ones (sorted first).
    differs = lax.ne(lax.slice_in_dim(values, 1, total), lax.slice_in_dim(values, 0, total - 1))
    true1 = lax.full((1,), True, np.bool_)
    last_valid = lax.eq(position, count - lax.full((), 1, np.int32))
    after = lax.bitwise_or(lax.concatenate([differs, true1], 0), last_valid)
    before = lax.concatenate([true1, differs], 0)
    keep = lax.bitwise_and(lax.lt(position, count), lax.bitwise_and(before, after))
    return values, keep


def _intersect_entries(a, b, assume_unique):
    """The merged sorted entries, which of them are values of both arrays (each is
    followed by its equal from ``b``), and what locating them in the inputs needs."""
    index_dtype = dtypes.default_int_dtype()
    a, first_a, valid_a = _unique_padded(a, assume_unique)
    b, first_b, valid_b = _unique_padded(b, assume_unique)
    values = lax.concatenate([a, b], 0)
    total = aval_of(values).shape[0]
    origin = lax.iota(index_dtype, total)
    if total == 0:
        return values, lax.full((0,), False, np.bool_), (origin, first_a, first_b)
    valid = lax.concatenate([valid_a, valid_b], 0)
    values, origin = _sorted_valid_first(values, valid, origin)
    valid_sorted = lax.lt(lax.iota(index_dtype, total), count_true(valid, index_dtype))
    # Each value occurs at most once per array, so equal neighbours are a value of both,
    # the one from ar1 first (the sort is stable).
    pair = lax.bitwise_and(
        lax.eq(lax.slice_in_dim(values, 1, total), lax.slice_in_dim(values, 0, total - 1)),
        lax.slice_in_dim(valid_sorted, 1, total),
    )
    keep = lax.concatenate([pair, lax.full((1,), False, np.bool_)], 0)
    return values, keep, (origin, first_a, first_b)


def _intersect_indices(positions, found, located, n1, n2):
    origin, first_a, first_b = located
    index_dtype = dtypes.default_int_dtype()
    shape = aval_of(positions).shape
    if not aval_of(origin).shape[0]:
        return lax.full(shape, n1, index_dtype), lax.full(shape, n2, index_dtype)
    in_a = gather_rows(origin, positions, mode="clip")
    one = lax.full((), 1, aval_of(positions).dtype)
    in_b = gather_rows(origin, positions + one, mode="clip") - lax.full((), n1, index_dtype)
    index_a = gather_rows(first_a, in_a, mode="clip") if n1 else in_a
    index_b = gather_rows(first_b, in_b, mode="clip") if n2 else in_b
    missing_a = lax.full(shape, n1, index_dtype)
    missing_b = lax.full(shape, n2, index_dtype)
    return lax.select_n(found, missing_a, index_a), lax.select_n(found, missing_b, index_b)


_ENTRIES = {
    "setdiff1d": _setdiff_entries,
    "setxor1d": _setxor_entries,
    "intersect1d": _intersect_entries,
}


def _set_core(a, b, fill_value, *, op, size, assume_unique, return_indices):
    entries = _ENTRIES[op](a, b, assume_unique)
    values, keep = entries[0], entries[1]
    result, positions, found = _compact(values, keep, size, fill_value)
    count = count_true(keep)
    if return_indices:
        n1, n2 = aval_of(a).shape[0], aval_of(b).shape[0]
        return (result, *_intersect_indices(positions, found, entries[2], n1, n2), count)
    return result, count


_set_core = jit(_set_core, static_argnames=("op", "size", "assume_unique", "return_indices"))


def _set_operation(op, a, b, size, fill_value, assume_unique, return_indices=False):
    flags = dict(op=op, assume_unique=bool(assume_unique), return_indices=bool(return_indices))
    if size is not None:
        out = _set_core(a, b, fill_value, size=size, **flags)[:-1]
    else:
        # Computed at the largest possible length, so one compilation serves all data
        # of these shapes, then cut to the length the values give.
        n1, n2 = aval_of(a).shape[0], aval_of(b).shape[0]
        # (Inputs wrongly promised unique can pair up more entries in intersect1d.)
        most_pairs = max(n1 + n2 - 1, 0) if assume_unique else min(n1, n2)
        bound = {"setdiff1d": n1, "setxor1d": n1 + n2, "intersect1d": most_pairs}[op]
        *out, count = _set_core(a, b, fill_value, size=bound, **flags)
        count = concrete_int(count, _size_hint(op))
        out = [lax.slice_in_dim(o, 0, count) for o in out]
        if return_indices and assume_unique:
            # JAX's indices of inputs promised unique come straight from the merge
            # sort's iota, sized for the merged length (int32 even with x64 on).
            narrow = np.int32 if n1 + n2 <= np.iinfo(np.int32).max else np.int64
            out = [out[0], *(lax.convert_element_type(o, narrow) for o in out[1:])]
    return tuple(out) if return_indices else out[0]


def union1d(ar1, ar2, *, size=None, fill_value=None):
    check_arraylike("union1d", ar1, ar2)
    if size is not None:
        size = static_int(size, "size argument of union1d()")
    a, b = promote_dtypes(ravel(ar1), ravel(ar2))
    both = lax.concatenate([a, b], 0)
    return unique_rows(both, size=size, fill_value=fill_value, hint=_size_hint("union1d"))[0]


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    check_arraylike("setdiff1d", ar1, ar2)
    if size is not None:
        size = static_int(size, "size argument of setdiff1d()")
    a, b = ravel(to_array(ar1)), ravel(to_array(ar2))
    fill = 0 if fill_value is None else fill_value
    if aval_of(a).shape[0] == 0:
        return broadcast_to(scalar_like(fill, aval_of(a).dtype), (size or 0,))
    return _set_operation("setdiff1d", a, b, size, fill, assume_unique)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    check_arraylike("setxor1d", ar1, ar2)
    if size is not None:
        size = static_int(size, "size argument of setxor1d()")
    a, b = promote_dtypes(ravel(ar1), ravel(ar2))
    return _set_operation("setxor1d", a, b, size, fill_value, assume_unique)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):  # fmt: skip
    check_arraylike("intersect1d", ar1, ar2)
    if size is not None:
        size = static_int(size, "size argument of intersect1d()")
    a, b = promote_dtypes(ravel(ar1), ravel(ar2))
    return _set_operation("intersect1d", a, b, size, fill_value, assume_unique, return_indices)
