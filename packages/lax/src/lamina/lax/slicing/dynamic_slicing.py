"""Slicing at run-time positions: ``dynamic_slice[slice_sizes]`` and
``dynamic_update_slice``, whose start indices are operands, and the ``_in_dim`` /
``index_`` helpers built on them. As in XLA, starts are clamped so the slice fits in
the operand; the functions first wrap negative starts (``allow_negative_indices``), as
JAX does. Under vmap with batched start indices each example slices at its own
position, which is a gather (or a scatter) with clamped indices, as in JAX."""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters import Tracer, ad, batching, jit, reverse
from lamina.interpreters.mlir import eval_dynamic_shape_as_tensor, hlo, ir
from lamina.ir import (
    ShapedArray,
    ShardingTypeError,
    canonicalize_dim,
    dtypes,
    is_constant_shape,
    is_symbolic_dim,
    resized_spec,
    spec_of,
    typed_str,
)
from lamina.lax.base.operands import aval_of, check_same_dtypes, standard_primitive
from lamina.lax.base.primitives import add, broadcast_in_dim, lt, select_n, to_dtype
from lamina.lax.base.reshaping import check_slice_sizes, concatenate, expand_dims, squeeze
from lamina.lax.base.reshaping import slice as slice_
from lamina.lax.slicing.gather_scatter import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    gather,
    scatter,
)

__all__ = [
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_slice_p",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "dynamic_update_slice_p",
]


# ==================== dynamic_slice and dynamic_update_slice
# Slicing at run-time positions: ``dynamic_slice[slice_sizes]`` and
# ``dynamic_update_slice``, whose start indices are operands. As in XLA, starts are
# clamped so the slice fits in the operand; the functions first wrap negative starts
# (``allow_negative_indices``), as JAX does.


def check_index_dtypes(name: str, index_avals) -> None:
    """Start indices are integers, all of one dtype (Python ints count as int32)."""
    kinds = list(dict.fromkeys(a.dtype for a in index_avals))
    if len(kinds) > 1 or (kinds and not dtypes.issubdtype(kinds[0], np.integer)):
        got = ", ".join(k.name for k in kinds)
        raise TypeError(f"index arguments to {name} must be integers of the same type, got: {got}")


# ------------------------------------------------------------------ dynamic_slice


def _dynamic_slice_abstract_eval(x, *indices, slice_sizes):
    check_index_dtypes("dynamic_slice", indices)
    check_slice_sizes(x, slice_sizes)
    return ShapedArray(slice_sizes, x.dtype, weak_type=x.weak_type)


def _dynamic_slice_lowering(ctx, x, *indices, slice_sizes):
    if not is_constant_shape((*slice_sizes, *ctx.avals_in[0].shape)):
        return [_symbolic_dynamic_slice(ctx, x, indices, slice_sizes)]
    return [hlo.dynamic_slice(x, list(indices), list(slice_sizes))]


def _symbolic_dynamic_slice(ctx, x, indices, slice_sizes):
    """A dynamic slice of symbolic sizes: its starts clamped into the operand as
    ``dynamic_slice`` does, then a ``real_dynamic_slice``."""
    shape = eval_dynamic_shape_as_tensor(ctx, ctx.avals_in[0].shape)
    sizes = eval_dynamic_shape_as_tensor(ctx, slice_sizes)
    vector = shape.type
    one = ir.RankedTensorType.get([1], vector.element_type)
    scalar = ir.RankedTensorType.get([], vector.element_type)
    starts = hlo.concatenate([hlo.reshape(one, hlo.convert(scalar, i)) for i in indices], 0)
    zeros = eval_dynamic_shape_as_tensor(ctx, [0] * len(indices))
    ones = eval_dynamic_shape_as_tensor(ctx, [1] * len(indices))
    starts = hlo.clamp(zeros, starts, hlo.subtract(shape, sizes))
    limits = hlo.add(starts, sizes)
    return hlo.real_dynamic_slice(ctx.ir_type(ctx.avals_out[0]), x, starts, limits, ones)


dynamic_slice_p = standard_primitive(
    "dynamic_slice", _dynamic_slice_abstract_eval, _dynamic_slice_lowering
)
dynamic_slice_p.def_sharding(
    lambda x, *indices, slice_sizes: resized_spec(x, slice_sizes, "dynamic_slice")
)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    """Linear in the operand; the indices are not differentiated."""
    x, *indices = primals
    t = tangents[0]
    if not ad.is_zero(t):  # the tangent first, as JAX
        t = dynamic_slice_p.bind(t, *indices, slice_sizes=slice_sizes)
    ans = dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)
    if ad.is_zero(t):
        return ans, ad.Zero(ad.tangent_aval(aval_of(ans)))
    return ans, t


