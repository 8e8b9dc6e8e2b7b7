"""Sorting and selection: ``sort`` (several operands, ``num_keys``, ``is_stable``),
``sort_key_val``, ``top_k``, ``approx_max_k`` / ``approx_min_k``.

Keys compare as JAX compares them: floats in a total order after -0.0 becomes 0.0 and
every NaN the canonical NaN (so NaNs sort last), complex numbers by real then imaginary
part, several keys lexicographically. Derivatives follow the permutation: the sort
also sorts an iota, and tangents are taken along it (a gather, linear in the tangent).
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, batching
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ShapedArray, ShardingTypeError, dtypes, padded_sharding, spec_of
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import broadcast_in_dim, broadcasted_iota, reshape
from lamina.lax.slicing.gather_scatter import GatherDimensionNumbers, gather

__all__ = [
    "approx_max_k",
    "approx_min_k",
    "approx_top_k_p",
    "sort",
    "sort_key_val",
    "sort_p",
    "top_k",
    "top_k_p",
]


# ---------------------------------------------------------------- the comparator


def _scalar(dtype) -> ShapedArray:
    return ShapedArray((), np.dtype(dtype))


def _canonical_float(ctx, x, dtype):
    """-0.0 as 0.0 and any NaN as the canonical NaN, so TOTALORDER matches JAX."""
    scalar = _scalar(dtype)
    zero = ctx.constant(np.zeros((), dtype), scalar)
    is_zero = hlo.compare(x, zero, hlo.ComparisonDirectionAttr.get("EQ"),
                          compare_type=hlo.ComparisonTypeAttr.get("FLOAT"))  # fmt: skip
    x = hlo.select(is_zero, zero, x)
    is_nan = hlo.compare(x, x, hlo.ComparisonDirectionAttr.get("NE"),
                         compare_type=hlo.ComparisonTypeAttr.get("FLOAT"))  # fmt: skip
    return hlo.select(is_nan, ctx.constant(np.full((), np.nan, dtype), scalar), x)


def _key_parts(ctx, x, dtype, canonical: bool = True):
    """The values a key compares by, most significant first, with their compare type.
    ``sort`` first makes every NaN the positive canonical NaN and -0.0 zero (JAX's sort
    order); ``top_k`` compares raw floats in IEEE total order (-NaN < -inf < ... < NaN)."""
    keep = _canonical_float if canonical else (lambda ctx, v, dtype: v)
    if dtypes.issubdtype(dtype, np.complexfloating):
        part = np.finfo(dtype).dtype
        return [(keep(ctx, p, part), "TOTALORDER") for p in (hlo.real(x), hlo.imag(x))]
    if dtypes.issubdtype(dtype, np.floating):
        return [(keep(ctx, x, dtype), "TOTALORDER")]
    if dtypes.issubdtype(dtype, np.signedinteger):
        return [(x, "SIGNED")]
    return [(x, "UNSIGNED")]


def _compare(a, b, direction: str, kind: str):
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get(kind))  # fmt: skip


def _lexicographic_less(ctx, pairs, key_dtypes, direction: str = "LT", canonical: bool = True):
    """``a < b`` (or ``a > b``) over keys compared in order: the first differing key
    decides."""
    terms = []
    for (a, b), dtype in zip(pairs, key_dtypes, strict=True):
        parts_a, parts_b = (
            _key_parts(ctx, a, dtype, canonical),
            _key_parts(ctx, b, dtype, canonical),
        )
        for (pa, kind), (pb, _) in zip(parts_a, parts_b, strict=True):
            terms.append((pa, pb, kind))
    result = None
    for pa, pb, kind in reversed(terms):
        less = _compare(pa, pb, direction, kind)
        result = (
            less
            if result is None
            else hlo.or_(less, hlo.and_(_compare(pa, pb, "EQ", kind), result))
        )
    return result


def _emit_sort(ctx, operands, dimension, is_stable, num_keys, direction="LT", canonical=True):
    op = hlo.SortOp([v.type for v in operands], list(operands),
                    dimension=dimension, is_stable=is_stable)  # fmt: skip
    key_dtypes = [a.dtype for a in ctx.avals_in[:num_keys]]
    arg_types = []
    for aval in ctx.avals_in:
        scalar = ctx.ir_type(_scalar(aval.dtype))
        arg_types += [scalar, scalar]
    block = op.comparator.blocks.append(*arg_types)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        pairs = [(args[2 * i], args[2 * i + 1]) for i in range(num_keys)]
        hlo.return_([_lexicographic_less(ctx, pairs, key_dtypes, direction, canonical)])
    return list(op.results)


# ---------------------------------------------------------------- sort


def _sort_abstract_eval(*avals, dimension, is_stable, num_keys):
    shapes = {a.shape for a in avals}
    if len(shapes) != 1:
        raise TypeError(
            "sort requires all operands to have the same shape, got "
            + ", ".join(str(a.shape) for a in avals)
        )
    ndim = len(avals[0].shape)
    if not 0 <= dimension < max(ndim, 1):
        raise ValueError(f"sort dimension {dimension} is out of bounds for rank {ndim}")
    if not 1 <= num_keys <= len(avals):
        raise ValueError(f"num_keys={num_keys} must be between 1 and the number of operands")
    return list(avals)


def _sort_lowering(ctx, *operands, dimension, is_stable, num_keys):
    return _emit_sort(ctx, operands, dimension, is_stable, num_keys)


sort_p = standard_primitive("sort", _sort_abstract_eval, _sort_lowering)
sort_p.multiple_results = True


@sort_p.def_sharding
def _sort_sharding(*avals, dimension, **_):
    """Each operand keeps its splits; none may split the sorted dimension."""
    for a in avals:
        if a.type_sharding is not None and spec_of(a)[dimension] is not None:
            raise ShardingTypeError(
                "Arguments to sort must be unsharded over the sorting dimension. Got arg "
                f"sharding={padded_sharding(a)} and sorting dimension={dimension}"
            )
    return [spec_of(a) for a in avals]


def take_along(x, indices, dimension: int):
    """``x[..., indices, ...]`` along ``dimension`` element by element, as NumPy's
    ``take_along_axis`` (``indices`` matches ``x`` in the other dimensions): a gather
    with the other dimensions as batching dimensions."""

    index_shape = aval_of(indices).shape
    starts = reshape(indices, (*index_shape, 1))
    return _gather_along(x, starts, dimension)


def _gather_along(x, starts, dimension: int):
    ndim = len(aval_of(x).shape)
    others = tuple(d for d in range(ndim) if d != dimension)
    numbers = GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(dimension,),
        start_index_map=(dimension,),
        operand_batching_dims=others,
        start_indices_batching_dims=others,
    )
    return gather(x, starts, numbers, (1,) * ndim, mode="promise_in_bounds")


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    shape = aval_of(primals[0]).shape
    # JAX's index dtype: uint32 unless a dimension needs more
    index_dtype = np.uint32 if all(d <= np.iinfo(np.uint32).max for d in shape) else np.uint64
    iota = broadcasted_iota(index_dtype, shape, dimension)
    outs = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                       num_keys=num_keys)  # fmt: skip
    starts = broadcast_in_dim(outs[-1], (*shape, 1), tuple(range(len(shape))))
    tangents_out = [
        t if type(t) is ad.Zero else _gather_along(t, starts, dimension) for t in tangents
    ]
    return outs[:-1], tangents_out


def _sort_batching(axis_data, vals, dims, *, dimension, is_stable, num_keys):
    size = axis_data.size
    vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims, strict=True)]
    outs = sort_p.bind(*vals, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


sort_p.def_jvp(_sort_jvp)
sort_p.def_batching(_sort_batching)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts ``operand`` (an array, or a sequence of same-shaped arrays sorted together
    by their first ``num_keys``) along ``dimension``."""
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    if single and num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    if not operands:
        raise ValueError("sort requires at least one operand")
    ndim = len(aval_of(operands[0]).shape)
    dim = dimension + ndim if dimension < 0 else dimension
    if not 0 <= dim < max(ndim, 1):
        raise ValueError(f"axis {dimension} is out of bounds for array of dimension {ndim}")
    outs = sort_p.bind(*operands, dimension=dim, is_stable=bool(is_stable),
                       num_keys=int(num_keys))  # fmt: skip
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """``(sorted keys, values in the keys' order)``."""
    return sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)


