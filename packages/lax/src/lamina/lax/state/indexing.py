"""Indexing mutable array references: ``Slice`` (``jax.ds``), and ``Indexer``, the
static description of ``ref[idx]`` that the reference primitives take as a param.

An ``Indexer`` gives, for each axis of the reference, either a slice (``Slice``: a
start, a static size and stride) or an integer index. Integer indices and slice starts
that are not Python ints are operands of the equation, in axis order; everything else
is static. Integer indices that are arrays are broadcast to one shape
(``int_shape``), and the result's shape follows JAX's rule: with the integer axes
adjacent, their shape replaces them in place; otherwise it comes first.

``read``, ``write`` and ``accumulate`` compute on the array a reference holds (eager
evaluation and discharge use them): a window (``dynamic_slice`` /
``dynamic_update_slice``) when every index is a scalar and every stride 1, else the
flat positions of the selected elements, read with a gather and written with a scatter.
"""

from __future__ import annotations

import dataclasses
import operator

import numpy as np

from lamina.interpreters import Tracer
from lamina.ir import dtypes
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import (
    add,
    broadcast_in_dim,
    clamp,
    convert_element_type,
    iota,
    mul,
    reshape,
)
from lamina.lax.slicing.dynamic_slicing import dynamic_slice, dynamic_update_slice
from lamina.lax.slicing.gather_scatter import (
    GatherDimensionNumbers,
    ScatterDimensionNumbers,
    gather,
    scatter,
    scatter_add,
)

__all__: list[str] = []