def _dynamic_slice_transpose(ct, x, *indices, slice_sizes):
    if any(reverse.is_undefined_primal(i) for i in indices):
        raise ValueError("dynamic_slice is not linear in its start indices")
    zeros = ad.zeros_like_aval(x.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices), *(None for _ in indices)]


def _zero_index(indices):
    """A start index of 0 for an inserted batch axis, of the other indices' dtype."""
    dtype = aval_of(indices[0]).dtype if indices else np.dtype(np.int32)
    return np.zeros((), dtype)


def _dynamic_slice_batching(axis_data, vals, dims, *, slice_sizes):
    x, *indices = vals
    xd, *index_dims = dims
    if any(d is not batching.not_mapped for d in index_dims):
        return batched_index_dynamic_slice(axis_data, vals, dims, slice_sizes), 0
    indices = list(indices)
    indices.insert(xd, _zero_index(indices))
    sizes = (*slice_sizes[:xd], axis_data.size, *slice_sizes[xd:])
    return dynamic_slice_p.bind(x, *indices, slice_sizes=sizes), xd


dynamic_slice_p.def_jvp(_dynamic_slice_jvp)
dynamic_slice_p.def_transpose(_dynamic_slice_transpose)
dynamic_slice_p.def_batching(_dynamic_slice_batching)


# ------------------------------------------------------------------ dynamic_update_slice


def _dynamic_update_slice_abstract_eval(x, update, *indices):
    check_same_dtypes("dynamic_update_slice", (x, update))
    if update.ndim != x.ndim:
        raise TypeError(
            "dynamic_update_slice update must have the same rank as operand, got update "
            f"shape {update.shape} for operand shape {x.shape}."
        )
    if any(u > d for u, d in zip(update.shape, x.shape, strict=True)):
        raise TypeError(
            "dynamic_update_slice update shape must be smaller than operand shape, got "
            f"update shape {update.shape} for operand shape {x.shape}."
        )
    check_index_dtypes("dynamic_update_slice", indices)
    if len(indices) != x.ndim:
        raise TypeError(
            "dynamic_update_slice start_indices must have length equal to the operand's "
            f"number of dimensions, got {len(indices)} for operand shape {x.shape}."
        )
    return ShapedArray(x.shape, x.dtype, weak_type=x.weak_type)


def _dynamic_update_slice_lowering(ctx, x, update, *indices):
    return [hlo.dynamic_update_slice(x, update, list(indices))]


dynamic_update_slice_p = standard_primitive(
    "dynamic_update_slice", _dynamic_update_slice_abstract_eval, _dynamic_update_slice_lowering
)


@dynamic_update_slice_p.def_sharding
def _dynamic_update_slice_sharding(x, update, *indices):
    """The update must be split as the operand is."""
    if spec_of(x) != spec_of(update):
        like = x.type_sharding if x.type_sharding is not None else update.type_sharding
        raise ShardingTypeError(
            "dynamic_update_slice operand sharding must be equal to update sharding, got "
            f"operand sharding {typed_str(x, like)} and update sharding "
            f"{typed_str(update, like)}."
        )
    return spec_of(x)


def _dynamic_update_slice_jvp(primals, tangents, **params):
    """Linear in the operand and the update together."""
    x, update, *indices = primals
    ans = dynamic_update_slice_p.bind(x, update, *indices)
    t_x, t_update = tangents[0], tangents[1]
    if ad.is_zero(t_x) and ad.is_zero(t_update):
        return ans, ad.Zero(ad.tangent_aval(aval_of(ans)))
    t_x, t_update = ad.instantiate_zeros(t_x), ad.instantiate_zeros(t_update)
    return ans, dynamic_update_slice_p.bind(t_x, t_update, *indices)


def _dynamic_update_slice_transpose(ct, x, update, *indices):
    """The operand's cotangent is ``ct`` with the updated window zeroed; the update's
    is that window of ``ct``."""
    if any(reverse.is_undefined_primal(i) for i in indices):
        raise ValueError("dynamic_update_slice is not linear in its start indices")
    update_aval = update.aval if reverse.is_undefined_primal(update) else aval_of(update)
    t_x = t_update = None
    if reverse.is_undefined_primal(x):
        zeros = ad.zeros_like_aval(update_aval)
        t_x = dynamic_update_slice_p.bind(ct, zeros, *indices)
    if reverse.is_undefined_primal(update):
        t_update = dynamic_slice_p.bind(ct, *indices, slice_sizes=tuple(update_aval.shape))
    return [t_x, t_update, *(None for _ in indices)]


