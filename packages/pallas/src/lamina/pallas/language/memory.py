"""Masked reads and writes of references (``load``, ``store``) and their primitives
``masked_load`` and ``masked_swap``, as Triton kernels use them.

Each primitive takes the reference, (``masked_swap``) the value, the operands of its
``indexer`` param (lax's ``Indexer``), then the mask and (``masked_load``) the value
for masked-off elements when given. With a mask, positions may fall outside the
reference: discharged, a masked read gathers with out-of-bounds positions filled and
takes ``other`` where the mask is off, and a masked write scatters, dropping the
positions the mask turns off (and any outside the reference). The compiled lowering
turns them into masked ``tt.load``/``tt.store``.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import Zero, ad, def_standard_impl
from lamina.ir import AbstractRef, Primitive, ReadEffect, ShapedArray, WriteEffect
from lamina.lax import IntAxis, make_indexer
from lamina.numpy import arange, asarray, broadcast_to, reshape, where
from lamina.pallas.language.views import resolve

__all__ = [
    "load",
    "masked_load_p",
    "masked_swap_p",
    "store",
]

_I32 = np.int32

masked_load_p = Primitive("masked_load")
masked_load_p.effectful = True
masked_swap_p = Primitive("masked_swap")
masked_swap_p.effectful = True


def selection(ref):
    """The reference, ``Indexer`` and index operands that ``ref`` (a reference or a
    view) selects."""
    return _indexer(ref, None)


def _indexer(ref, idx):
    base, idx = resolve(ref, idx)
    if type(getattr(base, "aval", None)) is not AbstractRef:
        raise TypeError(f"expected a reference (or a view of one), got {type(ref).__name__}")
    if isinstance(idx, tuple) or idx is not None:
        indexer, operands = make_indexer(idx, base.shape)
    else:
        indexer, operands = None, []
    if indexer is not None and indexer.int_shape:
        raise NotImplementedError("masked loads and stores with integer array indices")
    return base, indexer, operands


def _shape(ref_shape, indexer):
    return tuple(ref_shape) if indexer is None else indexer.result_shape()


def load(ref, *, mask=None, other=None, cache_modifier=None, eviction_policy=None,
         volatile=False):  # fmt: skip
    """``ref[...]`` (``ref`` may be a view ``x_ref.at[idx]``); with ``mask``, the
    elements where it is off (which may lie outside the reference) are ``other``."""
    base, indexer, operands = _indexer(ref, None)
    if mask is None:
        return masked_load_p.bind(base, *operands, indexer=indexer, has_mask=False,
                                  has_other=False)  # fmt: skip
    shape = _shape(base.shape, indexer)
    extra = [broadcast_to(mask, shape)]
    if other is not None:
        extra.append(broadcast_to(asarray(other, base.dtype), shape))
    return masked_load_p.bind(base, *operands, *extra, indexer=indexer, has_mask=True,
                              has_other=other is not None)  # fmt: skip


def store(ref, val, *, mask=None, eviction_policy=None) -> None:
    """``ref[...] = val``; with ``mask``, only where it is on."""
    _swap(ref, val, mask)


def _swap(ref, val, mask):
    base, indexer, operands = _indexer(ref, None)
    shape = _shape(base.shape, indexer)
    val = broadcast_to(asarray(val, base.dtype), shape)
    extra = [] if mask is None else [broadcast_to(mask, shape)]
    return masked_swap_p.bind(base, val, *operands, *extra, indexer=indexer,
                              has_mask=mask is not None)  # fmt: skip


# ---------------------------------------------------------------- rules


def _load_abstract_eval(ref_aval, *rest, indexer, has_mask, has_other):
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`load` must be called on `Ref` types: {ref_aval}.")
    inner = ref_aval.inner_aval
    return ShapedArray(_shape(inner.shape, indexer), inner.dtype), {ReadEffect(0)}


def _swap_abstract_eval(ref_aval, val_aval, *rest, indexer, has_mask):
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`swap` must be called on `Ref` types: {ref_aval}.")
    inner = ref_aval.inner_aval
    shape = _shape(inner.shape, indexer)
    if tuple(val_aval.shape) != shape:
        raise ValueError(
            f"Invalid shape for `swap`. Ref shape: {inner.shape}. Expected shape: {shape}. "
            f"Value shape: {val_aval.shape}. "
        )
    return ShapedArray(shape, inner.dtype), {WriteEffect(0)}


masked_load_p.def_effectful_abstract_eval(_load_abstract_eval)
masked_swap_p.def_effectful_abstract_eval(_swap_abstract_eval)
def_standard_impl(masked_load_p)
def_standard_impl(masked_swap_p)


def positions(indexer, operands, shape):
    """Per axis of the array, the int32 positions ``array[indexer]`` selects (arrays
    broadcasting to the selection's shape)."""
    if indexer is None:
        n = len(shape)
        return [reshape(arange(d, dtype=_I32), [d if j == k else 1 for j in range(n)])
                for k, d in enumerate(shape)]  # fmt: skip
    ops = iter(operands)
    n_out = len(indexer.result_shape())
    out, k = [], 0
    for axis in indexer.axes:
        if type(axis) is IntAxis:
            out.append(asarray(next(ops), _I32))
            continue
        start = next(ops) if axis.start is None else axis.start
        p = asarray(start, _I32) + arange(axis.size, dtype=_I32) * _I32(axis.stride)
        out.append(reshape(p, [axis.size if j == k else 1 for j in range(n_out)]))
        k += 1
    return out


def split_operands(rest, indexer, n_after):
    """The index operands and the ``n_after`` operands after them."""
    n_idx = 0 if indexer is None else indexer.n_operands
    return list(rest[:n_idx]), list(rest[n_idx : n_idx + n_after])


def _load_discharge(in_avals, out_avals, ref, *rest, indexer, has_mask, has_other):
    idx, extra = split_operands(rest, indexer, int(has_mask) + int(has_other))
    pos = positions(indexer, idx, ref.shape)
    x = ref.at[tuple(pos)].get(mode="fill", fill_value=0)
    if has_mask:
        other = extra[1] if has_other else asarray(0, x.dtype)
        x = where(extra[0], x, other)
    return [None] * (1 + len(rest)), x


def _swap_discharge(in_avals, out_avals, ref, val, *rest, indexer, has_mask):
    idx, extra = split_operands(rest, indexer, int(has_mask))
    pos = positions(indexer, idx, ref.shape)
    old = ref.at[tuple(pos)].get(mode="fill", fill_value=0)
    if has_mask:
        shape = _shape(ref.shape, indexer)
        pos = [where(extra[0], broadcast_to(p, shape), _I32(d))
               for p, d in zip(pos, ref.shape, strict=True)]  # fmt: skip
    new = ref.at[tuple(pos)].set(val, mode="drop")
    return [new, None, *[None] * len(rest)], old


masked_load_p.def_discharge(_load_discharge)
masked_swap_p.def_discharge(_swap_discharge)


def _load_jvp(primals, tangents, *, indexer, has_mask, has_other):
    _, *rest = primals
    out = masked_load_p.bind(*primals, indexer=indexer, has_mask=has_mask, has_other=has_other)
    if type(tangents[0]) is Zero:
        return out, Zero(ad.tangent_aval(out.aval))
    idx, extra = split_operands(rest, indexer, int(has_mask) + int(has_other))
    # Masked-off tangents are zero (the tangent of a constant ``other``).
    extra = extra[:1] + [asarray(0, out.dtype) * out] * has_other
    t = masked_load_p.bind(tangents[0], *idx, *extra, indexer=indexer, has_mask=has_mask,
                           has_other=has_other)  # fmt: skip
    return out, t


def _swap_jvp(primals, tangents, *, indexer, has_mask):
    ref, _, *rest = primals
    out = masked_swap_p.bind(*primals, indexer=indexer, has_mask=has_mask)
    if type(tangents[0]) is Zero:
        if type(tangents[1]) is not Zero:
            raise Exception(
                "performing a set/swap operation with a differentiated value on a "
                f"non-differentiated array reference of type {ref.aval}."
            )
        return out, Zero(ad.tangent_aval(out.aval))
    t = masked_swap_p.bind(tangents[0], ad.instantiate_zeros(tangents[1]), *rest,
                           indexer=indexer, has_mask=has_mask)  # fmt: skip
    return out, t


masked_load_p.def_jvp(_load_jvp)
masked_swap_p.def_jvp(_swap_jvp)
