"""Slicing: ``slice[start_indices, limit_indices, strides]``,
``dynamic_slice[slice_sizes]``, ``dynamic_update_slice`` and the ``_in_dim`` / ``index_``
helpers built on them (params as JAX 0.10.2 names them)."""

from __future__ import annotations

import operator

import numpy as np

from lamina.lax.base.operands import aval_of
from lamina.lax.base.reshaping import expand_dims, squeeze
from lamina.lax.dynamic_slicing import (
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
]


def _ints(xs) -> tuple[int, ...]:
    return tuple(operator.index(x) for x in xs)


def _canonical_axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    return axis + ndim if axis < 0 else axis


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

    axis = _canonical_axis(axis, aval_of(operand).ndim)
    out = dynamic_slice_in_dim(
        operand, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    return out if keepdims else squeeze(out, (axis,))


def _dynamic_update_index_in_dim(operand, update, index, axis, allow_negative_indices):

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