def _dynamic_update_slice_batching(axis_data, vals, dims):
    x, update, *indices = vals
    xd, ud, *index_dims = dims
    if any(d is not batching.not_mapped for d in index_dims):
        return batched_index_dynamic_update_slice(axis_data, vals, dims), 0
    x = batching.bdim_at_front(x, xd, axis_data.size)
    update = batching.bdim_at_front(update, ud, axis_data.size)
    out = dynamic_update_slice_p.bind(x, update, _zero_index(indices), *indices)
    return out, 0


dynamic_update_slice_p.def_jvp(_dynamic_update_slice_jvp)
dynamic_update_slice_p.def_transpose(_dynamic_update_slice_transpose)
dynamic_update_slice_p.def_batching(_dynamic_update_slice_batching)


# ------------------------------------------------------------------ the functions


def _is_static_int(i) -> bool:
    """A Python or NumPy integer: wrapped on the host, not in the program."""
    if isinstance(i, np.ndarray):
        return i.ndim == 0 and dtypes.issubdtype(i.dtype, np.integer)
    return isinstance(i, (int, np.integer)) and not isinstance(i, bool)


def _split_index_array(indices):
    """An array of start indices as a list of scalars (a traced one by slicing)."""

    if isinstance(indices, np.ndarray):
        return list(indices)
    if isinstance(indices, Tracer) or hasattr(indices, "aval"):
        n = aval_of(indices).shape[0] if aval_of(indices).ndim == 1 else 0
        return [squeeze(slice_(indices, (k,), (k + 1,), (1,)), (0,)) for k in range(n)]
    return list(indices)