# ---------------------------------------------------------------- top_k


def _top_k_abstract_eval(x, *, k, axis):
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if not x.shape:
        raise TypeError("top_k operand must have >= 1 dimension, got []")
    if x.shape[axis] < k:
        raise ValueError(
            "k argument to top_k must be no larger than size along axis; got "
            f"k={k} with shape={list(x.shape)} and axis={axis}"
        )
    shape = list(x.shape)
    shape[axis] = k
    values = ShapedArray(tuple(shape), x.dtype, weak_type=x.weak_type)
    return [values, ShapedArray(tuple(shape), np.dtype(np.int32))]


def _top_k_lowering(ctx, x, *, k, axis):
    return _select_k(ctx, x, k, axis, largest=True)


def _select_k(ctx, x, k, axis, largest: bool):
    """The ``k`` largest (or smallest) along ``axis`` with their indices: a stable sort
    of (values, iota) by value, then the first ``k``."""
    aval = ctx.avals_in[0]
    index_aval = ShapedArray(aval.shape, np.dtype(np.int32))
    iota = hlo.iota(ctx.ir_type(index_aval), axis)
    sort_ctx = ctx.replace(avals_in=[aval, index_aval])
    values, indices = _emit_sort(
        sort_ctx, [x, iota], axis, True, 1, "GT" if largest else "LT", canonical=False
    )
    limits = list(aval.shape)
    limits[axis] = k
    starts, strides = [0] * len(limits), [1] * len(limits)
    return [
        hlo.slice(values, starts, limits, strides),
        hlo.slice(indices, starts, limits, strides),
    ]


