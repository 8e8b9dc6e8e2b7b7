"""Atomic read-modify-writes of references: ``atomic_add``, ``atomic_max``, ...,
``atomic_xchg`` (the ``atomic_rmw`` primitive) and ``atomic_cas`` (``atomic_cas``).

``atomic_rmw`` takes the reference, the value, the operands of its ``indexer`` and
the mask if any, and returns the old values. Discharged (interpret mode, where a
kernel instance runs alone) it reads, combines and writes back; the compiled lowering
emits ``tt.atomic_rmw``/``tt.atomic_cas``.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import def_standard_impl
from lamina.ir import AbstractRef, Primitive, ShapedArray, WriteEffect
from lamina.numpy import (
    add,
    asarray,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    broadcast_to,
    maximum,
    minimum,
    where,
)
from lamina.pallas.language.memory import positions, selection, split_operands
from lamina.pallas.language.views import as_view

__all__ = [
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_cas_p",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_rmw_p",
    "atomic_xchg",
    "atomic_xor",
]

atomic_rmw_p = Primitive("atomic_rmw")
atomic_rmw_p.effectful = True
atomic_cas_p = Primitive("atomic_cas")
atomic_cas_p.effectful = True

COMBINE = {
    "add": add,
    "max": maximum,
    "min": minimum,
    "and": bitwise_and,
    "or": bitwise_or,
    "xor": bitwise_xor,
    "xchg": lambda old, v: v,
}


def _shape(ref_shape, indexer):
    return tuple(ref_shape) if indexer is None else indexer.result_shape()


def _rmw(kind: str):
    def rmw(x_ref_or_view, idx, val, *, mask=None):
        base, indexer, operands = selection(as_view(x_ref_or_view).at[idx])
        shape = _shape(base.shape, indexer)
        val = broadcast_to(asarray(val, base.dtype), shape)
        extra = [] if mask is None else [broadcast_to(mask, shape)]
        return atomic_rmw_p.bind(base, val, *operands, *extra, indexer=indexer,
                                 atomic_type=kind, has_mask=mask is not None)  # fmt: skip

    rmw.__name__ = rmw.__qualname__ = f"atomic_{kind}"
    rmw.__doc__ = f"Atomically ``{kind}`` of ``val`` into ``ref[idx]``; returns the old values."
    return rmw


atomic_add = _rmw("add")
atomic_max = _rmw("max")
atomic_min = _rmw("min")
atomic_and = _rmw("and")
atomic_or = _rmw("or")
atomic_xor = _rmw("xor")
atomic_xchg = _rmw("xchg")


def atomic_cas(ref, cmp, val):
    """Atomically writes ``val`` where ``ref`` holds ``cmp``; returns the old value."""
    base, indexer, _ = selection(ref)
    if indexer is not None:
        raise NotImplementedError("atomic_cas on a view of a reference")
    dtype = base.dtype
    return atomic_cas_p.bind(base, asarray(cmp, dtype), asarray(val, dtype))


def _rmw_abstract_eval(ref_aval, val_aval, *rest, indexer, atomic_type, has_mask):
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`atomic_rmw` must be called on `Ref` types: {ref_aval}.")
    inner = ref_aval.inner_aval
    return ShapedArray(_shape(inner.shape, indexer), inner.dtype), {WriteEffect(0)}


def _cas_abstract_eval(ref_aval, cmp_aval, val_aval):
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`atomic_cas` must be called on `Ref` types: {ref_aval}.")
    return ref_aval.inner_aval, {WriteEffect(0)}


def _rmw_discharge(in_avals, out_avals, ref, val, *rest, indexer, atomic_type, has_mask):
    idx, extra = split_operands(rest, indexer, int(has_mask))
    pos = positions(indexer, idx, ref.shape)
    old = ref.at[tuple(pos)].get(mode="fill", fill_value=0)
    if has_mask:
        shape = _shape(ref.shape, indexer)
        pos = [where(extra[0], broadcast_to(p, shape), np.int32(d))
               for p, d in zip(pos, ref.shape, strict=True)]  # fmt: skip
    new = ref.at[tuple(pos)].set(COMBINE[atomic_type](old, val), mode="drop")
    return [new, None, *[None] * len(rest)], old


def _cas_discharge(in_avals, out_avals, ref, cmp, val):
    return [where(ref == cmp, val, ref), None, None], ref


atomic_rmw_p.def_effectful_abstract_eval(_rmw_abstract_eval)
atomic_cas_p.def_effectful_abstract_eval(_cas_abstract_eval)
atomic_rmw_p.def_discharge(_rmw_discharge)
atomic_cas_p.def_discharge(_cas_discharge)
def_standard_impl(atomic_rmw_p)
def_standard_impl(atomic_cas_p)
