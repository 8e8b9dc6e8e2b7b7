"""Reading a NumPy-style index (``x[0, 1:, None, idx, ...]``) into one entry per axis.

The result describes the index over the *expanded* operand: ``x`` with a size-1 axis
inserted wherever the index has ``None`` or a scalar boolean. After that expansion
every axis has exactly one entry:

* ``Window(start, length, step)``: a slice (``None`` axes become full windows, marked
  ``new_axis``), with ``bounds``, the slice's ``(start, stop, step)`` over its axis;
* ``StaticInt(value, given)``: a Python or NumPy integer (or 0-d NumPy integer array,
  ``is_array``) as ``given``, and its ``value`` counted from the end when negative;
* ``Advanced(index)``: an integer array (NumPy, lamina or traced) or a traced scalar
  integer. Boolean masks become one such array per axis they cover, and a scalar
  boolean an array of length 1 or 0 on its new axis, which is NumPy's meaning.

Nothing here emits operations: traced values pass through unchanged.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np
from lamina.interpreters import NonConcreteBooleanIndexError, Tracer
from lamina.ir import dtypes, is_symbolic_dim, max_dim, min_dim
from lamina.lax import aval_of

__all__ = ["Advanced", "ParsedIndex", "StaticInt", "Window", "is_traced_scalar", "parse_index"]


@dataclass(frozen=True)
class Window:
    start: int
    length: int
    step: int
    bounds: tuple[int, int, int] = (0, 0, 1)  # (start, stop, step) of the slice
    new_axis: bool = False  # an axis inserted by ``None``

    def is_full(self, size: int) -> bool:
        return self.step == 1 and self.start == 0 and self.length == size


@dataclass(frozen=True)
class StaticInt:
    value: int  # counted from the end when negative (if wrapping); may be out of bounds
    given: object  # the integer as written (a Python int, NumPy integer or 0-d array)
    is_array: bool = False  # a 0-d NumPy array: JAX reads it dynamically


@dataclass(frozen=True)
class Advanced:
    index: object  # np.ndarray of integers, or an integer lamina array / tracer


@dataclass(frozen=True)
class ParsedIndex:
    expanded_shape: tuple[int, ...]  # the operand's shape with the new axes inserted
    entries: tuple  # one Window / StaticInt / Advanced per expanded axis
    advanced_first: bool  # NumPy moves the advanced result axes to the front

    @property
    def has_arrays(self) -> bool:
        """Whether an integer array takes part (else only ints, traced scalars, slices)."""
        return any(isinstance(e, Advanced) and not is_traced_scalar(e) for e in self.entries)


def is_traced_scalar(entry) -> bool:
    """A scalar integer index only known at run time (a 0-d lamina array or tracer)."""
    return (
        isinstance(entry, Advanced)
        and not isinstance(entry.index, np.ndarray)
        and aval_of(entry.index).ndim == 0
    )


def _is_array(x) -> bool:
    return isinstance(x, (np.ndarray, Tracer)) or hasattr(x, "aval")


_VALID = (
    "only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and integer or "
    "boolean arrays are valid indices. Got {}"
)


def _as_tuple(idx) -> tuple:
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, list):
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            "`arr[array(seq)]` instead of `arr[seq]`. See "
            "https://github.com/jax-ml/jax/issues/4564 for more information."
        )
    return (idx,)


def _concrete_value(x):
    """The host value of an array or tracer, or None where it is not known."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        return None if value is None else np.asarray(value)
    return np.asarray(x)


def _static_slice_part(part, position, whole):
    if part is None:
        return None
    if isinstance(part, Tracer):
        value = part.to_concrete_value()
        if value is None:
            raise IndexError(
                f"Slice entries must be static integers. Got {whole} at position {position}"
            )
        return operator.index(np.asarray(value).item())
    return operator.index(part)


def _classify(item, position):
    """``(kind, value)`` for one entry of the index tuple."""
    if item is None:
        return "newaxis", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        parts = (_static_slice_part(p, position, item) for p in (item.start, item.stop, item.step))
        return "slice", slice(*parts)
    if isinstance(item, (str, bytes)):
        raise TypeError(f"JAX does not support string indexing; got idx={item!r}")
    if isinstance(item, (bool, np.bool_)):
        return "scalar_bool", bool(item)
    if isinstance(item, (int, np.integer)):
        return "int", item
    if isinstance(item, (list, tuple)):
        item = np.asarray(item)
        if item.dtype == np.float64:  # as jnp.asarray would make it
            item = item.astype(dtypes.canonicalize_dtype(item.dtype))
    elif isinstance(item, (float, complex, np.generic)):
        item = np.asarray(item)
    elif hasattr(item, "__jax_array__") and not _is_array(item):
        item = item.__jax_array__()
    if not _is_array(item):
        raise IndexError(_VALID.format(item))
    dtype = aval_of(item).dtype if not isinstance(item, np.ndarray) else item.dtype
    if dtype == np.bool_:
        value = _concrete_value(item)
        if value is None:
            raise NonConcreteBooleanIndexError(item)
        if value.ndim == 0:
            return "scalar_bool", bool(value)
        return "mask", value
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dtype}")
    if isinstance(item, np.ndarray):
        return ("int", item) if item.ndim == 0 else ("array", item)
    return "array", item


