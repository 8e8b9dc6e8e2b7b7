"""``gather[dimension_numbers, slice_sizes, indices_are_sorted, unique_indices, mode,
fill_value]`` with its dimension numbers and out-of-bounds modes, as JAX 0.10.2 has
them. The scatter family, its transpose, lives in :mod:`._scatter`."""

from __future__ import annotations

import enum
import operator
from typing import NamedTuple

import numpy as np

from lamina.interpreters import ad, batching, reverse
from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ShapedArray, dtypes
from lamina.lax.base.operands import standard_primitive
from lamina.lax.base.primitives import broadcast_in_dim

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "gather",
    "gather_p",
]


class GatherDimensionNumbers(NamedTuple):
    """How a gather maps index vectors and slices onto the operand and the output.

    ``offset_dims``: output dimensions holding the slice dimensions that remain;
    ``collapsed_slice_dims``: operand dimensions whose slices (of size 1) are dropped;
    ``start_index_map``: the operand dimension each index-vector entry starts;
    ``operand_batching_dims`` / ``start_indices_batching_dims``: dimensions of operand
    and indices that are batched together (slice size 1, dropped from the slice)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What gather and scatter do with indices out of bounds.

    ``CLIP`` clamps them into range; ``FILL_OR_DROP`` makes gathers of out-of-bounds
    slices return ``fill_value`` and drops out-of-bounds scatter updates;
    ``PROMISE_IN_BOUNDS`` lets the compiler assume they are in range; ``ONE_HOT`` is for
    one-hot-encoded lookups."""

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


def ints(xs) -> tuple[int, ...]:
    return tuple(operator.index(x) for x in xs)


def check_integer_indices(indices: ShapedArray) -> None:
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise ValueError("indices must have an integer type")


def _check_sorted_unique(name: str, dims, what: str) -> None:
    if list(dims) != sorted(dims):
        raise TypeError(f"{name} in {what} op must be sorted; got {dims}")
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {what} op must not repeat; got: {dims}.")


def _check_in_range(name: str, dims, rank: int, what: str, rank_name: str) -> None:
    for i, d in enumerate(dims):
        if not 0 <= d < rank:
            raise TypeError(
                f"{name} in {what} op must be in range [0, {rank}), got {name}[{i}]={d}, "
                f"{rank_name}={rank}."
            )


def check_batching_dims(what, operand, indices, operand_dims, index_dims, index_names):
    """The checks both ops make of their batching dimensions (``index_names`` names the
    indices' field in messages)."""
    _check_sorted_unique("operand_batching_dims", operand_dims, what)
    _check_in_range("operand_batching_dims", operand_dims, operand.ndim, what, "operand rank")
    if len(set(index_dims)) != len(index_dims):
        raise TypeError(f"{index_names} in {what} op must not repeat; got: {index_dims}.")
    _check_in_range(index_names, index_dims, indices.ndim - 1, what, "index_vector_dim")
    if len(operand_dims) != len(index_dims):
        raise TypeError(
            f"{what} op requires equal numbers of operand_batching_dims and {index_names}, "
            f"got {operand_dims} and {index_dims}."
        )
    op_sizes = tuple(operand.shape[d] for d in operand_dims)
    idx_sizes = tuple(indices.shape[d] for d in index_dims)
    if op_sizes != idx_sizes:
        raise TypeError(
            f"{what} op requires operand batching dimensions and indices batching "
            f"dimensions to have the same shape, got {op_sizes} and {idx_sizes}."
        )


