"""Index tricks: ``meshgrid``, the grid makers ``mgrid`` and ``ogrid``, the
concatenators ``r_`` and ``c_`` (with NumPy's string directives such as ``'r'``,
``'0,2'`` or ``'-1,2,0'``), and NumPy's own ``s_`` and ``index_exp``."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.numpy.base.arguments import canonicalize_axis, check_arraylike, promote_dtypes, to_array
from lamina.numpy.base.static_values import concrete
from lamina.numpy.creation.conversion import array
from lamina.numpy.creation.ranges import arange, linspace

__all__ = ["c_", "index_exp", "meshgrid", "mgrid", "ogrid", "r_", "s_"]

s_ = np.s_
index_exp = np.index_exp


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors: with ``indexing='xy'`` (default)
    the first two axes of the outputs are swapped (Cartesian), with ``'ij'`` they are
    not (matrix indexing); ``sparse`` returns broadcastable arrays instead of full ones."""
    check_arraylike("meshgrid", *xi)
    if not copy:
        raise ValueError("jax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    arrays = [to_array(x) for x in xi]
    if any(a.ndim != 1 for a in arrays):
        raise ValueError(
            "Arguments to jax.numpy.meshgrid must be 1D, got shapes "
            f"{[tuple(a.shape) for a in arrays]}"
        )
    axes = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) >= 2:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(arrays)
    for a, axis in zip(arrays, axes, strict=True):
        shape[axis] = a.shape[0]
    outputs = []
    for a, axis in zip(arrays, axes, strict=True):
        target = [1] * len(shape) if sparse else list(shape)
        target[axis] = a.shape[0]
        outputs.append(lax.broadcast_in_dim(a, tuple(target), (axis,)))
    return outputs


def _static_bound(value, what: str, grid: str):
    return concrete(value, f"slice {what} of jnp.{grid}")


def _slice_values(s: slice, grid: str):
    """The 1-D array a slice stands for: ``arange(start, stop, step)``, or for an
    imaginary step ``n * 1j``, ``n`` points from start to stop inclusive."""
    start = 0 if s.start is None else _static_bound(s.start, "start", grid)
    stop = _static_bound(s.stop, "stop", grid)
    step = 1 if s.step is None else _static_bound(s.step, "step", grid)
    if np.iscomplexobj(step):
        return linspace(start, stop, int(abs(step)), endpoint=True)
    return arange(start, stop, step)


class _Grid:
    """``mgrid[...]`` / ``ogrid[...]``: one slice gives a 1-D range; a tuple of
    slices gives the ranges, promoted to one dtype, as a dense stacked grid (mgrid) or
    as a list of broadcastable arrays (ogrid)."""

    def __init__(self, sparse: bool, name: str):
        self.sparse, self.name = sparse, name

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key, self.name)
        ranges = promote_dtypes(*(_slice_values(k, self.name) for k in key))
        if self.sparse:
            return meshgrid(*ranges, indexing="ij", sparse=True)
        if not ranges:
            return lax.full((0,), 0, np.int32)
        grids = meshgrid(*ranges, indexing="ij")
        return lax.concatenate([lax.expand_dims(g, (0,)) for g in grids], 0)

    def __repr__(self):
        return f"lamina.numpy.{self.name}"


mgrid = _Grid(sparse=False, name="mgrid")
ogrid = _Grid(sparse=True, name="ogrid")


def _parse_directive(text: str):
    """(axis, ndmin, trans1d, matrix) from a directive such as ``'0,2,-1'`` or ``'r'``."""
    if text in ("r", "c"):
        return None, None, None, text
    parts = text.split(",")
    try:
        numbers = [int(p) for p in parts[:3]]
    except ValueError:
        raise ValueError(f"could not understand directive {text!r}") from None
    axis, ndmin, trans1d = ([*numbers, None, None])[:3]
    if len(parts) > 3:  # NumPy reads only axis and ndmin then
        trans1d = None
    return axis, ndmin, trans1d, None


def _with_ndmin(item, ndmin: int, trans1d: int):
    """``item`` with leading axes up to ``ndmin``; with ``trans1d`` != -1 its existing
    axes move to position ``trans1d`` among the new ones (NumPy's rule)."""
    ndim = item.ndim
    if ndim >= ndmin:
        return item
    out = lax.reshape(item, (1,) * (ndmin - ndim) + tuple(item.shape))
    if trans1d != -1:
        k2 = ndmin - ndim
        k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
        axes = list(range(ndmin))
        out = lax.transpose(out, tuple(axes[:k1] + axes[k2:] + axes[k1:k2]))
    return out


class _Concatenator:
    """``r_[...]`` / ``c_[...]``: slices become ranges, scalars and arrays are made at
    least ``ndmin``-dimensional, and everything is concatenated along ``axis``."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int):
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        if not items:
            raise IndexError(f"jnp.{self.name}[] needs at least one item to concatenate")
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, None
        if isinstance(items[0], str):
            parsed = _parse_directive(items[0])
            matrix = parsed[3]
            if matrix is None:
                axis = parsed[0]
                ndmin = parsed[1] if parsed[1] is not None else ndmin
                trans1d = parsed[2] if parsed[2] is not None else trans1d
            items = items[1:]
        pieces = []
        for item in items:
            if isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            value = _slice_values(item, self.name) if isinstance(item, slice) else item
            value = array(value, copy=False)
            pieces.append(_with_ndmin(value, max(ndmin, 1), trans1d))
        pieces = promote_dtypes(*pieces)
        out = lax.concatenate(pieces, canonicalize_axis(axis, pieces[0].ndim))
        if matrix is not None and out.ndim == 1:
            out = lax.reshape(out, (1, out.shape[0]) if matrix == "r" else (out.shape[0], 1))
        return out

    def __len__(self):
        return 0

    def __repr__(self):
        return f"lamina.numpy.{self.name}"


r_ = _Concatenator("r_", axis=0, ndmin=1, trans1d=-1)
c_ = _Concatenator("c_", axis=-1, ndmin=2, trans1d=0)
