"""``searchsorted``: insertion points of values in a sorted 1-d array, by one of four
methods (a binary search as a loop or unrolled, a merge by sorting, or comparing all
pairs), all ordering values as lax.sort does (NaNs after everything, complex numbers by
real then imaginary part)."""

from __future__ import annotations

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.numpy.base.arguments import aval_of, check_arraylike, promote_dtypes, to_array
from lamina.numpy.base.shaping import broadcast_to, ravel
from lamina.numpy.selection.plumbing import gather_rows

__all__ = ["searchsorted"]

_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def _float_less(x, y):
    nan_y = lax.ne(y, y)
    return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(nan_y, lax.eq(x, x)))


def sort_order_less(x, y):
    """``x < y`` in lax.sort's order: NaN above every number, complex numbers compared
    by real part, then imaginary part."""
    dtype = aval_of(x).dtype
    if dtypes.issubdtype(dtype, np.complexfloating):
        xr, yr, xi, yi = lax.real(x), lax.real(y), lax.imag(x), lax.imag(y)
        real_equal = lax.bitwise_and(
            lax.bitwise_not(_float_less(xr, yr)), lax.bitwise_not(_float_less(yr, xr))
        )
        return lax.bitwise_or(_float_less(xr, yr), lax.bitwise_and(real_equal, _float_less(xi, yi)))
    if dtypes.issubdtype(dtype, np.floating):
        return _float_less(x, y)
    if dtype == np.bool_:
        return lax.bitwise_and(lax.bitwise_not(x), y)
    return lax.lt(x, y)


def _goes_after(element, value, side):
    """Whether ``value`` is inserted after ``element`` of the sorted array."""
    if side == "left":
        return sort_order_less(element, value)
    return lax.bitwise_not(sort_order_less(value, element))


def _binary_search(a, v, side, dtype, unrolled):
    n = aval_of(a).shape[0]
    shape = aval_of(v).shape
    low = lax.full(shape, 0, dtype)
    high = lax.full(shape, n, dtype)

    def step(_, bounds):
        low, high = bounds
        mid = lax.div(low + high, lax.full((), 2, dtype))
        element = lax.gather(
            a,
            lax.reshape(lax.min(mid, lax.full((), max(n - 1, 0), dtype)), (*shape, 1)),
            lax.GatherDimensionNumbers(
                offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)
            ),
            (1,),
            mode="promise_in_bounds",
        )
        after = lax.bitwise_and(_goes_after(element, v, side), lax.lt(low, high))
        before = lax.bitwise_and(lax.bitwise_not(after), lax.lt(low, high))
        return lax.select_n(after, low, mid + 1), lax.select_n(before, high, mid)

    steps = int(n).bit_length()
    bounds = (low, high)
    if unrolled:
        for i in range(steps):
            bounds = step(i, bounds)
    else:
        bounds = lax.fori_loop(0, steps, step, bounds)
    return bounds[0]


def _merge_by_sort(a, v, side, dtype):
    n = aval_of(a).shape[0]
    shape = aval_of(v).shape
    flat = ravel(v)
    m = aval_of(flat).shape[0]
    values = lax.concatenate([a, flat], 0)
    # Equal values: the query goes before the array's element for side='left', after
    # it for side='right'.
    query_first = side == "left"
    tie = lax.concatenate(
        [lax.full((n,), int(query_first), np.int8), lax.full((m,), int(not query_first), np.int8)],
        0,
    )
    origin = lax.iota(dtype, n + m)
    _, _, order = lax.sort((values, tie, origin), dimension=0, num_keys=2)
    from_array = lax.convert_element_type(lax.lt(order, lax.full((), n, dtype)), dtype)
    before = lax.cumsum(from_array, axis=0) - from_array
    numbers = lax.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    out = lax.scatter(
        lax.full((m,), 0, dtype),
        lax.reshape(order - lax.full((), n, dtype), (n + m, 1)),
        before,
        numbers,
        mode="drop",
        unique_indices=True,
    )
    return lax.reshape(out, shape)


def _compare_all(a, v, side, dtype):
    n = aval_of(a).shape[0]
    shape = aval_of(v).shape
    a_b = lax.broadcast_in_dim(a, (n, *shape), (0,))
    v_b = broadcast_to(v, (n, *shape))
    after = lax.convert_element_type(_goes_after(a_b, v_b, side), dtype)
    return lax.reduce_sum(after, (0,))


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    if sorter is None:
        check_arraylike("searchsorted", a, v)
    else:
        check_arraylike("searchsorted", a, v, sorter)
    a, v = to_array(a), to_array(v)
    if len(aval_of(a).shape) != 1:
        raise ValueError("a should be 1-dimensional")
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in _METHODS:
        raise ValueError(f"invalid argument method={method!r}, expected one of {sorted(_METHODS)}")
    a, v = promote_dtypes(a, v)
    n = aval_of(a).shape[0]
    if sorter is not None:
        sorter = to_array(sorter)
        sorter = lax.select_n(lax.lt(sorter, lax.full((), 0, aval_of(sorter).dtype)), sorter,
                              sorter + n)  # fmt: skip
        a = gather_rows(a, sorter, mode="clip")
    dtype = np.dtype(np.int64 if n > np.iinfo(np.int32).max else np.int32)
    if n == 0:
        return lax.full(aval_of(v).shape, 0, dtype)
    if method == "scan":
        return _binary_search(a, v, side, dtype, unrolled=False)
    if method == "scan_unrolled":
        return _binary_search(a, v, side, dtype, unrolled=True)
    if method == "sort":
        return _merge_by_sort(a, v, side, dtype)
    return _compare_all(a, v, side, dtype)


searchsorted = jit(searchsorted, static_argnames=("side", "method"))
