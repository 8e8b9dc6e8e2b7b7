"""Masked reads and writes of references (``load``, ``store``) and atomic
read-modify-writes (``atomic_add`` ...), as Triton kernels use them.

Without a mask they are ``ref[...]`` and ``ref[...] = v``. With one, positions may
fall outside the reference: a masked read gathers with out-of-bounds positions filled
and takes ``other`` where the mask is off; a masked write scatters, dropping the
positions the mask turns off (and any outside the reference).
"""

from __future__ import annotations

import numpy as np

from lamina.lax import Slice, ref_get, ref_set
from lamina.numpy import (
    arange,
    asarray,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    broadcast_to,
    maximum,
    minimum,
    reshape,
    where,
)
from lamina.pallas.language.views import TransformedRef, as_view, resolve

__all__ = [
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_xchg",
    "atomic_xor",
    "load",
    "store",
]

_I32 = np.int32


def _positions(ref, idx):
    """Per axis of ``ref``, the index array (broadcasting to the selection's shape)
    that ``ref[idx]`` selects; and the selection's shape."""
    view = TransformedRef(ref, tuple(Slice(0, d, 1) for d in ref.shape))
    axes = view.compose(idx)
    n_out = sum(isinstance(a, Slice) for a in axes)
    out_shape = tuple(a.size for a in axes if isinstance(a, Slice))
    positions, k = [], 0
    for a in axes:
        if isinstance(a, Slice):
            shape = [1] * n_out
            shape[k] = a.size
            p = asarray(a.start, _I32) + arange(a.size, dtype=_I32) * _I32(a.stride)
            positions.append(reshape(p, shape))
            k += 1
        else:
            positions.append(asarray(a, _I32))
    return positions, out_shape


def load(ref, *, mask=None, other=None, cache_modifier=None, eviction_policy=None,
         volatile=False):  # fmt: skip
    """``ref[...]`` (``ref`` may be a view ``x_ref.at[idx]``); with ``mask``, the
    elements where it is off (which may lie outside the reference) are ``other``."""
    base, idx = resolve(ref)
    if mask is None:
        return ref_get(base, idx)
    positions, shape = _positions(base, idx)
    whole = ref_get(base, None)
    fill = 0 if other is None else other
    x = whole.at[tuple(positions)].get(mode="fill", fill_value=0)
    return where(broadcast_to(mask, shape), x, asarray(fill, x.dtype))


def store(ref, val, *, mask=None, eviction_policy=None) -> None:
    """``ref[...] = val``; with ``mask``, only where it is on."""
    base, idx = resolve(ref)
    if mask is None:
        ref_set(base, idx, val)
        return
    positions, shape = _positions(base, idx)
    mask = broadcast_to(mask, shape)
    dropped = [where(mask, p, _I32(d)) for p, d in zip(positions, base.shape, strict=True)]
    whole = ref_get(base, None)
    value = broadcast_to(asarray(val, whole.dtype), shape)
    ref_set(base, None, whole.at[tuple(dropped)].set(value, mode="drop"))


def _atomic(op):
    def rmw(x_ref_or_view, idx, val, *, mask=None):
        view = as_view(x_ref_or_view).at[idx]
        old = load(view, mask=mask)
        store(view, op(old, asarray(val, old.dtype)), mask=mask)
        return old

    return rmw


atomic_add = _atomic(lambda old, v: old + v)
atomic_max = _atomic(maximum)
atomic_min = _atomic(minimum)
atomic_and = _atomic(bitwise_and)
atomic_or = _atomic(bitwise_or)
atomic_xor = _atomic(bitwise_xor)
atomic_xchg = _atomic(lambda old, v: broadcast_to(v, old.shape))
for _f, _name, _what in [
    (atomic_add, "atomic_add", "adds"),
    (atomic_max, "atomic_max", "takes the maximum with"),
    (atomic_min, "atomic_min", "takes the minimum with"),
    (atomic_and, "atomic_and", "ands"),
    (atomic_or, "atomic_or", "ors"),
    (atomic_xor, "atomic_xor", "xors"),
    (atomic_xchg, "atomic_xchg", "replaces with"),
]:
    _f.__name__ = _f.__qualname__ = _name
    _f.__doc__ = f"Atomically {_what} ``val`` at ``ref[idx]``; returns the old value."


def atomic_cas(ref, cmp, val):
    """Atomically writes ``val`` where ``ref`` holds ``cmp``; returns the old value."""
    base, idx = resolve(ref)
    old = ref_get(base, idx)
    ref_set(base, idx, where(old == cmp, val, old))
    return old