def _gather_shape(operand, indices, dnums, slice_sizes) -> tuple[int, ...]:
    check_integer_indices(indices)
    if indices.ndim < 1:
        raise TypeError("Gather op requires indices of rank at least 1.")
    batch_shape = indices.shape[:-1]
    offset_dims, collapsed = dnums.offset_dims, dnums.collapsed_slice_dims
    out_rank = len(offset_dims) + len(batch_shape)
    _check_sorted_unique("offset_dims", offset_dims, "gather")
    _check_in_range("offset_dims", offset_dims, out_rank, "gather", "output_shape.rank")
    if len(slice_sizes) != operand.ndim:
        raise TypeError(
            "Gather op must have one slice size for every input dimension; got: "
            f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={operand.ndim}"
        )
    _check_sorted_unique("collapsed_slice_dims", collapsed, "gather")
    _check_in_range("collapsed_slice_dims", collapsed, operand.ndim, "gather", "operand rank")
    for i, d in enumerate(collapsed):
        if slice_sizes[d] > 1:
            raise TypeError(
                "Gather op can only collapse slice dims with bound 1, but bound is "
                f"{slice_sizes[d]} for index {d} at position {i}."
            )
    check_batching_dims(
        "gather",
        operand,
        indices,
        dnums.operand_batching_dims,
        dnums.start_indices_batching_dims,
        "start_indices_batching_dims",
    )
    for i, d in enumerate(dnums.operand_batching_dims):
        if slice_sizes[d] > 1:
            raise TypeError(
                "Gather op can only have operand batching dims with bound 0/1, but bound "
                f"is {slice_sizes[d]} for index {d} at position {i}."
            )
    start_index_map = dnums.start_index_map
    if len(start_index_map) != indices.shape[-1]:
        raise TypeError(
            f"Gather op has {len(start_index_map)} elements in start_index_map and the "
            f"bound of dimension index_vector_dim={indices.ndim - 1} of indices is "
            f"{indices.shape[-1]}. These two numbers must be equal."
        )
    for i, d in enumerate(start_index_map):
        if not 0 <= d < operand.ndim:
            raise TypeError(
                f"Invalid start_index_map; domain is [0, {operand.ndim}), got: {i}->{d}."
            )
    if len(set(start_index_map)) != len(start_index_map):
        raise TypeError(f"Repeated dimensions are not allowed in start_index_map; got: "
                        f"{start_index_map}.")  # fmt: skip
    for i, (size, bound) in enumerate(zip(slice_sizes, operand.shape, strict=True)):
        if not 0 <= size <= bound:
            raise TypeError(
                f"Slice size at index {i} in gather op is out of range, must be within "
                f"[0, {bound} + 1), got {size}."
            )
    dropped = set(collapsed) | set(dnums.operand_batching_dims)
    offset_sizes = [s for i, s in enumerate(slice_sizes) if i not in dropped]
    if len(offset_sizes) != len(offset_dims):
        raise TypeError(
            f"All components of the offset index in a gather op must either be a offset "
            f"dimension or explicitly collapsed/batching; got len(slice_sizes)="
            f"{len(slice_sizes)}, output_slice_sizes={tuple(offset_sizes)}, "
            f"collapsed_slice_dims={collapsed}, operand_batching_dims="
            f"{dnums.operand_batching_dims}."
        )
    offsets, batches = iter(offset_sizes), iter(batch_shape)
    return tuple(next(offsets) if i in offset_dims else next(batches) for i in range(out_rank))


def _gather_abstract_eval(operand, indices, *, dimension_numbers, slice_sizes,
                          indices_are_sorted, unique_indices, mode, fill_value):  # fmt: skip
    shape = _gather_shape(operand, indices, dimension_numbers, slice_sizes)
    return ShapedArray(shape, operand.dtype, weak_type=operand.weak_type)


def default_fill_value(dtype) -> np.ndarray:
    """What an out-of-bounds gather returns without ``fill_value``: NaN, the most
    negative (unsigned: largest) integer, or ``True``."""
    if dtype == dtypes.bool_:
        return np.array(True)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(np.nan, dtype)
    info = dtypes.iinfo(dtype)
    return np.array(info.min if dtypes.issubdtype(dtype, np.signedinteger) else info.max, dtype)


def in_bounds_mask(indices, indices_aval, operand_shape, window_sizes, index_map):
    """``bool[batch...]``: whether each index vector's whole window lies in bounds."""
    idx_dtype = indices_aval.dtype
    k = indices_aval.shape[-1]
    upper = np.array([operand_shape[d] - window_sizes[d] for d in index_map], np.int64)
    last = indices_aval.ndim - 1
    upper_b = mb.broadcast_in_dim(
        mb.constant(upper.astype(idx_dtype)), indices_aval, [last]
    ) if k else mb.constant(np.zeros(indices_aval.shape, idx_dtype))  # fmt: skip
    zero_b = mb.broadcast_in_dim(mb.constant(np.zeros((), idx_dtype)), indices_aval, [])
    kind = hlo.ComparisonTypeAttr.get(
        "SIGNED" if dtypes.issubdtype(idx_dtype, np.signedinteger) else "UNSIGNED"
    )

    def cmp(a, b, direction):
        return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction), compare_type=kind)

    ok = hlo.and_(cmp(indices, zero_b, "GE"), cmp(indices, upper_b, "LE"))
    out_aval = ShapedArray(indices_aval.shape[:-1], np.dtype(bool))
    op = hlo.ReduceOp([mb.ir_type(out_aval)], [ok], [mb.constant(np.array(True))], [last])
    scalar = mb.ir_type(ShapedArray((), np.dtype(bool)))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.and_(*block.arguments)])
    return op.result


def _gather_lowering(ctx, operand, indices, *, dimension_numbers, slice_sizes,
                     indices_are_sorted, unique_indices, mode, fill_value):  # fmt: skip
    operand_aval, indices_aval = ctx.avals_in
    (out_aval,) = ctx.avals_out
    dn = dimension_numbers
    attr = hlo.GatherDimensionNumbers.get(
        offset_dims=list(dn.offset_dims),
        collapsed_slice_dims=list(dn.collapsed_slice_dims),
        operand_batching_dims=list(dn.operand_batching_dims),
        start_indices_batching_dims=list(dn.start_indices_batching_dims),
        start_index_map=list(dn.start_index_map),
        index_vector_dim=indices_aval.ndim - 1,
    )
    # stablehlo.gather clamps start indices into range, which is what CLIP asks for.
    out = hlo.GatherOp(
        operand, indices, attr, list(slice_sizes), indices_are_sorted=indices_are_sorted
    ).result
    if mode is not GatherScatterMode.FILL_OR_DROP:
        return [out]
    mask = in_bounds_mask(
        indices, indices_aval, operand_aval.shape, slice_sizes, dn.start_index_map
    )
    batch_positions = [i for i in range(out_aval.ndim) if i not in dn.offset_dims]
    mask = mb.broadcast_in_dim(mask, out_aval.update(dtype=np.dtype(bool)), batch_positions)
    fill = default_fill_value(out_aval.dtype) if fill_value is None else fill_value
    fill = mb.broadcast_in_dim(
        mb.constant(np.asarray(fill, out_aval.dtype)), out_aval, []
    )  # fmt: skip
    return [hlo.select(mask, out, fill)]


