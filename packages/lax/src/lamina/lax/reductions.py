"""Reductions: ``reduce_sum[axes, out_sharding]`` and ``reduce_max[axes]`` (the params
JAX 0.10.2 gives them)."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, batching
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import dtypes
from lamina.ir.core import ShapedArray
from lamina.lax._common import ANY, NUMBER, aval_of, check_dtype, standard_primitive

__all__ = ["reduce_max", "reduce_max_p", "reduce_sum", "reduce_sum_p"]


def _reduced_aval(name, x, axes, accepted) -> ShapedArray:
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    if not all(0 <= a < x.ndim for a in axes):
        raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for {x}.")
    if accepted is not ANY:
        check_dtype(name, x.dtype, (accepted,))
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def _max_identity(dtype) -> np.ndarray:
    """The smallest value of ``dtype``: where a maximum starts."""
    if dtype == dtypes.bool_:
        return np.array(False)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(-np.inf, dtype)
    return np.array(dtypes.iinfo(dtype).min, dtype)


def _reduce(ctx, x, axes, init_value, combine):
    aval_out = ctx.avals_out[0]
    scalar = ShapedArray((), aval_out.dtype)
    init = ctx.constant(init_value, scalar)
    op = hlo.ReduceOp([ctx.ir_type(aval_out)], [x], [init], list(axes))
    scalar_type = ctx.ir_type(scalar)
    block = op.regions[0].blocks.append(scalar_type, scalar_type)
    with ir.InsertionPoint(block):
        hlo.return_([combine(*block.arguments)])
    return list(op.results)


def _sum_abstract_eval(x, *, axes, out_sharding):
    return _reduced_aval("reduce_sum", x, axes, NUMBER)


def _sum_lowering(ctx, x, *, axes, out_sharding):
    zero = np.zeros((), ctx.avals_in[0].dtype)
    return _reduce(ctx, x, axes, zero, hlo.add)


def _max_abstract_eval(x, *, axes):
    return _reduced_aval("reduce_max", x, axes, ANY)


def _max_lowering(ctx, x, *, axes):
    return _reduce(ctx, x, axes, _max_identity(ctx.avals_in[0].dtype), hlo.maximum)


reduce_sum_p = standard_primitive("reduce_sum", _sum_abstract_eval, _sum_lowering)
reduce_max_p = standard_primitive("reduce_max", _max_abstract_eval, _max_lowering)
batching.defreducer(reduce_sum_p)  # vmap: the axes shift past the batch dim
batching.defreducer(reduce_max_p)


def _axes(axes) -> tuple[int, ...]:
    import operator

    return tuple(operator.index(a) for a in axes)


def reduce_sum(operand, axes, *, out_sharding=None):
    """The sum of ``operand`` over ``axes``."""
    return reduce_sum_p.bind(operand, axes=_axes(axes), out_sharding=out_sharding)


def reduce_max(operand, axes):
    """The maximum of ``operand`` over ``axes`` (NaN propagates)."""
    return reduce_max_p.bind(operand, axes=_axes(axes))


ad.deflinear(reduce_sum_p)


def _reduce_max_jvp(primals, tangents, *, axes):
    """The tangent at the maximum; where several elements tie for it, their mean."""
    from lamina.lax.conversion import convert_element_type
    from lamina.lax.elementwise import div, eq, mul
    from lamina.lax.shapes import broadcast_in_dim

    (x,), (t,) = primals, tangents
    ans = reduce_max_p.bind(x, axes=axes)
    shape = aval_of(x).shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    at_max = convert_element_type(eq(x, broadcast_in_dim(ans, shape, kept)), aval_of(x).dtype)
    counts = reduce_sum_p.bind(at_max, axes=axes, out_sharding=None)
    picked = reduce_sum_p.bind(mul(t, at_max), axes=axes, out_sharding=None)
    return ans, div(picked, counts)


reduce_max_p.def_jvp(_reduce_max_jvp)


def _reduce_sum_transpose(ct, operand, *, axes, out_sharding):
    """The cotangent broadcasts back over the summed axes."""
    from lamina.lax.shapes import broadcast_in_dim

    shape = operand.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [broadcast_in_dim(ct, shape, kept)]


reduce_sum_p.def_transpose(_reduce_sum_transpose)
