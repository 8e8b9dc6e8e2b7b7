"""``associative_scan``: an inclusive prefix scan with an associative binary function,
in ``O(log n)`` parallel steps (combine neighbouring pairs, scan the half-size result
recursively, then fill in the remaining positions), built from ``slice``, ``pad`` and
``concatenate`` rather than a sequential loop.
"""

from __future__ import annotations

import numpy as np

from lamina.ir import dtypes, tree_util
from lamina.lax.base.primitives import add, bitwise_or
from lamina.lax.base.reshaping import concatenate, pad, rev
from lamina.lax.base.reshaping import slice as lax_slice

__all__ = ["associative_scan"]


def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """The running ``fn``-combination of ``elems`` along ``axis``: element ``i`` of the
    result is ``fn(... fn(fn(e[0], e[1]), e[2]) ..., e[i])`` (from the end with
    ``reverse``). ``fn`` must be associative and work elementwise on slices."""

    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    flat, tree = tree_util.tree_flatten(elems)
    if not flat:
        return elems
    ndim = len(np.shape(flat[0])) if not hasattr(flat[0], "aval") else len(flat[0].aval.shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"Axis {axis} is out of bounds for array of dimension {ndim}")
    axis %= ndim
    sizes = {_shape(x)[axis] for x in flat}
    if len(sizes) != 1:
        shown = [_shape(x)[axis] for x in flat]
        raise ValueError(
            f"Array inputs to associative_scan must have the same first dimension. (saw: {shown})"
        )
    if reverse:
        flat = [rev(x, (axis,)) for x in flat]

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        out_flat, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise ValueError(
                "the pytree structure of the output of fn must match that of its inputs"
            )
        return out_flat

    result = _scan(combine, flat, axis)
    if reverse:
        result = [rev(x, (axis,)) for x in result]
    return tree_util.tree_unflatten(tree, result)


def _shape(x):
    return tuple(x.aval.shape) if hasattr(x, "aval") else np.shape(x)


def _slice(x, axis, start, stop, step=1):
    shape = _shape(x)
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return lax_slice(x, starts, limits, strides)


def _scan(combine, elems, axis):
    n = _shape(elems[0])[axis]
    if n < 2:
        return elems
    # Pairs (0,1), (2,3), ...: their combinations are the odd positions' prefixes.
    reduced = combine(
        [_slice(x, axis, 0, n - 1, 2) for x in elems], [_slice(x, axis, 1, n, 2) for x in elems]
    )
    odd = _scan(combine, reduced, axis)
    if n % 2 == 0:
        even = combine(
            [_slice(x, axis, 0, _shape(x)[axis] - 1) for x in odd],
            [_slice(x, axis, 2, n, 2) for x in elems],
        )
    else:
        even = combine(odd, [_slice(x, axis, 2, n, 2) for x in elems])

    even = [concatenate([_slice(x, axis, 0, 1), e], axis) for x, e in zip(elems, even, strict=True)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd, strict=True)]


def _interleave(a, b, axis):
    """``a[0], b[0], a[1], b[1], ...`` along ``axis`` (``a`` as long as ``b`` or one
    longer)."""

    dtype = a.aval.dtype if hasattr(a, "aval") else np.asarray(a).dtype
    zero = np.zeros((), dtype)
    ndim = len(_shape(a))
    same = _shape(a)[axis] == _shape(b)[axis]
    cfg_a = [(0, 0, 0)] * ndim
    cfg_b = [(0, 0, 0)] * ndim
    cfg_a[axis] = (0, 1 if same else 0, 1)
    cfg_b[axis] = (1, 0 if same else 1, 1)
    pa, pb = pad(a, zero, cfg_a), pad(b, zero, cfg_b)
    if dtype == dtypes.bool_:
        return bitwise_or(pa, pb)
    return add(pa, pb)
