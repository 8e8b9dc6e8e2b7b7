"""Tangent types and symbolic zeros: the values differentiation works with.

The tangents of values of an inexact dtype have that dtype; the tangents of integer,
boolean and extended values (PRNG keys) have dtype ``float0``, a type with one value,
zero (:func:`tangent_dtype`, :func:`tangent_aval`). A tangent may be a *symbolic zero*:
:class:`Zero` holds only the tangent's type, and no array exists for it until
:func:`instantiate_zeros` makes one. Every derivative rule, of a transformation or of a
runtime primitive such as ``device_put``, reads and writes these.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters.core.tracing import shaped_abstractify
from lamina.ir import ShapedArray, dtypes

__all__ = [
    "Zero",
    "instantiate_zeros",
    "is_zero",
    "register_zeros_maker",
    "tangent_aval",
    "tangent_dtype",
    "zeros_like_aval",
]


def tangent_dtype(dtype) -> np.dtype:
    """The dtype of tangents of ``dtype``: itself for inexact dtypes, else float0
    (extended dtypes, PRNG keys, included)."""
    if isinstance(dtype, dtypes.ExtendedDType):
        return dtypes.float0
    dtype = np.dtype(dtype)
    if dtype == dtypes.float0 or not dtypes.issubdtype(dtype, np.inexact):
        return dtypes.float0
    return dtype


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The abstract value of tangents of values of type ``aval``."""
    dtype = tangent_dtype(aval.dtype)
    if dtype == aval.dtype:
        return aval
    return ShapedArray(aval.shape, dtype, weak_type=aval.weak_type)


class Zero:
    """A symbolic zero tangent of type ``aval``: no array exists for it."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def from_primal_value(x) -> Zero:
        return Zero(tangent_aval(shaped_abstractify(x)))

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


def is_zero(t) -> bool:
    return type(t) is Zero


_zeros_maker = None


def register_zeros_maker(maker) -> None:
    """``maker(aval)`` builds an array of zeros of type ``aval`` by binding primitives
    (the array layer installs one, so a traced zero prints as JAX prints it)."""
    global _zeros_maker
    _zeros_maker = maker


def zeros_like_aval(aval: ShapedArray):
    """An array of zeros of type ``aval`` (a NumPy ``float0`` array for ``float0``)."""
    if aval.dtype == dtypes.float0 and all(isinstance(d, int) for d in aval.shape):
        return np.zeros(aval.shape, dtypes.float0)
    if _zeros_maker is not None:
        return _zeros_maker(aval)
    return np.zeros(aval.shape, aval.dtype)


def instantiate_zeros(t):
    """``t``, or an array of zeros where ``t`` is a symbolic zero."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t
