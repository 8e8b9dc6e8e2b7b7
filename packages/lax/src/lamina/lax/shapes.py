"""Shape primitives: broadcast_in_dim, reshape, transpose, and iota.

Params as JAX 0.10.2 names them: ``broadcast_in_dim[shape, broadcast_dimensions,
sharding]`` (printed without ``shape`` and ``sharding``, and without empty
``broadcast_dimensions``), ``reshape[new_sizes, dimensions, sharding]``,
``transpose[permutation]``, ``iota[dtype, shape, dimension, sharding]``.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from lamina.interpreters import Tracer, ad, batching, device_put_value
from lamina.interpreters.mlir import hlo
from lamina.ir import ShapedArray, dtypes
from lamina.lax._common import NUMERIC, aval_of, check_dtype, standard_primitive

__all__ = [
    "broadcast_in_dim",
    "broadcast_in_dim_p",
    "broadcasted_iota",
    "iota",
    "iota_p",
    "reshape",
    "reshape_p",
    "transpose",
    "transpose_p",
]


def _ints(xs) -> tuple[int, ...]:
    return tuple(operator.index(x) for x in xs)


def _is_array(x) -> bool:
    return isinstance(x, Tracer) or hasattr(x, "aval")


# ------------------------------------------------------------------ broadcast_in_dim


def _broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions, sharding):
    dims = broadcast_dimensions
    name = "broadcast_in_dim"
    if any(d < 0 for d in shape):
        raise TypeError(f"{name} shape must have every element be nonnegative, got {shape}.")
    if len(dims) != x.ndim:
        raise TypeError(
            f"{name} broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {dims} for operand ndim {x.ndim}."
        )
    if len(shape) < x.ndim:
        raise TypeError(
            f"{name} target broadcast shape must have equal or higher rank to the operand "
            f"shape; got operand ndim {x.ndim} and target broadcast ndim {len(shape)}."
        )
    if not all(0 <= d < len(shape) for d in dims):
        raise TypeError(
            f"{name} broadcast_dimensions must be a subset of output dimensions, got {dims} "
            f"for operand ndim {x.ndim} and shape {shape}."
        )
    if any(size != 1 and size != shape[d] for size, d in zip(x.shape, dims, strict=True)):
        raise TypeError(
            f"{name} operand dimension sizes must either be 1, or be equal to their "
            "corresponding dimensions in the target broadcast shape; got operand of shape "
            f"{x.shape}, target broadcast shape {shape}, broadcast_dimensions {dims} "
        )
    if len(set(dims)) != len(dims):
        raise TypeError(
            f"{name} broadcast_dimensions must not contain duplicates, got "
            f"broadcast_dimensions {dims}"
        )
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def _broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions, sharding):
    return [ctx.broadcast_in_dim(x, ctx.avals_out[0], broadcast_dimensions)]


def _broadcast_in_dim_pp(params):
    shown = {}
    if params["broadcast_dimensions"]:
        shown["broadcast_dimensions"] = params["broadcast_dimensions"]
    if params.get("sharding") is not None:
        shown["sharding"] = params["sharding"]
    return shown


def _broadcast_in_dim_complete(params, in_avals, out_avals):
    return {
        "shape": tuple(out_avals[0].shape),
        "broadcast_dimensions": tuple(params.get("broadcast_dimensions", ())),
        "sharding": params.get("sharding"),
    }


broadcast_in_dim_p = standard_primitive(
    "broadcast_in_dim", _broadcast_in_dim_abstract_eval, _broadcast_in_dim_lowering
)
broadcast_in_dim_p.def_pp_params(_broadcast_in_dim_pp, _broadcast_in_dim_complete)


def _broadcast_in_dim_batching(axis_data, vals, dims, *, shape, broadcast_dimensions, sharding):
    """The batch axis goes into the result just after the dimension its predecessor
    maps to, so increasing ``broadcast_dimensions`` stay increasing and nothing moves."""
    (x,), (d,) = vals, dims
    bd = broadcast_dimensions
    if list(bd) != sorted(bd):
        x, d = batching.moveaxis(x, d, 0), 0
    q = bd[d - 1] + 1 if d > 0 else 0
    new_dims = (*bd[:d], q, *(b + 1 for b in bd[d:]))
    new_shape = (*shape[:q], axis_data.size, *shape[q:])
    out = broadcast_in_dim_p.bind(
        x, shape=new_shape, broadcast_dimensions=new_dims, sharding=sharding
    )
    return out, q


broadcast_in_dim_p.def_batching(_broadcast_in_dim_batching)


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """Broadcast ``operand`` to ``shape``: its dimension ``i`` becomes dimension
    ``broadcast_dimensions[i]`` of the result (where it has size 1 or that size)."""
    shape, dims = _ints(shape), _ints(broadcast_dimensions)
    if (
        _is_array(operand)
        and out_sharding is None
        and aval_of(operand).shape == shape
        and dims == tuple(range(len(shape)))
    ):
        return operand
    return broadcast_in_dim_p.bind(
        operand, shape=shape, broadcast_dimensions=dims, sharding=out_sharding
    )


ad.deflinear(broadcast_in_dim_p)


def _zeros(aval):
    """Zeros of type ``aval``, as JAX builds them: a scalar zero, broadcast."""
    zero = device_put_value(np.zeros((), aval.dtype), weak_type=aval.weak_type)
    if not aval.shape:
        return zero
    return broadcast_in_dim_p.bind(zero, shape=tuple(aval.shape), broadcast_dimensions=(),
                                   sharding=None)  # fmt: skip


ad.register_zeros_maker(_zeros)  # symbolic zero tangents, made real where needed


# ------------------------------------------------------------------ reshape


def _reshape_abstract_eval(x, *, new_sizes, dimensions, sharding):
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if math.prod(new_sizes) != math.prod(x.shape):
        raise TypeError(
            f"reshape total size must be unchanged, got new_sizes {new_sizes} (of total "
            f"size {math.prod(new_sizes)}) for shape {x.shape} (of total size "
            f"{math.prod(x.shape)})."
        )
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(
            "reshape dimensions must be a permutation of operand dimensions, got "
            f"dimensions {dimensions} for shape {x.shape}."
        )
    return ShapedArray(new_sizes, x.dtype, weak_type=x.weak_type)


def _reshape_lowering(ctx, x, *, new_sizes, dimensions, sharding):
    if dimensions is not None:
        x = hlo.transpose(x, list(dimensions))
    return [hlo.reshape(ctx.ir_type(ctx.avals_out[0]), x)]


reshape_p = standard_primitive("reshape", _reshape_abstract_eval, _reshape_lowering)


def _reshape_batching(axis_data, vals, dims, *, new_sizes, dimensions, sharding):
    """Reshapes read row-major, so the batch axis goes first."""
    x = batching.moveaxis(vals[0], dims[0], 0)
    dimensions = None if dimensions is None else (0, *(i + 1 for i in dimensions))
    new_sizes = (axis_data.size, *new_sizes)
    return reshape_p.bind(x, new_sizes=new_sizes, dimensions=dimensions, sharding=sharding), 0


reshape_p.def_batching(_reshape_batching)


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """``operand`` with shape ``new_sizes``; with ``dimensions``, its axes are first
    permuted into that order."""
    new_sizes = _ints((new_sizes,) if isinstance(new_sizes, int) else new_sizes)
    ndim = aval_of(operand).ndim
    dims = None if dimensions is None else _ints(dimensions)
    if dims == tuple(range(ndim)):
        dims = None
    if (
        _is_array(operand)
        and dims is None
        and out_sharding is None
        and aval_of(operand).shape == new_sizes
    ):
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims, sharding=out_sharding)


ad.deflinear(reshape_p)


# ------------------------------------------------------------------ transpose


def _transpose_abstract_eval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {permutation} for operand shape {x.shape}."
        )
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, weak_type=x.weak_type)


def _transpose_lowering(ctx, x, *, permutation):
    return [hlo.transpose(x, list(permutation))]


transpose_p = standard_primitive("transpose", _transpose_abstract_eval, _transpose_lowering)


def _transpose_batching(axis_data, vals, dims, *, permutation):
    """One transpose still: it also brings the batch axis to the front."""
    d = dims[0]
    perm = (d, *(p + (p >= d) for p in permutation))
    return transpose_p.bind(vals[0], permutation=perm), 0


transpose_p.def_batching(_transpose_batching)


def transpose(operand, permutation):
    """``operand`` with its axes permuted: result axis ``i`` is ``permutation[i]``."""
    permutation = _ints(permutation)
    if _is_array(operand) and permutation == tuple(range(aval_of(operand).ndim)):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


ad.deflinear(transpose_p)


# ------------------------------------------------------------------ iota


def _iota_abstract_eval(*, dtype, shape, dimension, sharding):
    check_dtype("iota", dtype, NUMERIC)
    if any(d < 0 for d in shape):
        raise TypeError(f"iota shape must have every element be nonnegative, got {shape}.")
    if not 0 <= dimension < len(shape):
        raise ValueError(
            "iota dimension must be between 0 and len(shape), got "
            f"dimension={dimension} for shape={shape}"
        )
    return ShapedArray(shape, dtype)


def _iota_lowering(ctx, *, dtype, shape, dimension, sharding):
    return [hlo.iota(ctx.ir_type(ctx.avals_out[0]), dimension)]


iota_p = standard_primitive("iota", _iota_abstract_eval, _iota_lowering)
# iota has no operands, so vmap never batches it: its rule only binds it unbatched.
iota_p.def_batching(lambda axis_data, vals, dims, **params: (iota_p.bind(**params), None))


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """An array of ``shape`` counting 0, 1, ... along ``dimension``."""
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "broadcasted_iota")
    return iota_p.bind(
        dtype=dtype,
        shape=_ints(shape),
        dimension=operator.index(dimension),
        sharding=out_sharding,
    )


def iota(dtype, size):
    """``[0, 1, ..., size - 1]`` as an array of ``dtype``."""
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "iota")
    return iota_p.bind(dtype=dtype, shape=(operator.index(size),), dimension=0, sharding=None)


ad.zero_jvp(iota_p)  # no operands: never differentiated


# vmap moves and broadcasts batch axes with these.
batching.shape_ops["transpose"] = transpose
batching.shape_ops["broadcast_in_dim"] = broadcast_in_dim


# ------------------------------------------------------------------ transposes (reverse mode)


def _broadcast_in_dim_transpose(ct, operand, *, shape, broadcast_dimensions, sharding):
    """Sums the cotangent over the new axes and the stretched size-1 axes."""
    from lamina.lax.reductions import reduce_sum

    in_shape = operand.aval.shape
    bd = broadcast_dimensions
    stretched = [bd[i] for i, d in enumerate(in_shape) if d == 1 and shape[bd[i]] != 1]
    new_axes = [i for i in range(len(shape)) if i not in bd]
    axes = tuple(sorted(new_axes + stretched))
    out = reduce_sum(ct, axes) if axes else ct
    if stretched:
        out = reshape(out, in_shape)
    return [out]


def _reshape_transpose(ct, operand, *, new_sizes, dimensions, sharding):
    shape = operand.aval.shape
    if dimensions is None:
        return [reshape(ct, shape)]
    permuted = tuple(shape[d] for d in dimensions)
    return [transpose(reshape(ct, permuted), tuple(np.argsort(dimensions)))]


def _transpose_transpose(ct, operand, *, permutation):
    return [transpose(ct, tuple(int(i) for i in np.argsort(permutation)))]


broadcast_in_dim_p.def_transpose(_broadcast_in_dim_transpose)
reshape_p.def_transpose(_reshape_transpose)
transpose_p.def_transpose(_transpose_transpose)
