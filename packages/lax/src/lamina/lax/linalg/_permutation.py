"""StableHLO that turns LAPACK row-swap pivots into a permutation: a while loop over
the pivots, swapping entries ``i`` and ``pivots[i]`` of ``0, 1, ..., m-1`` (each swap
done with one-hot selects, so every batch member runs in the same loop)."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ShapedArray
from lamina.lax.linalg._lapack import constant

_I32 = np.dtype(np.int32)


def _compare(a, b, direction):
    return hlo.compare(
        a,
        b,
        hlo.ComparisonDirectionAttr.get(direction),
        compare_type=hlo.ComparisonTypeAttr.get("SIGNED"),
    )


def _sum_last(x, shape):
    """Sum of an i32 array over its last axis."""
    out_aval = ShapedArray(tuple(shape[:-1]), _I32)
    op = hlo.ReduceOp([mb.ir_type(out_aval)], [x], [constant(0, _I32)], [len(shape) - 1])
    scalar = mb.ir_type(ShapedArray((), _I32))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.add(*block.arguments)])
    return op.result


def pivots_to_permutation(pivots, batch_shape, num_pivots: int, size: int):
    """``i32[*batch, size]``: where row ``j`` of the original ends up read as which row."""
    batch_shape = tuple(batch_shape)
    nb = len(batch_shape)
    perm_aval = ShapedArray((*batch_shape, size), _I32)
    piv_aval = ShapedArray((*batch_shape, num_pivots), _I32)
    scalar_aval = ShapedArray((), _I32)
    start = hlo.iota(mb.ir_type(perm_aval), nb)
    types = [mb.ir_type(scalar_aval), mb.ir_type(perm_aval), mb.ir_type(piv_aval)]
    loop = hlo.WhileOp(types, [constant(0, _I32), start, pivots])
    cond = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(cond):
        i = cond.arguments[0]
        hlo.return_([_compare(i, constant(num_pivots, _I32), "LT")])
    body = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(body):
        i, perm, piv = body.arguments

        def onehot(aval, index, index_dims):
            positions = hlo.iota(mb.ir_type(aval), nb)
            return _compare(positions, mb.broadcast_in_dim(index, aval, index_dims), "EQ")

        zeros_p = constant(0, _I32, piv_aval.shape)
        zeros_m = constant(0, _I32, perm_aval.shape)
        at_i = onehot(piv_aval, i, [])
        p_i = _sum_last(hlo.select(at_i, piv, zeros_p), piv_aval.shape)
        is_i = onehot(perm_aval, i, [])
        is_p = onehot(perm_aval, p_i, list(range(nb)))
        perm_i = _sum_last(hlo.select(is_i, perm, zeros_m), perm_aval.shape)
        perm_p = _sum_last(hlo.select(is_p, perm, zeros_m), perm_aval.shape)
        batch_dims = list(range(nb))
        swapped = hlo.select(
            is_i,
            mb.broadcast_in_dim(perm_p, perm_aval, batch_dims),
            hlo.select(is_p, mb.broadcast_in_dim(perm_i, perm_aval, batch_dims), perm),
        )
        hlo.return_([hlo.add(i, constant(1, _I32)), swapped, piv])
    return loop.results[1]
