"""``stack[axis]``, ``unstack[axis]`` and ``tile[reps]``: primitives of JAX 0.10.2 that
join, separate or repeat whole arrays."""

from __future__ import annotations

import operator

from lamina.interpreters import ad, batching, reverse
from lamina.interpreters.mlir import hlo
from lamina.ir import ShapedArray, ShardingTypeError, padded_sharding, spec_of
from lamina.lax.base.operands import aval_of, check_same_dtypes, standard_primitive
from lamina.lax.base.primitives import reduce_sum, reshape

__all__ = ["stack", "stack_p", "tile", "tile_p", "unstack", "unstack_p"]


def _canonical_axis(axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


# ------------------------------------------------------------------ stack


def _stack_abstract_eval(*xs, axis):
    check_same_dtypes("stack", xs)
    if len({x.shape for x in xs}) != 1:
        shapes = ", ".join(str(x.shape) for x in xs)
        raise ValueError(f"All input arrays must have the same shape. Got {shapes}.")
    shape = list(xs[0].shape)
    shape.insert(axis, len(xs))
    return ShapedArray(tuple(shape), xs[0].dtype, weak_type=all(x.weak_type for x in xs))


def _stack_lowering(ctx, *xs, axis):
    aval_out = ctx.avals_out[0]
    piece = aval_out.update(shape=(*aval_out.shape[:axis], 1, *aval_out.shape[axis + 1 :]))
    return [hlo.concatenate([ctx.reshape(x, piece) for x in xs], axis)]


stack_p = standard_primitive("stack", _stack_abstract_eval, _stack_lowering)


@stack_p.def_sharding
def _stack_sharding(*xs, axis):
    """The typed operands must be split alike; the new axis is not split."""
    specs = [spec_of(x) for x in xs if x.type_sharding is not None]
    if any(sp != specs[0] for sp in specs):
        shown = ", ".join(str(padded_sharding(x)) if x.type_sharding else "None" for x in xs)
        raise ShardingTypeError(
            f"All operands should have the same sharding. Got shardings {shown}"
        )
    return (*specs[0][:axis], None, *specs[0][axis:])


ad.deflinear(stack_p)


def _stack_transpose(ct, *xs, axis):
    if type(ct) is ad.Zero:
        return [None for _ in xs]
    pieces = unstack_p.bind(ct, axis=axis)
    return [p if reverse.is_undefined_primal(x) else None for p, x in zip(pieces, xs, strict=True)]


def _stack_batching(axis_data, vals, dims, *, axis):
    moved = [batching.bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims, strict=True)]
    return stack_p.bind(*moved, axis=axis + 1), 0


stack_p.def_transpose(_stack_transpose)
stack_p.def_batching(_stack_batching)


def stack(operands, axis=0):
    """The ``operands`` (of one shape) stacked along a new axis ``axis``."""
    operands = list(operands)
    if not operands:
        raise IndexError("stack requires at least one operand")
    axis = _canonical_axis(axis, aval_of(operands[0]).ndim + 1)
    return stack_p.bind(*operands, axis=axis)


# ------------------------------------------------------------------ unstack


def _unstack_abstract_eval(x, *, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    shape = x.shape[:axis] + x.shape[axis + 1 :]
    return [ShapedArray(shape, x.dtype, weak_type=x.weak_type)] * x.shape[axis]


def _unstack_lowering(ctx, x, *, axis):
    shape = ctx.avals_in[0].shape
    out_type = ctx.ir_type(ctx.avals_out[0]) if ctx.avals_out else None
    outs = []
    for k in range(shape[axis]):
        begin, limit = [0] * len(shape), list(shape)
        begin[axis], limit[axis] = k, k + 1
        outs.append(hlo.reshape(out_type, hlo.slice(x, begin, limit, [1] * len(shape))))
    return outs


unstack_p = standard_primitive("unstack", _unstack_abstract_eval, _unstack_lowering)
unstack_p.multiple_results = True


@unstack_p.def_sharding
def _unstack_sharding(x, *, axis):
    spec = spec_of(x)
    if spec[axis] is not None:
        raise ShardingTypeError(
            f"unstack operand cannot be sharded on the unstacking axis {axis}. Got operand "
            f"type={x.str_short(True)}"
        )
    return [spec[:axis] + spec[axis + 1 :]] * x.shape[axis]


ad.deflinear(unstack_p)


def _unstack_transpose(cts, x, *, axis):
    return [stack_p.bind(*map(ad.instantiate_zeros, cts), axis=axis)]


def _unstack_batching(axis_data, vals, dims, *, axis):
    (x,), (d,) = vals, dims
    outs = unstack_p.bind(x, axis=axis + (axis >= d))
    return outs, [d - (axis < d)] * len(outs)


unstack_p.def_transpose(_unstack_transpose)
unstack_p.def_batching(_unstack_batching)


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple of arrays without that axis."""
    axis = _canonical_axis(axis, aval_of(x).ndim)
    return tuple(unstack_p.bind(x, axis=axis))


# ------------------------------------------------------------------ tile


def _tile_abstract_eval(x, *, reps):
    if len(reps) != x.ndim:
        raise TypeError(
            f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} and "
            f"x.ndim={x.ndim}."
        )
    if any(r < 0 for r in reps):
        raise TypeError(f"tile reps must be nonnegative, got reps={reps}.")
    shape = tuple(r * d for r, d in zip(reps, x.shape, strict=True))
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def _interleaved(reps, shape):
    """(reps[0], shape[0], reps[1], shape[1], ...): each repetition axis before its axis."""
    return tuple(n for pair in zip(reps, shape, strict=True) for n in pair)


def _tile_lowering(ctx, x, *, reps):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    spread = aval_in.update(shape=_interleaved(reps, aval_in.shape))
    dims = [2 * i + 1 for i in range(aval_in.ndim)]
    return [ctx.reshape(ctx.broadcast_in_dim(x, spread, dims), aval_out)]


tile_p = standard_primitive("tile", _tile_abstract_eval, _tile_lowering)


@tile_p.def_sharding
def _tile_sharding(x, *, reps):
    """Only dimensions tiled once may stay split."""
    for i, (r, e) in enumerate(zip(reps, spec_of(x), strict=True)):
        if r != 1 and e is not None:
            raise ShardingTypeError(
                f"Operand cannot be sharded on dimension {i} when the tiling is non-trivial. "
                f"Got input type: {x} with reps: {reps}"
            )
    return spec_of(x)


ad.deflinear(tile_p)


def _tile_transpose(ct, x, *, reps):
    """The cotangent summed over the repetitions."""

    shape = x.aval.shape
    spread = reshape(ct, _interleaved(reps, shape))
    return [reduce_sum(spread, tuple(2 * i for i in range(len(shape))))]


def _tile_batching(axis_data, vals, dims, *, reps):
    (x,), (d,) = vals, dims
    return tile_p.bind(x, reps=(*reps[:d], 1, *reps[d:])), d


tile_p.def_transpose(_tile_transpose)
tile_p.def_batching(_tile_batching)


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along each axis ``i``."""
    reps = tuple(operator.index(r) for r in reps)
    return tile_p.bind(operand, reps=reps)
