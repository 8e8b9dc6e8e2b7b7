"""Slicing: ``slice[start_indices, limit_indices, strides]``,
``dynamic_slice[slice_sizes]``, ``dynamic_update_slice`` and the ``_in_dim`` / ``index_``
helpers built on them (params as JAX 0.10.2 names them)."""

from __future__ import annotations

import builtins
import operator

import numpy as np

from lamina.interpreters import ad
from lamina.interpreters.mlir import hlo
from lamina.ir import ShapedArray
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.dynamic_slicing import (
    check_slice_sizes,
    dynamic_slice,
    dynamic_slice_p,
    dynamic_update_slice,
    dynamic_update_slice_p,
)

__all__ = [
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_slice_p",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "dynamic_update_slice_p",
    "index_in_dim",
    "slice",
    "slice_in_dim",
    "slice_p",
]


def _ints(xs) -> tuple[int, ...]:
    return tuple(operator.index(x) for x in xs)


# ------------------------------------------------------------------ slice


def _check_static_slice(x, start_indices, limit_indices):
    """JAX checks an unstrided slice as a dynamic slice with static starts: by its sizes
    alone (a start out of range is clamped, as XLA clamps dynamic slices)."""
    sizes = tuple(lim - s for s, lim in zip(start_indices, limit_indices, strict=True))
    check_slice_sizes(x, sizes, prefix="")
    return sizes