gather_p = standard_primitive("gather", _gather_abstract_eval, _gather_lowering)


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):  # fmt: skip
    """Slices of ``operand`` of size ``slice_sizes`` starting where ``start_indices``
    say, arranged as ``dimension_numbers`` describe (XLA's Gather)."""
    parsed = (
        GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)
    )
    if parsed is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather with mode=GatherScatterMode.ONE_HOT")
    if parsed is not GatherScatterMode.FILL_OR_DROP:
        fill_value = None
    dn = GatherDimensionNumbers(*(ints(f) for f in dimension_numbers))
    return gather_p.bind(
        operand,
        start_indices,
        dimension_numbers=dn,
        slice_sizes=ints(slice_sizes),
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=parsed,
        fill_value=fill_value,
    )


# ------------------------------------------------------------------ differentiation


def gather_to_scatter_dnums(dn: GatherDimensionNumbers):
    from lamina.lax._scatter import ScatterDimensionNumbers

    return ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )


def _gather_jvp(t, ans, operand, indices, **params):
    fill = 0 if params["mode"] is GatherScatterMode.FILL_OR_DROP else None
    return gather_p.bind(t, indices, **{**params, "fill_value": fill})


ad.defjvp(gather_p, _gather_jvp, None)


def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes,
                      indices_are_sorted, unique_indices, mode, fill_value):  # fmt: skip
    from lamina.lax._scatter import scatter_add_p, scatter_jaxpr

    if reverse.is_undefined_primal(indices):
        raise NotImplementedError("gather is not linear in its indices")
    aval = operand.aval
    ct = ad.instantiate_zeros(ct)
    zeros = broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())
    jaxpr, consts = scatter_jaxpr("add", aval.dtype)
    out = scatter_add_p.bind(
        zeros,
        indices,
        ct,
        dimension_numbers=gather_to_scatter_dnums(dimension_numbers),
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
        update_jaxpr=jaxpr,
        update_consts=consts,
    )
    return [out, None]


gather_p.def_transpose(_gather_transpose)


# ------------------------------------------------------------------ batching


def _gather_batching(axis_data, vals, dims, *, dimension_numbers, slice_sizes, **params):
    operand, indices = vals
    op_dim, idx_dim = dims
    dn = dimension_numbers
    size = axis_data.size
    if idx_dim is batching.not_mapped:
        # A batched operand: its batch dimension becomes one more slice dimension,
        # taken whole, and shows up first in the output.
        operand = batching.moveaxis(operand, op_dim, 0)
        shift = [d + 1 for d in (dn.collapsed_slice_dims)]
        new = GatherDimensionNumbers(
            offset_dims=(0, *(d + 1 for d in dn.offset_dims)),
            collapsed_slice_dims=tuple(shift),
            start_index_map=tuple(d + 1 for d in dn.start_index_map),
            operand_batching_dims=tuple(d + 1 for d in dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims,
        )
        out = gather_p.bind(
            operand, indices, dimension_numbers=new, slice_sizes=(size, *slice_sizes), **params
        )
        return out, 0
    indices = batching.moveaxis(indices, idx_dim, 0)
    if op_dim is batching.not_mapped:
        # Batched indices into one operand: more index batch dimensions, the first one
        # leading the output.
        new = dn._replace(
            offset_dims=tuple(d + 1 for d in dn.offset_dims),
            start_indices_batching_dims=tuple(d + 1 for d in dn.start_indices_batching_dims),
        )
        out = gather_p.bind(
            operand, indices, dimension_numbers=new, slice_sizes=slice_sizes, **params
        )
        return out, 0
    operand = batching.moveaxis(operand, op_dim, 0)
    new = GatherDimensionNumbers(
        offset_dims=tuple(d + 1 for d in dn.offset_dims),
        collapsed_slice_dims=tuple(d + 1 for d in dn.collapsed_slice_dims),
        start_index_map=tuple(d + 1 for d in dn.start_index_map),
        operand_batching_dims=(0, *(d + 1 for d in dn.operand_batching_dims)),
        start_indices_batching_dims=(0, *(d + 1 for d in dn.start_indices_batching_dims)),
    )
    out = gather_p.bind(
        operand, indices, dimension_numbers=new, slice_sizes=(1, *slice_sizes), **params
    )
    return out, 0


gather_p.def_batching(_gather_batching)