def start_indices_for(name: str, shape, start_indices, allow_negative_indices):
    """The start indices as operands: negative ones wrapped (statically for Python and
    NumPy integers, with ``select_n`` for traced signed ones) where allowed."""

    indices = _split_index_array(start_indices)
    if len(indices) != len(shape):
        raise ValueError(
            "Length of slice indices must match number of operand dimensions "
            f"({len(indices)} vs {shape})"
        )
    if isinstance(allow_negative_indices, bool):
        allow = [allow_negative_indices] * len(indices)
    else:
        allow = [bool(a) for a in allow_negative_indices]
    check_index_dtypes(name, [aval_of(i) for i in indices])
    out = []
    for i, d, wrap in zip(indices, shape, allow, strict=True):
        if _is_static_int(i):
            dtype = aval_of(i).dtype
            value = operator.index(i)
            if value < 0 and not wrap:
                raise ValueError(
                    f"Index {value} is out of bounds for dimension {d} if "
                    "allow_negative_indices=False"
                )
            out.append(np.array(value + d if value < 0 else value, dtype))
            continue
        aval = aval_of(i)
        if not wrap or dtypes.issubdtype(aval.dtype, np.unsignedinteger):
            out.append(i)
            continue
        negative = lt(i, np.zeros((), aval.dtype))
        strong = to_dtype(i, aval.dtype, False) if aval.weak_type else i
        size = to_dtype(d, aval.dtype) if is_symbolic_dim(d) else np.array(d, aval.dtype)
        out.append(select_n(negative, i, add(strong, size)))
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The ``slice_sizes`` window of ``operand`` starting at ``start_indices`` (run-time
    values; each is clamped so the window fits, negative ones first count from the end
    where ``allow_negative_indices``)."""
    shape = aval_of(operand).shape
    indices = start_indices_for("dynamic_slice", shape, start_indices, allow_negative_indices)
    sizes = tuple(canonicalize_dim(s) for s in slice_sizes)
    return dynamic_slice_p.bind(operand, *indices, slice_sizes=sizes)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """``operand`` with the window at ``start_indices`` replaced by ``update`` (starts
    clamped so it fits; negative ones count from the end where allowed)."""
    shape = aval_of(operand).shape
    indices = start_indices_for(
        "dynamic_update_slice", shape, start_indices, allow_negative_indices
    )
    return dynamic_update_slice_p.bind(operand, update, *indices)


# ==================== batched start indices: gather and scatter
# vmap of dynamic_slice and dynamic_update_slice whose start indices are batched: each
# example slices at its own position, which is a gather (or a scatter) with clamped
# indices, as in JAX.


def _index_matrix(axis_data, indices, index_dims):
    """The start indices as one ``(batch, n)`` array."""

    size = axis_data.size
    columns = [
        broadcast_in_dim(batching.bdim_at_front(i, d, size), (size, 1), (0,))
        if d is not batching.not_mapped
        else broadcast_in_dim(i, (size, 1), ())
        for i, d in zip(indices, index_dims, strict=True)
    ]
    return concatenate(columns, 1)


def batched_index_dynamic_slice(axis_data, vals, dims, slice_sizes):
    x, *indices = vals
    xd, *index_dims = dims
    index_matrix = _index_matrix(axis_data, indices, index_dims)
    n = len(indices)
    if xd is batching.not_mapped:
        dnums = GatherDimensionNumbers(
            offset_dims=tuple(range(1, n + 1)),
            collapsed_slice_dims=(),
            start_index_map=tuple(range(n)),
        )
        sizes = slice_sizes
    else:
        x = batching.moveaxis(x, xd, 0)
        dnums = GatherDimensionNumbers(
            offset_dims=tuple(range(1, n + 1)),
            collapsed_slice_dims=(),
            start_index_map=tuple(range(1, n + 1)),
            operand_batching_dims=(0,),
            start_indices_batching_dims=(0,),
        )
        sizes = (1, *slice_sizes)
    return gather(
        x,
        index_matrix,
        dnums,
        sizes,
        unique_indices=False,
        indices_are_sorted=False,
        mode=GatherScatterMode.CLIP,
    )


def batched_index_dynamic_update_slice(axis_data, vals, dims):
    x, update, *indices = vals
    xd, ud, *index_dims = dims
    size = axis_data.size
    index_matrix = _index_matrix(axis_data, indices, index_dims)
    n = len(indices)
    x = batching.bdim_at_front(x, xd, size)
    update = batching.bdim_at_front(update, ud, size)
    dnums = ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, n + 1)),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=tuple(range(1, n + 1)),
        operand_batching_dims=(0,),
        scatter_indices_batching_dims=(0,),
    )
    return scatter(
        x,
        index_matrix,
        update,
        dnums,
        indices_are_sorted=True,
        unique_indices=True,
        mode=GatherScatterMode.CLIP,
    )


# ==================== helpers along one axis


def _ints(xs) -> tuple[int, ...]:
    return tuple(operator.index(x) for x in xs)


def _canonical_axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    return axis + ndim if axis < 0 else axis


# ------------------------------------------------------------------ dynamic, along one axis


def _starts_along(operand, start_index, axis):
    """Start indices of zero but at ``axis`` (the zeros of ``start_index``'s dtype)."""
    ndim = aval_of(operand).ndim
    zero = 0 if isinstance(start_index, int) else np.zeros((), aval_of(start_index).dtype)
    starts = [zero] * ndim
    starts[axis] = start_index
    return starts


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):  # fmt: skip
    """The ``slice_size`` elements of ``operand`` along ``axis`` from the run-time
    ``start_index`` (clamped so they fit)."""
    shape = aval_of(operand).shape
    axis = _canonical_axis(axis, len(shape))
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    starts = _starts_along(operand, start_index, axis)
    allow = [True] * len(shape)
    allow[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):  # fmt: skip
    """``operand`` with ``update`` written along ``axis`` from the run-time
    ``start_index``."""
    axis = _canonical_axis(axis, aval_of(operand).ndim)
    starts = _starts_along(operand, start_index, axis)
    allow = [True] * len(starts)
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def _dynamic_index_in_dim(operand, index, axis, keepdims, allow_negative_indices):
    axis = _canonical_axis(axis, aval_of(operand).ndim)
    out = dynamic_slice_in_dim(
        operand, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    return out if keepdims else squeeze(out, (axis,))


def _dynamic_update_index_in_dim(operand, update, index, axis, allow_negative_indices):
    axis = _canonical_axis(axis, aval_of(operand).ndim)
    if aval_of(update).ndim != aval_of(operand).ndim:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(
        operand, update, index, axis, allow_negative_indices=allow_negative_indices
    )


def _named_jit(fun, name, static_argnames):
    """``fun`` staged as a call named ``name`` (JAX jits these two helpers)."""
    fun.__name__ = fun.__qualname__ = name
    return jit(fun, static_argnames=static_argnames)


_jitted_index = _named_jit(
    _dynamic_index_in_dim,
    "dynamic_index_in_dim",
    ("axis", "keepdims", "allow_negative_indices"),
)
_jitted_update_index = _named_jit(
    _dynamic_update_index_in_dim,
    "dynamic_update_index_in_dim",
    ("axis", "allow_negative_indices"),
)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):  # fmt: skip
    """The slice of ``operand`` at the run-time ``index`` along ``axis`` (clamped into
    range), with that axis kept at size 1 or removed."""
    return _jitted_index(
        operand,
        index,
        axis=operator.index(axis),
        keepdims=bool(keepdims),
        allow_negative_indices=_hashable(allow_negative_indices),
    )


def dynamic_update_index_in_dim(operand, update, index, axis, *,
                                allow_negative_indices=True):  # fmt: skip
    """``operand`` with the slice at the run-time ``index`` along ``axis`` replaced by
    ``update`` (which may lack that axis)."""
    return _jitted_update_index(
        operand,
        update,
        index,
        axis=operator.index(axis),
        allow_negative_indices=_hashable(allow_negative_indices),
    )


def _hashable(allow):
    return allow if isinstance(allow, bool) else tuple(bool(a) for a in allow)