def _check_strided_slice(x, start_indices, limit_indices, strides):
    if any(s < 0 for s in start_indices):
        raise TypeError(
            f"slice start_indices must have every element be nonnegative, got {start_indices}."
        )
    if any(lim > d for lim, d in zip(limit_indices, x.shape, strict=True)):
        raise TypeError(
            "slice limit_indices must be less than or equal to operand shape, got "
            f"limit_indices {limit_indices} for operand shape {x.shape}."
        )
    if any(lim < s for s, lim in zip(start_indices, limit_indices, strict=True)):
        raise TypeError(
            "slice limit_indices must be greater than or equal to start_indices, got "
            f"start_indices {start_indices} and limit_indices {limit_indices}."
        )
    if len(strides) != x.ndim:
        raise TypeError(
            "slice strides must have length equal to the number of dimensions of the "
            f"operand, got strides {strides} for operand shape {x.shape}."
        )
    if any(s < 0 for s in strides):
        raise TypeError(f"slice strides must have every element be nonnegative, got {strides}.")
    sizes = (lim - s for s, lim in zip(start_indices, limit_indices, strict=True))
    return tuple(-(-size // st) for size, st in zip(sizes, strides, strict=True))


def _slice_abstract_eval(x, *, start_indices, limit_indices, strides):
    if len(start_indices) != x.ndim or len(limit_indices) != x.ndim:
        raise ValueError(
            "slice start_indices and limit_indices must have length equal to the number of "
            f"dimensions of the operand, got start_indices {start_indices} and "
            f"limit_indices {limit_indices} for operand shape {x.shape}."
        )
    if strides is None:
        shape = _check_static_slice(x, start_indices, limit_indices)
    else:
        shape = _check_strided_slice(x, start_indices, limit_indices, strides)
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def _clamped_starts(shape, start_indices, limit_indices):
    """Where an unstrided slice really starts: its start clamped so it fits."""
    return tuple(
        builtins.min(builtins.max(s, 0), d - (lim - s))
        for d, s, lim in zip(shape, start_indices, limit_indices, strict=True)
    )


def _slice_lowering(ctx, x, *, start_indices, limit_indices, strides):
    if strides is None:
        sizes = [lim - s for s, lim in zip(start_indices, limit_indices, strict=True)]
        start_indices = _clamped_starts(ctx.avals_in[0].shape, start_indices, limit_indices)
        limit_indices = [s + n for s, n in zip(start_indices, sizes, strict=True)]
        strides = [1] * len(sizes)
    return [hlo.slice(x, list(start_indices), list(limit_indices), list(strides))]


slice_p = standard_primitive("slice", _slice_abstract_eval, _slice_lowering)
ad.deflinear(slice_p)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    """The cotangent padded back into place: zeros at the edges and between strided
    elements."""
    from lamina.lax.reshaping import pad

    shape = x.aval.shape
    if strides is None:
        start_indices = _clamped_starts(shape, start_indices, limit_indices)
        strides = (1,) * len(shape)
    config = []
    for dim, start, stride, n in zip(shape, start_indices, strides, aval_of(ct).shape,
                                     strict=True):  # fmt: skip
        covered = n + max(n - 1, 0) * (stride - 1)
        config.append((start, dim - start - covered, stride - 1))
    return [pad(ct, np.zeros((), aval_of(ct).dtype), config)]


slice_p.def_transpose(_slice_transpose)


def _slice_batching(axis_data, vals, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    start = (*start_indices[:d], 0, *start_indices[d:])
    limit = (*limit_indices[:d], axis_data.size, *limit_indices[d:])
    if strides is not None:
        strides = (*strides[:d], 1, *strides[d:])
    out = slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)
    return out, d


slice_p.def_batching(_slice_batching)


def slice(operand, start_indices, limit_indices, strides=None):
    """The elements of ``operand`` from ``start_indices`` up to (not including)
    ``limit_indices``, every ``strides``-th along each dimension."""
    return slice_p.bind(
        operand,
        start_indices=_ints(start_indices),
        limit_indices=_ints(limit_indices),
        strides=None if strides is None else _ints(strides),
    )


def _canonical_axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    return axis + ndim if axis < 0 else axis


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[..., start_index:limit_index:stride, ...]`` along ``axis``: ``None``
    bounds mean the ends, negative ones count from the end (no clamping, as in JAX)."""
    shape = aval_of(operand).shape
    axis = _canonical_axis(axis, len(shape))
    size = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start, limit = start + size if start < 0 else start, limit + size if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """The ``index``-th slice of ``operand`` along ``axis`` (negative counts from the
    end), with that axis kept at size 1 or removed."""
    from lamina.lax.reshaping import squeeze

    shape = aval_of(operand).shape
    axis = _canonical_axis(axis, len(shape))
    index = operator.index(index)
    size = shape[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


# ------------------------------------------------------------------ dynamic, along one axis


def _starts_along(operand, start_index, axis):
    """Start indices of zero but at ``axis`` (the zeros of ``start_index``'s dtype)."""
    ndim = aval_of(operand).ndim
    zero = 0 if isinstance(start_index, int) else np.zeros((), aval_of(start_index).dtype)
    starts = [zero] * ndim
    starts[axis] = start_index
    return starts


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):  # fmt: skip
    """The ``slice_size`` elements of ``operand`` along ``axis`` from the run-time
    ``start_index`` (clamped so they fit)."""
    shape = aval_of(operand).shape
    axis = _canonical_axis(axis, len(shape))
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    starts = _starts_along(operand, start_index, axis)
    allow = [True] * len(shape)
    allow[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):  # fmt: skip
    """``operand`` with ``update`` written along ``axis`` from the run-time
    ``start_index``."""
    axis = _canonical_axis(axis, aval_of(operand).ndim)
    starts = _starts_along(operand, start_index, axis)
    allow = [True] * len(starts)
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def _dynamic_index_in_dim(operand, index, axis, keepdims, allow_negative_indices):
    from lamina.lax.reshaping import squeeze

    axis = _canonical_axis(axis, aval_of(operand).ndim)
    out = dynamic_slice_in_dim(
        operand, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    return out if keepdims else squeeze(out, (axis,))


def _dynamic_update_index_in_dim(operand, update, index, axis, allow_negative_indices):
    from lamina.lax.reshaping import expand_dims

    axis = _canonical_axis(axis, aval_of(operand).ndim)
    if aval_of(update).ndim != aval_of(operand).ndim:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(
        operand, update, index, axis, allow_negative_indices=allow_negative_indices
    )


def _named_jit(fun, name, static_argnames):
    """``fun`` staged as a call named ``name`` (JAX jits these two helpers)."""
    from lamina.interpreters import jit

    fun.__name__ = fun.__qualname__ = name
    return jit(fun, static_argnames=static_argnames)


_jitted_index = _named_jit(
    _dynamic_index_in_dim,
    "dynamic_index_in_dim",
    ("axis", "keepdims", "allow_negative_indices"),
)
_jitted_update_index = _named_jit(
    _dynamic_update_index_in_dim,
    "dynamic_update_index_in_dim",
    ("axis", "allow_negative_indices"),
)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):  # fmt: skip
    """The slice of ``operand`` at the run-time ``index`` along ``axis`` (clamped into
    range), with that axis kept at size 1 or removed."""
    return _jitted_index(
        operand,
        index,
        axis=operator.index(axis),
        keepdims=bool(keepdims),
        allow_negative_indices=_hashable(allow_negative_indices),
    )


def dynamic_update_index_in_dim(operand, update, index, axis, *,
                                allow_negative_indices=True):  # fmt: skip
    """``operand`` with the slice at the run-time ``index`` along ``axis`` replaced by
    ``update`` (which may lack that axis)."""
    return _jitted_update_index(
        operand,
        update,
        index,
        axis=operator.index(axis),
        allow_negative_indices=_hashable(allow_negative_indices),
    )


def _hashable(allow):
    return allow if isinstance(allow, bool) else tuple(bool(a) for a in allow)