top_k_p = standard_primitive("top_k", _top_k_abstract_eval, _top_k_lowering)
top_k_p.multiple_results = True


@top_k_p.def_sharding
def _top_k_sharding(x, *, k, axis):
    """Values and indices keep the operand's splits, which may not split ``axis``."""
    if spec_of(x)[axis] is not None:
        raise ShardingTypeError(
            "The input should be unsharded over the axis along which to compute the top_k "
            f"values. Got input type={x} and axis={axis}"
        )
    return [spec_of(x), spec_of(x)]


def _top_k_jvp(primals, tangents, *, k, axis):
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, k=k, axis=axis)
    if type(t) is ad.Zero:
        return [values, indices], [
            ad.Zero.from_primal_value(values),
            ad.Zero.from_primal_value(indices),
        ]
    return [values, indices], [take_along(t, indices, axis), ad.Zero.from_primal_value(indices)]


def _top_k_batching(axis_data, vals, dims, *, k, axis):
    (x,), (d,) = vals, dims
    x = batching.bdim_at_front(x, d, axis_data.size)
    outs = top_k_p.bind(x, k=k, axis=axis + 1)
    return outs, [0, 0]


top_k_p.def_jvp(_top_k_jvp)
top_k_p.def_batching(_top_k_batching)


def top_k(operand, k, *, axis=-1):
    """The ``k`` largest entries along ``axis`` (in descending order, earlier index
    first among ties) and their indices."""
    ndim = len(aval_of(operand).shape)
    if ndim == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got []")
    axis = axis + ndim if axis < 0 else axis
    if not 0 <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return tuple(top_k_p.bind(operand, k=int(k), axis=axis))


# ---------------------------------------------------------------- approx_max_k / approx_min_k


def _approx_top_k_abstract_eval(x, *, k, reduction_dimension, recall_target, is_max_k,
                                reduction_input_size_override, aggregate_to_topk):  # fmt: skip
    if not x.shape:
        raise ValueError("approx_top_k operand must have >= 1 dimension")
    dim = reduction_dimension % len(x.shape)
    if not 0 <= k <= x.shape[dim]:
        raise ValueError(f"k must be in [0, {x.shape[dim]}] for the reduction dimension, got k={k}")
    shape = list(x.shape)
    shape[dim] = k
    return [ShapedArray(tuple(shape), x.dtype), ShapedArray(tuple(shape), np.dtype(np.int32))]


def _approx_top_k_lowering(ctx, x, *, k, reduction_dimension, is_max_k, **_):
    # On CPU the approximate search is exact (XLA's fallback is an exact sort).
    dim = reduction_dimension % len(ctx.avals_in[0].shape)
    return _select_k(ctx, x, k, dim, largest=is_max_k)


approx_top_k_p = standard_primitive("approx_top_k", _approx_top_k_abstract_eval,
                                    _approx_top_k_lowering)  # fmt: skip
approx_top_k_p.multiple_results = True
approx_top_k_p.def_sharding(lambda x, **_: [spec_of(x), spec_of(x)])  # the operand's splits


def _approx_top_k_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    values, indices = approx_top_k_p.bind(x, **params)
    zero_index = ad.Zero.from_primal_value(indices)
    if type(t) is ad.Zero:
        return [values, indices], [ad.Zero.from_primal_value(values), zero_index]
    dim = params["reduction_dimension"] % len(aval_of(x).shape)
    return [values, indices], [take_along(t, indices, dim), zero_index]


def _approx_top_k_batching(axis_data, vals, dims, *, reduction_dimension, **params):
    (x,), (d,) = vals, dims
    ndim = len(aval_of(x).shape) - 1
    x = batching.bdim_at_front(x, d, axis_data.size)
    dim = reduction_dimension % ndim + 1
    return approx_top_k_p.bind(x, reduction_dimension=dim, **params), [0, 0]


approx_top_k_p.def_jvp(_approx_top_k_jvp)
approx_top_k_p.def_batching(_approx_top_k_batching)


def _approx_k(operand, k, reduction_dimension, recall_target, reduction_input_size_override,
              aggregate_to_topk, is_max_k):  # fmt: skip
    if not 0 < recall_target <= 1:
        raise ValueError(f"recall_target must be in (0, 1], got {recall_target}")
    return tuple(
        approx_top_k_p.bind(
            operand,
            k=int(k),
            reduction_dimension=int(reduction_dimension),
            recall_target=float(recall_target),
            is_max_k=is_max_k,
            reduction_input_size_override=int(reduction_input_size_override),
            aggregate_to_topk=bool(aggregate_to_topk),
        )
    )


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):  # fmt: skip
    """The ``k`` largest values along ``reduction_dimension`` and their indices, with
    recall at least ``recall_target`` (exact on CPU)."""
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, True)  # fmt: skip


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):  # fmt: skip
    """The ``k`` smallest values along ``reduction_dimension`` and their indices."""
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, False)  # fmt: skip
