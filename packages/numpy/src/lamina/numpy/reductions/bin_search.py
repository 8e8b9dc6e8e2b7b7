"""Where values fall among sorted edges: a vectorized binary search (a ``fori_loop`` of
``log2(len(edges))`` steps over all queries at once) in NumPy's sort order (NaN above
every number), as the histograms and ``interp`` look up bins."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.ir import dtypes
from lamina.numpy.base.arguments import promote_dtypes
from lamina.numpy.reductions import rules as rc

__all__ = ["search_sorted", "take_at"]


def _less(a, b):
    """``a < b`` in NumPy's sort order, where NaN is above every number."""
    less = lax.lt(a, b)
    if dtypes.issubdtype(np.result_type(a.dtype, b.dtype), np.inexact):
        less = lax.bitwise_or(less, lax.bitwise_and(rc.isnan(b), lax.bitwise_not(rc.isnan(a))))
    return less


@rc.staged(2)
def search_sorted(edges, values, side: str):
    """For each of ``values``, how many of the sorted 1-D ``edges`` lie below it (``side
    ='left'``) or at or below it (``'right'``): NumPy's ``searchsorted``, as int32."""
    edges, values = promote_dtypes(edges, values)
    n = edges.shape[0]
    low = rc.full(values.shape, 0, np.int32)
    if n == 0:
        return low
    high = rc.full(values.shape, n, np.int32)
    one = np.array(1, np.int32)

    def belongs_right(edge, value):
        return lax.bitwise_not(_less(value, edge)) if side == "right" else _less(edge, value)

    def halve(_, bounds):
        low, high = bounds
        active = lax.lt(low, high)
        middle = lax.div(lax.add(low, high), np.array(2, np.int32))
        edge = take_at(edges, lax.min(middle, np.array(n - 1, np.int32)))
        right = lax.bitwise_and(active, belongs_right(edge, values))
        left = lax.bitwise_and(active, lax.bitwise_not(right))
        return rc.promoting_select(right, lax.add(middle, one), low), rc.promoting_select(
            left, middle, high
        )

    steps = int(n).bit_length() + 1
    low, _ = lax.fori_loop(0, steps, halve, (low, high))
    return low


def take_at(vector, index):
    """``vector[index]`` elementwise for an int32 ``index`` array of any shape."""
    flat = lax.reshape(index, (index.size, 1))
    numbers = lax.GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    taken = lax.gather(vector, flat, numbers, (1,), mode="promise_in_bounds")
    return lax.reshape(taken, index.shape)