_INT32 = np.iinfo(np.int32)


def _wrap_static(given, size: int, wrap: bool) -> int:
    """``given`` counted from the end when negative (if ``wrap``; unsigned NumPy
    integers never are); one that does not fit an int32 is pinned to ``[-1, size]``,
    out of bounds as it was."""
    value = operator.index(given)
    if wrap and value < 0 and not dtypes.issubdtype(np.asarray(given).dtype, np.unsignedinteger):
        value += size
    if not is_symbolic_dim(value) and not _INT32.min <= value <= _INT32.max:
        value = min(max(value, -1), size)
    return value


def _wrap_array(index: np.ndarray, size: int, wrap: bool) -> np.ndarray:
    if index.dtype == np.uint64:  # does not fit int64: pin the large ones first
        index = np.minimum(index, size)
    index = index.astype(np.int64)
    if wrap:
        index = np.where(index < 0, index + size, index)
    return np.clip(index, -1, size)


def _symbolic_slice(s: slice, size):
    """``(start, stop, length)`` of a unit-step slice of an axis of symbolic ``size``."""
    if s.step not in (None, 1):
        raise TypeError(
            f"slicing an axis of symbolic size {size} supports only step 1, got step {s.step}"
        )

    def bound(b, default):
        if b is None:
            return default
        b = operator.index(b)
        return min_dim(size, b) if b >= 0 else max_dim(size + b, 0)

    start, stop = bound(s.start, 0), bound(s.stop, size)
    return start, stop, max_dim(stop - start, 0)


def parse_index(idx, shape: tuple[int, ...], wrap_negative: bool = True) -> ParsedIndex:
    """The entries of ``idx`` over ``shape`` (see the module docstring)."""
    items = [_classify(item, i) for i, item in enumerate(_as_tuple(idx))]
    kinds = [k for k, _ in items]
    if kinds.count("ellipsis") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(v.ndim if k == "mask" else k in ("slice", "int", "array") for k, v in items)
    if consumed > len(shape):
        raise IndexError(
            f"Too many indices: array is {len(shape)}-dimensional, but {consumed} were indexed"
        )
    if "ellipsis" not in kinds:
        items.append(("ellipsis", None))

    expanded: list[int] = []
    entries: list = []
    advanced_positions: list[int] = []
    axis = 0  # next axis of the original operand
    for position, (kind, value) in enumerate(items):
        if kind == "newaxis":
            expanded.append(1)
            entries.append(Window(0, 1, 1, (0, 1, 1), new_axis=True))
        elif kind == "scalar_bool":
            expanded.append(1)
            entries.append(Advanced(np.zeros(int(value), np.int64)))
            advanced_positions.append(position)
        elif kind == "ellipsis":
            for _ in range(len(shape) - consumed):
                expanded.append(shape[axis])
                entries.append(Window(0, shape[axis], 1, (0, shape[axis], 1)))
                axis += 1
        elif kind == "slice" and is_symbolic_dim(shape[axis]):
            start, stop, length = _symbolic_slice(value, shape[axis])
            expanded.append(shape[axis])
            entries.append(Window(start, length, 1, (start, stop, 1)))
            axis += 1
        elif kind == "slice":
            start, stop, step = value.indices(shape[axis])
            length = len(range(start, stop, step))
            expanded.append(shape[axis])
            entries.append(Window(start if length else 0, length, step, (start, stop, step)))
            axis += 1
        elif kind == "int":
            if shape[axis] == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            expanded.append(shape[axis])
            wrapped = _wrap_static(value, shape[axis], wrap_negative)
            entries.append(StaticInt(wrapped, value, isinstance(value, np.ndarray)))
            advanced_positions.append(position)
            axis += 1
        elif kind == "mask":
            covered = shape[axis : axis + value.ndim]
            if value.shape != covered:
                raise IndexError(
                    "boolean index did not match shape of indexed array in index "
                    f"{position}: got {value.shape}, expected {list(covered)}"
                )
            for coordinates in np.nonzero(value):
                expanded.append(shape[axis])
                entries.append(Advanced(coordinates.astype(np.int64)))
                axis += 1
            advanced_positions.append(position)
        else:  # an integer array or traced scalar
            index = value
            if isinstance(index, np.ndarray):
                index = _wrap_array(index, shape[axis], wrap_negative)
            expanded.append(shape[axis])
            entries.append(Advanced(index))
            advanced_positions.append(position)
            axis += 1
    distinct = sorted(set(advanced_positions))
    adjacent = not distinct or distinct[-1] - distinct[0] == len(distinct) - 1
    return ParsedIndex(tuple(expanded), tuple(entries), advanced_first=not adjacent)
