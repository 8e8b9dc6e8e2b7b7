"""Arithmetic helpers of the kernel language: ``cdiv``, ``align_to``,
``next_power_of_2``, ``strides_from_shape``, ``broadcast_to``, ``reciprocal``, the
compiler hints ``multiple_of`` and ``max_contiguous`` (values pass through), and
``empty``/``empty_like``/``empty_ref_like``."""

from __future__ import annotations

import math

import numpy as np

from lamina.ir import dtypes
from lamina.lax import div, full, new_ref
from lamina.numpy import asarray
from lamina.numpy import broadcast_to as _np_broadcast_to
from lamina.numpy import reciprocal as _np_reciprocal

__all__ = [
    "align_to",
    "broadcast_to",
    "cdiv",
    "empty",
    "empty_like",
    "empty_ref_like",
    "max_contiguous",
    "multiple_of",
    "next_power_of_2",
    "reciprocal",
    "strides_from_shape",
]


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def cdiv(a, b):
    """``a / b`` rounded up, for non-negative integers."""
    if _is_int(a) and _is_int(b):
        return -(-int(a) // int(b))
    a, b = asarray(a), asarray(b)
    return div(a + b - 1, b)


def align_to(a, alignment):
    """``a`` rounded up to a multiple of ``alignment``."""
    return cdiv(a, alignment) * alignment


def next_power_of_2(x: int) -> int:
    """The least power of 2 that is at least ``x``."""
    if x < 0:
        raise ValueError("`next_power_of_2` requires a non-negative integer.")
    return 1 if x == 0 else 2 ** math.ceil(math.log2(x))


def strides_from_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The row-major strides, in elements, of an array of ``shape``."""
    return tuple(math.prod(shape[k + 1 :]) for k in range(len(shape)))


def broadcast_to(a, shape: tuple[int, ...]):
    """``a`` broadcast to ``shape``."""
    return _np_broadcast_to(a, shape)


def reciprocal(x, *, approx=False, full_range=True):
    """``1 / x`` (computed exactly here)."""
    return _np_reciprocal(x)


def multiple_of(x, values):
    """``x``, with the promise that it is a multiple of ``values``."""
    return x


def max_contiguous(x, values):
    """``x``, with the promise that its first ``values`` elements are contiguous."""
    return x


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose contents do not matter (zeros here)."""
    shape = (shape,) if _is_int(shape) else tuple(shape)
    return full(shape, 0, dtypes.canonicalize_dtype(dtype))


def empty_like(x):
    return empty(x.shape, x.dtype)


def empty_ref_like(x):
    """A reference of ``x``'s type whose contents do not matter."""
    return new_ref(empty(x.shape, x.dtype))
