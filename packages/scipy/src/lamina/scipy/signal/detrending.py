"""`detrend`: remove the mean, or a least-squares line per segment between
breakpoints, along an axis."""

from __future__ import annotations

import itertools

import numpy as np

import lamina.numpy as jnp
from lamina.numpy import canonicalize_axis, promote_dtypes_inexact, to_array

__all__ = ["detrend"]


def _remove_line(segment):
    """``segment`` (points along axis 0) minus its least-squares straight line."""
    n = segment.shape[0]
    if n == 1:
        return segment - segment
    t = np.arange(n) - (n - 1) / 2  # centred abscissa: the slope decouples from the mean
    norm = float(np.sum(np.square(t)))
    t = t.reshape((n,) + (1,) * (segment.ndim - 1)).astype(segment.dtype)
    centred = segment - segment.mean(axis=0, keepdims=True)
    slope = (t * centred).sum(axis=0, keepdims=True) / norm
    return centred - t * slope


def detrend(data, axis: int = -1, type: str = "linear", bp=0, overwrite_data: None = None):
    """``data`` less its trend along ``axis`` (as scipy.signal.detrend)."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (data,) = promote_dtypes_inexact(to_array(data))
    if type == "constant":
        return data - data.mean(axis, keepdims=True)
    axis = canonicalize_axis(axis, data.ndim)
    n = data.shape[axis]
    edges = np.unique(np.r_[0, bp, n])
    if edges[0] < 0 or edges[-1] > n:
        raise ValueError(
            "Breakpoints must be non-negative and less than length of data along given axis."
        )
    if n == 0:
        return data
    moved = jnp.moveaxis(data, axis, 0)
    pieces = [_remove_line(moved[start:stop]) for start, stop in itertools.pairwise(edges)]
    return jnp.moveaxis(jnp.concatenate(pieces, axis=0), 0, axis)
