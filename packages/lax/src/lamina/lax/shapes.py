"""Shape primitives: broadcast_in_dim, reshape, transpose, and iota.

Params as JAX 0.10.2 names them: ``broadcast_in_dim[shape, broadcast_dimensions,
sharding]`` (printed without ``shape`` and ``sharding``, and without empty
``broadcast_dimensions``), ``reshape[new_sizes, dimensions, sharding]``,
``transpose[permutation]``, ``iota[dtype, shape, dimension, sharding]``.
"""

from __future__ import annotations

import math
import operator

from lamina.interpreters.mlir import hlo
from lamina.interpreters.tracing import Tracer
from lamina.ir import dtypes
from lamina.ir.core import ShapedArray
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


def transpose(operand, permutation):
    """``operand`` with its axes permuted: result axis ``i`` is ``permutation[i]``."""
    permutation = _ints(permutation)
    if _is_array(operand) and permutation == tuple(range(aval_of(operand).ndim)):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


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
