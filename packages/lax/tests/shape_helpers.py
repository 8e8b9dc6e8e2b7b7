"""Shared by the shape and slicing tests: a sum over all axes, vmap against a loop,
and a NumPy reference for lax.pad."""

from __future__ import annotations

import numpy as np

from lamina import lax
from lamina.interpreters import vmap


def total(y):
    return lax.reduce_sum(y, tuple(range(len(y.aval.shape))))


def vmap_matches_loop(f, args, in_axes):
    """vmap(f) at ``in_axes`` equals stacking f over the batch (at axis 0)."""
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes, strict=True) if ax is not None)
    want = [
        np.asarray(
            f(
                *[
                    a if ax is None else np.take(a, i, ax)
                    for a, ax in zip(args, in_axes, strict=True)
                ]
            )
        )
        for i in range(size)
    ]
    got = vmap(f, in_axes=tuple(in_axes))(*args)
    np.testing.assert_allclose(np.asarray(got), np.stack(want), rtol=1e-6)


def numpy_pad(x, value, config):
    """Reference pad: interior first, then edges (negative edges cut)."""
    for axis, (lo, hi, interior) in enumerate(config):
        n = x.shape[axis]
        size = n + max(n - 1, 0) * interior
        shape = list(x.shape)
        shape[axis] = size
        spread = np.full(shape, value, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, interior + 1)
        spread[tuple(index)] = x
        shape[axis] = max(lo, 0) + size + max(hi, 0)
        out = np.full(shape, value, x.dtype)
        index[axis] = slice(max(lo, 0), max(lo, 0) + size)
        out[tuple(index)] = spread
        index[axis] = slice(max(-lo, 0), shape[axis] - max(-hi, 0))
        x = out[tuple(index)]
    return x