class Slice:
    """``size`` elements from ``start`` (an int or an array) every ``stride``."""

    __slots__ = ("size", "start", "stride")

    def __init__(self, start, size, stride: int = 1):
        if stride < 0:
            raise ValueError("`stride` must be >= 0.")
        self.start = start
        self.size = size
        self.stride = stride

    def __repr__(self):
        return f"Slice(start={self.start!r}, size={self.size!r}, stride={self.stride!r})"

    def __eq__(self, other):
        return isinstance(other, Slice) and all(
            a is b or (type(a) is int and a == b)
            for a, b in zip(
                (self.start, self.size, self.stride),
                (other.start, other.size, other.stride),
                strict=True,
            )
        )

    __hash__ = None

    @classmethod
    def from_slice(cls, slc: slice, dim: int) -> Slice:
        start, stop, step = slc.indices(dim)
        if step < 1:
            raise ValueError(f"slice must have a step >= 1 (found: {step})")
        size = max(0, -(-(stop - start) // step))
        return cls(start, size, step)


def dslice(start, size=None, stride=None):
    """A slice that may start at a traced index: ``dslice(i, n)`` is ``i:i+n``,
    ``dslice(n)`` is ``:n``, ``dslice(None)`` is ``:``."""
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if not isinstance(stride, int):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, size, stride)


ds = dslice


@dataclasses.dataclass(frozen=True)
class SliceAxis:
    """A slice of an axis; ``start`` is None when it is an operand."""

    start: int | None
    size: int
    stride: int


@dataclasses.dataclass(frozen=True)
class IntAxis:
    """An integer index into an axis (always an operand)."""


@dataclasses.dataclass(frozen=True)
class Indexer:
    """How ``ref[idx]`` selects from a reference of ``shape``: an entry per axis."""

    shape: tuple[int, ...]
    axes: tuple[SliceAxis | IntAxis, ...]
    int_shape: tuple[int, ...] = ()

    @property
    def n_operands(self) -> int:
        return sum(type(a) is IntAxis or a.start is None for a in self.axes)

    @property
    def int_positions(self) -> list[int]:
        return [i for i, a in enumerate(self.axes) if type(a) is IntAxis]

    def result_shape(self) -> tuple[int, ...]:
        """The shape of ``ref[idx]``."""
        slice_shape = tuple(a.size for a in self.axes if type(a) is SliceAxis)
        ints = self.int_positions
        if not ints:
            return slice_shape
        if ints != list(range(ints[0], ints[0] + len(ints))):
            return self.int_shape + slice_shape
        return slice_shape[: ints[0]] + self.int_shape + slice_shape[ints[0] :]

    def int_axes_first(self) -> bool:
        ints = self.int_positions
        return bool(ints) and ints != list(range(ints[0], ints[0] + len(ints)))

    def prepend_axis(self, size: int) -> Indexer:
        """This indexer on a reference with a new leading axis of ``size``, taken whole."""
        return Indexer((size, *self.shape), (SliceAxis(0, size, 1), *self.axes), self.int_shape)

    def pretty(self, names, operands) -> str:
        """``[0,:]``, ``[b:b+1,1:]``: JAX's text of the indexer."""
        ops = iter(operands)
        parts = []
        for axis, dim in zip(self.axes, self.shape, strict=True):
            if type(axis) is IntAxis:
                parts.append(names.use(next(ops), literal_dtype=False))
            elif axis.start is None:
                start = names.use(next(ops), literal_dtype=False)
                parts.append(f"{start}:{start}+{axis.size}")
            else:
                start = "" if axis.start == 0 else str(axis.start)
                end = axis.start + axis.size
                parts.append(f"{start}:{'' if end == dim else end}")
        return "[" + ",".join(parts) + "]"

    def __repr__(self):
        return f"Indexer(shape={self.shape}, axes={self.axes}, int_shape={self.int_shape})"


# ---------------------------------------------------------------- from user indices


def _is_static_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _concrete(x):
    """The value of ``x`` when it is known at trace time (not a tracer), else None."""
    if isinstance(x, Tracer):
        return None
    try:
        return operator.index(np.asarray(x)[()]) if np.ndim(x) == 0 else None
    except TypeError:
        return None


def make_indexer(idx, shape: tuple[int, ...]) -> tuple[Indexer | None, list]:
    """The ``Indexer`` and its operands for ``ref[idx]`` on a reference of ``shape``;
    ``(None, [])`` for the whole reference (``ref[...]``, ``ref[()]``)."""
    if idx is None or idx is Ellipsis:
        idx = ()
    elif not isinstance(idx, tuple):
        idx = (idx,)
    if not idx:
        return None, []
    n_ellipsis = sum(i is Ellipsis for i in idx)
    if n_ellipsis > 1:
        raise ValueError("Only one ellipsis is supported.")
    if n_ellipsis:
        at = next(i for i, x in enumerate(idx) if x is Ellipsis)
        idx = (*idx[:at], *[slice(None)] * (len(shape) - len(idx) + 1), *idx[at + 1 :])
    if len(idx) > len(shape):
        raise ValueError(f"`indices` must not be longer than `shape`: indices={idx}, shape={shape}")
    idx = (*idx, *[slice(None)] * (len(shape) - len(idx)))
    axes, operands, int_operands = [], [], []
    for i, dim in zip(idx, shape, strict=True):
        if isinstance(i, slice):
            i = Slice.from_slice(i, dim)
        if isinstance(i, Slice):
            if not _is_static_int(i.size):
                raise NotImplementedError("slices of a traced size are not supported")
            start = _concrete(i.start)
            # As JAX checks (a start of 0 is not checked).
            if start and start >= dim:
                raise ValueError(f"Out of bound slice: start={start}, dim={dim}.")
            if start and i.size and start + (i.size - 1) * i.stride >= dim:
                raise ValueError(
                    f"Out of bound slice: start={start}, size={i.size}, stride={i.stride}, "
                    f"dim={dim}."
                )
            if _is_static_int(i.start):
                axes.append(SliceAxis(int(i.start), int(i.size), i.stride))
            else:
                axes.append(SliceAxis(None, int(i.size), i.stride))
                operands.append(i.start)
            continue
        if _is_static_int(i):
            i = int(i)
            if i >= dim or i < -dim:
                raise ValueError(f"Out of bound indexer: idx={i}, dim={dim}.")
            axes.append(IntAxis())
            operands.append(i % dim if dim else i)
            int_operands.append(len(operands) - 1)
            continue
        aval = aval_of(i)
        if not dtypes.issubdtype(aval.dtype, np.integer) or aval.dtype == np.bool_:
            raise TypeError(f"indices of a Ref must be integers or slices, got {aval.str_short()}")
        value = _concrete(i)
        if value is not None and value >= dim:
            raise ValueError(f"Out of bound indexer: idx={value}, dim={dim}.")
        axes.append(IntAxis())
        operands.append(i)
        int_operands.append(len(operands) - 1)
    shapes = [np.shape(operands[k]) for k in int_operands]
    try:
        int_shape = tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        raise ValueError(f"Cannot broadcast shapes for indexing: {shapes}") from None
    for k in int_operands:
        if np.shape(operands[k]) != int_shape:
            x = operands[k]
            aval = aval_of(x)
            dims = tuple(range(len(int_shape) - aval.ndim, len(int_shape)))
            operands[k] = broadcast_in_dim(x, int_shape, dims)
    return Indexer(tuple(shape), tuple(axes), int_shape), operands


# ---------------------------------------------------------------- on arrays


def _simple(indexer: Indexer) -> bool:
    return not indexer.int_shape and all(type(a) is IntAxis or a.stride == 1 for a in indexer.axes)


def _window(indexer: Indexer, operands):
    """Starts and sizes of the window a simple indexer selects."""
    ops = iter(operands)
    starts, sizes = [], []
    for axis in indexer.axes:
        if type(axis) is IntAxis:
            starts.append(next(ops))
            sizes.append(1)
        else:
            starts.append(next(ops) if axis.start is None else axis.start)
            sizes.append(axis.size)
    return starts, sizes


def _positions(indexer: Indexer, operands):
    """The flat position in the reference of each element ``ref[idx]`` selects (an
    int32 array of the result's shape), each index clamped into its axis."""
    out_shape = indexer.result_shape()
    n_int = len(indexer.int_shape)
    first = indexer.int_positions[0] if indexer.int_positions else 0
    int_at = 0 if indexer.int_axes_first() else first
    strides = np.cumprod((1, *indexer.shape[::-1]))[:-1][::-1]
    ops = iter(operands)
    total = None
    slice_k = 0  # how many slice axes came before
    i32 = np.dtype(np.int32)
    for axis, dim, stride in zip(indexer.axes, indexer.shape, strides, strict=True):
        if type(axis) is IntAxis:
            x = convert_element_type(next(ops), i32)
            x = clamp(np.int32(0), x, np.int32(max(dim - 1, 0)))
            term = broadcast_in_dim(x, out_shape, tuple(range(int_at, int_at + n_int)))
        else:
            before_ints = not indexer.int_axes_first() and slice_k < first
            out_axis = slice_k if before_ints else slice_k + n_int
            slice_k += 1
            start = next(ops) if axis.start is None else axis.start
            span = (axis.size - 1) * axis.stride + 1 if axis.size else 0
            start = clamp(np.int32(0), convert_element_type(start, i32),
                          np.int32(max(dim - span, 0)))  # fmt: skip
            steps = mul(iota(i32, axis.size), np.int32(axis.stride))
            term = broadcast_in_dim(add(steps, start), out_shape, (out_axis,))
        term = mul(term, np.int32(stride))
        total = term if total is None else add(total, term)
    return total


def _flat(x):
    return reshape(x, (int(np.prod(aval_of(x).shape, dtype=np.int64)),))


_TAKE = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
_PUT = ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


def read(value, indexer: Indexer | None, operands):
    """``value[idx]`` for the array a reference holds."""
    if indexer is None:
        return value
    if _simple(indexer):
        starts, sizes = _window(indexer, operands)
        return reshape(dynamic_slice(value, starts, sizes), indexer.result_shape())
    pos = _positions(indexer, operands)
    taken = gather(_flat(value), reshape(pos, (*aval_of(pos).shape, 1)), _TAKE, (1,))
    return taken


def _put(value, indexer, operands, update, accumulate: bool):
    shape = aval_of(value).shape
    if _simple(indexer):
        starts, sizes = _window(indexer, operands)
        update = reshape(update, tuple(sizes))
        if accumulate:
            update = add(dynamic_slice(value, starts, sizes), update)
        return dynamic_update_slice(value, update, starts)
    pos = _positions(indexer, operands)
    indices = reshape(pos, (*aval_of(pos).shape, 1))
    combine = scatter_add if accumulate else scatter
    return reshape(combine(_flat(value), indices, update, _PUT), shape)


def write(value, indexer: Indexer | None, operands, update):
    """The array a reference holds after ``ref[idx] = update``."""
    if indexer is None:
        return update
    return _put(value, indexer, operands, update, accumulate=False)


def accumulate(value, indexer: Indexer | None, operands, update):
    """The array a reference holds after ``ref[idx] += update``."""
    if indexer is None:
        return add(value, update)
    return _put(value, indexer, operands, update, accumulate=True)
