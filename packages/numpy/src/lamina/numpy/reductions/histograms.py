"""Counting and binning in jax.numpy: ``bincount``, ``digitize``, ``histogram``,
``histogram_bin_edges``, ``histogram2d`` and ``histogramdd``.

Bin lookup is a vectorized binary search (:func:`.bin_search.search_sorted`, a ``fori_loop`` of
``log2(len(edges))`` steps over all queries at once); counts are scatter-adds. Shapes
of results depend on the number of bins, so ``bins`` (an int) and ``bincount``'s
``length`` must be known while tracing.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np
from lamina import lax
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    check_arraylike,
    from_jax_array,
    promote_dtypes,
    promote_dtypes_inexact,
)
from lamina.numpy.base.shaping import broadcast_to, ravel
from lamina.numpy.base.static_values import as_array, concrete
from lamina.numpy.reductions import folding
from lamina.numpy.reductions import rules as rc
from lamina.numpy.reductions.bin_search import search_sorted

__all__ = [
    "bincount",
    "digitize",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
]

_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def digitize(x, bins, right=False, *, method=None):
    """Index of the bin of ``bins`` (monotonic, increasing or decreasing) each element of
    ``x`` falls in, as ``numpy.digitize``."""
    check_arraylike("digitize", x, bins)
    x, bins_array = rc.to_array(x), rc.to_array(bins)
    right = bool(concrete(right, "right argument of jnp.digitize()"))
    if bins_array.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins!r}")
    if method is not None and method not in _SEARCH_METHODS:
        raise ValueError(f"Unsupported method: {method}")
    n = bins_array.shape[0]
    if n == 0:
        return rc.full(x.shape, 0, np.int32)
    return _staged_digitize(x, bins_array, right)


@rc.staged(2)
def _staged_digitize(x, bins_array, right):
    n = bins_array.shape[0]
    side = "left" if right else "right"
    increasing = search_sorted(bins_array, x, side)
    decreasing = lax.sub(np.array(n, np.int32), search_sorted(lax.rev(bins_array, (0,)), x, side))
    is_increasing = lax.ge(rc.take_index(bins_array, -1), rc.take_index(bins_array, 0))
    return rc.promoting_select(is_increasing, increasing, decreasing)


def bincount(x, weights=None, minlength=0, *, length=None, out_sharding=None):
    """Number of occurrences (or summed ``weights``) of each non-negative integer in
    ``x``; ``length`` fixes the output size and is needed under ``jit``."""
    del out_sharding  # one device: the result is replicated
    x = as_array("bincount", x)
    if x.dtype == np.bool_:
        x = lax.convert_element_type(x, np.int32)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(
        concrete(minlength, "The error occurred because of argument 'minlength' of jnp.bincount.")
    )
    if length is None:
        known = concrete(
            x,
            "The error occurred because of argument 'x' of jnp.bincount. "
            "To avoid this error, pass a static `length` argument.",
        )
        values = np.asarray(known)
        length = builtins.max(minlength, int(values.max(initial=-1)) + 1 if values.size else 0)
    else:
        length = operator.index(
            concrete(length, "The error occurred because of argument 'length' of jnp.bincount.")
        )
    if weights is None:
        weights = np.array(1, dtypes.default_int_dtype())
    else:
        weights = as_array("bincount", weights)
        if weights.shape != x.shape:
            raise ValueError(
                f"type of weights must match type of x. Got typeof(x)={x.dtype}{list(x.shape)} "
                f"and typeof(weights)={weights.dtype}{list(weights.shape)}"
            )
    index = lax.max(x, np.array(0, x.dtype))
    return _scatter_add(rc.full((length,), 0, rc.to_array(weights).dtype), index, weights)


def _scatter_add(target, index, updates):
    """``target.at[index].add(updates)`` for a 1-D target, dropping indices out of range."""
    updates = broadcast_to(rc.convert(updates, target.dtype), index.shape)
    numbers = lax.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    flat_index = lax.reshape(index, (index.size, 1))
    flat_updates = lax.reshape(updates, (index.size,))
    return lax.scatter_add(target, flat_index, flat_updates, numbers, mode="drop")


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """Edges of the bins :func:`histogram` uses: ``bins`` itself when it is an array,
    else ``bins + 1`` evenly spaced edges over ``range`` (default: min to max)."""
    a = from_jax_array(a)
    del weights
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    a = rc.to_array(a)
    dtype = dtypes.to_inexact_dtype(a.dtype)
    if np.ndim(bins) == 1:
        return rc.convert(rc.to_array(bins), dtype)
    count = operator.index(concrete(bins, "bins argument of histogram_bin_edges"))
    if range is None:
        low, high = folding.min(a), folding.max(a)
    else:
        if np.shape(range) != (2,):
            raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
        low, high = range[0], range[1]
    low, high = rc.convert(rc.to_array(low), dtype), rc.convert(rc.to_array(high), dtype)
    degenerate = lax.eq(low, high)
    half = np.array(0.5, dtype)
    low = rc.promoting_select(degenerate, lax.sub(low, half), low)
    high = rc.promoting_select(degenerate, lax.add(high, half), high)
    return _linspace(low, high, count + 1, dtype)


def _linspace(start, stop, num, dtype):
    """``num`` evenly spaced values from ``start`` to ``stop`` (both included)."""
    if num == 1:
        return lax.expand_dims(start, (0,))
    fraction = lax.div(
        lax.convert_element_type(lax.iota(np.int32, num), dtype), np.array(num - 1, dtype)
    )
    # Blending the ends (rather than stepping from ``start``) rounds as jnp.linspace does.
    values = lax.add(lax.mul(start, lax.sub(np.array(1, dtype), fraction)), lax.mul(stop, fraction))
    # The last edge is exactly ``stop``, whatever the rounding of the steps.
    last = lax.eq(lax.iota(np.int32, num), np.array(num - 1, np.int32))
    return rc.promoting_select(last, stop, values)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """Counts (or summed ``weights``) of ``a`` in each bin, and the bin edges; the last
    bin includes its right edge. ``density`` normalizes to a probability density."""
    a = from_jax_array(a)
    if weights is None:
        check_arraylike("histogram", a, bins)
        (a,) = promote_dtypes_inexact(rc.to_array(a))
        weights = rc.full(a.shape, 1, a.dtype)
    else:
        check_arraylike("histogram", a, bins, weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        a, weights = promote_dtypes_inexact(rc.to_array(a), rc.to_array(weights))
    edges = histogram_bin_edges(a, bins, range, weights)
    return _staged_histogram(a, weights, edges, bool(density))


@rc.staged(3)
def _staged_histogram(a, weights, edges, density):
    n_edges = edges.shape[0]
    flat = ravel(a)
    index = search_sorted(edges, flat, "right")
    on_last_edge = lax.eq(flat, rc.take_index(edges, -1))
    index = rc.promoting_select(on_last_edge, np.array(n_edges - 1, np.int32), index)
    counts = _scatter_add(rc.full((n_edges,), 0, weights.dtype), index, ravel(weights))
    counts = lax.slice_in_dim(counts, 1, n_edges)
    if density:
        widths = lax.sub(
            lax.slice_in_dim(edges, 1, n_edges), lax.slice_in_dim(edges, 0, n_edges - 1)
        )
        counts = lax.div(lax.div(counts, widths), folding.sum(counts))
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """Two-dimensional histogram of the points ``(x, y)``: counts and the edges along
    each coordinate."""
    check_arraylike("histogram2d", x, y)
    x, y = promote_dtypes(rc.to_array(x), rc.to_array(y))
    try:
        n_bins = len(bins)
    except TypeError:
        n_bins = 1
    if n_bins not in (1, 2):
        bins = [rc.to_array(bins), rc.to_array(bins)]
    sample = lax.concatenate([lax.expand_dims(ravel(x), (1,)), lax.expand_dims(ravel(y), (1,))], 1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """Histogram of ``sample`` (N points of D coordinates): counts of shape of the bins
    per dimension, and the list of edges per dimension."""
    sample = from_jax_array(sample)
    if weights is None:
        (sample,) = promote_dtypes_inexact(as_array("histogramdd", sample))
    else:
        check_arraylike("histogramdd", sample, weights)
        sample, weights = rc.to_array(sample), rc.to_array(weights)
        if weights.shape != sample.shape[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = promote_dtypes_inexact(sample, weights)
    n_points, n_dims = sample.shape
    if range is not None and (
        len(range) != n_dims or builtins.any(r is not None and np.shape(r)[0] != 2 for r in range)
    ):
        raise ValueError(
            f"For sample.shape={(n_points, n_dims)}, range must be a sequence of {n_dims} pairs "
            f"or Nones; got range={range!r}"
        )
    try:
        bins_per_dim = list(bins)
    except TypeError:
        bins_per_dim = [bins] * n_dims
    else:
        if len(bins_per_dim) != n_dims:
            raise ValueError("should be a bin for each dimension.")
    flat_index = None
    edges_per_dim, sizes = [], []
    for d in builtins.range(n_dims):
        column = rc.take_index(sample, d, 1)
        edges = histogram_bin_edges(column, bins_per_dim[d], None if range is None else range[d])
        index = search_sorted(edges, column, "right")
        on_last_edge = lax.eq(column, rc.take_index(edges, -1))
        index = rc.promoting_select(on_last_edge, lax.sub(index, np.array(1, np.int32)), index)
        size = edges.shape[0] + 1  # bins plus an underflow and an overflow slot
        flat_index = (
            index
            if flat_index is None
            else lax.add(lax.mul(flat_index, np.array(size, np.int32)), index)
        )
        edges_per_dim.append(edges)
        sizes.append(size)
    total = int(np.prod(sizes))
    values = np.array(1, dtypes.default_int_dtype()) if weights is None else weights
    dtype = rc.to_array(values).dtype
    hist = _scatter_add(rc.full((total,), 0, dtype), flat_index, values)
    hist = lax.reshape(hist, tuple(sizes))
    hist = lax.slice(hist, (1,) * n_dims, tuple(s - 1 for s in sizes))
    if density:
        hist = rc.convert(hist, sample.dtype)
        hist = lax.div(hist, folding.sum(hist))
        for d, edges in enumerate(edges_per_dim):
            n = edges.shape[0]
            widths = lax.sub(lax.slice_in_dim(edges, 1, n), lax.slice_in_dim(edges, 0, n - 1))
            shape = [1] * n_dims
            shape[d] = n - 1
            hist = lax.div(hist, lax.reshape(widths, tuple(shape)))
    return hist, edges_per_dim
