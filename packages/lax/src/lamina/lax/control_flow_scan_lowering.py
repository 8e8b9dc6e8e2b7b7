"""The lowering of ``scan``: a ``stablehlo.while`` over an int32 counter whose body reads
one slice of each ``xs`` with ``dynamic_slice`` and writes one slice of each ``ys`` with
``dynamic_update_slice`` (from the end when ``reverse``)."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.lowering import lower_jaxpr_body
from lamina.interpreters.mlir import hlo, ir
from lamina.ir.core import ShapedArray

__all__ = ["scan_lowering"]


def _unstacked(aval: ShapedArray) -> ShapedArray:
    return aval.update(shape=aval.shape[1:])


def scan_lowering(ctx, *args, jaxpr, length, reverse, num_consts, num_carry, **_):
    consts = list(args[:num_consts])
    carry = list(args[num_consts : num_consts + num_carry])
    xs = list(args[num_consts + num_carry :])
    xs_avals = ctx.avals_in[num_consts + num_carry :]
    ys_avals = ctx.avals_out[num_carry:]
    i32 = ShapedArray((), np.dtype(np.int32))
    ys_init = [mb.broadcast_to(mb.constant(np.zeros((), a.dtype), a.update(shape=())),
                               a.update(shape=()), a.shape) for a in ys_avals]  # fmt: skip
    state = [mb.constant(np.int32(0), i32), *consts, *carry, *xs, *ys_init]
    state_avals = [i32, *ctx.avals_in, *ys_avals]
    types = ctx.ir_types(state_avals)
    loop = hlo.WhileOp(types, state)
    cond_block = loop.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        direction = hlo.ComparisonDirectionAttr.get("LT")
        kind = hlo.ComparisonTypeAttr.get("SIGNED")
        pred = hlo.compare(cond_block.arguments[0], mb.constant(np.int32(length), i32),
                           direction, compare_type=kind)  # fmt: skip
        hlo.return_([pred])
    body_block = loop.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        vals = list(body_block.arguments)
        i = vals[0]
        c_v = vals[1 : 1 + num_consts]
        carry_v = vals[1 + num_consts : 1 + num_consts + num_carry]
        xs_v = vals[1 + num_consts + num_carry : 1 + len(args)]
        ys_v = vals[1 + len(args) :]
        idx = i
        if reverse:
            idx = hlo.subtract(mb.constant(np.int32(length - 1), i32), i)
        x_slices = [_index(ctx, x, a, idx) for x, a in zip(xs_v, xs_avals, strict=True)]
        outs = lower_jaxpr_body(ctx.module_context, jaxpr.jaxpr, jaxpr.consts,
                                [*c_v, *carry_v, *x_slices])  # fmt: skip
        new_carry = outs[:num_carry]
        new_ys = [
            _update(ctx, y, a, idx, out)
            for y, a, out in zip(ys_v, ys_avals, outs[num_carry:], strict=True)
        ]
        one = mb.constant(np.int32(1), i32)
        hlo.return_([hlo.add(i, one), *c_v, *new_carry, *xs_v, *new_ys])
    results = list(loop.results)
    return results[1 + num_consts : 1 + num_consts + num_carry] + results[1 + len(args) :]


def _starts(ctx, idx, rank):
    zero = mb.constant(np.int32(0), ShapedArray((), np.dtype(np.int32)))
    return [idx] + [zero] * (rank - 1)


def _index(ctx, x, aval, idx):
    one = aval.update(shape=(1, *aval.shape[1:]))
    sl = hlo.dynamic_slice(x, _starts(ctx, idx, len(aval.shape)), list(one.shape))
    return hlo.reshape(mb.ir_type(_unstacked(aval)), sl)


def _update(ctx, ys, aval, idx, y):
    one = aval.update(shape=(1, *aval.shape[1:]))
    y1 = hlo.reshape(mb.ir_type(one), y)
    return hlo.dynamic_update_slice(ys, y1, _starts(ctx, idx, len(aval.shape)))
