"""``gather[dimension_numbers, slice_sizes, indices_are_sorted, unique_indices, mode,
fill_value]`` and its transpose, the scatter family: ``scatter`` (overwrite),
``scatter-add``, ``scatter-sub``, ``scatter-mul``, ``scatter-min`` and ``scatter-max``
(params ``dimension_numbers, indices_are_sorted, unique_indices, mode, update_jaxpr,
update_consts``), with their dimension numbers, out-of-bounds modes and all of their
rules (JVPs and transposes included), as JAX 0.10.2 has them; ``scatter_apply`` and
``index_take``."""

from __future__ import annotations

import enum
import functools
import math
import operator
from typing import NamedTuple

import numpy as np

from lamina.interpreters import (
    ad,
    batching,
    lower_jaxpr_body,
    reverse,
    shaped_abstractify,
    trace_to_jaxpr,
)
from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import eval_dynamic_shape_as_tensor, hlo, ir
from lamina.ir import (
    ShapedArray,
    ShardingTypeError,
    canonicalize_dim,
    dtypes,
    is_constant_shape,
    parse_call_args,
    register_value_reader,
    spec_of,
)
from lamina.lax.base import primitives as ew
from lamina.lax.base.operands import aval_of, check_same_dtypes, standard_primitive
from lamina.lax.base.primitives import (
    add,
    broadcast_in_dim,
    convert_element_type,
    div,
    eq,
    iota,
    mul,
    neg,
    rem,
    reshape,
    select_n,
)
from lamina.lax.base.reshaping import concatenate

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "gather",
    "gather_p",
    "index_take",
    "scatter",
    "scatter_add",
    "scatter_add_p",
    "scatter_apply",
    "scatter_max",
    "scatter_max_p",
    "scatter_min",
    "scatter_min_p",
    "scatter_mul",
    "scatter_mul_p",
    "scatter_p",
    "scatter_sub",
    "scatter_sub_p",
]


# ==================== gather
# ``gather[dimension_numbers, slice_sizes, indices_are_sorted, unique_indices, mode,
# fill_value]`` with its dimension numbers and out-of-bounds modes, as JAX 0.10.2 has
# them.


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


def _read_dimension_numbers(cls):
    def read(text: str):
        args, kwargs = parse_call_args(text)
        return cls(*args, **kwargs)

    return read


# Printed Jaxprs show these params as ``GatherDimensionNumbers(offset_dims=(0,), ...)``
# and ``GatherScatterMode.CLIP``.
register_value_reader("GatherDimensionNumbers", _read_dimension_numbers(GatherDimensionNumbers))
register_value_reader("GatherScatterMode", lambda text: GatherScatterMode[text.split(".", 1)[1]])


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
    bounds = [operand_shape[d] - window_sizes[d] for d in index_map]
    last = indices_aval.ndim - 1
    if k and not is_constant_shape(bounds):  # symbolic sizes: bounds computed in the program
        vector = ir.RankedTensorType.get([k], mb.dtype_to_ir_type(idx_dtype))
        upper = hlo.convert(vector, eval_dynamic_shape_as_tensor(None, bounds))
        upper_b = mb.broadcast_in_dim(upper, indices_aval, [last])
    elif k:
        upper = np.array(bounds, np.int64)
        upper_b = mb.broadcast_in_dim(mb.constant(upper.astype(idx_dtype)), indices_aval, [last])
    elif is_constant_shape(indices_aval.shape):
        upper_b = mb.constant(np.zeros(indices_aval.shape, idx_dtype))
    else:
        upper_b = mb.broadcast_in_dim(mb.constant(np.zeros((), idx_dtype)), indices_aval, [])
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
    if not is_constant_shape((*slice_sizes, *operand_aval.shape)):
        sizes = eval_dynamic_shape_as_tensor(ctx, slice_sizes)
        out = hlo.DynamicGatherOp(
            operand, indices, sizes, attr, indices_are_sorted=indices_are_sorted,
            results=[ctx.ir_type(out_aval)],
        ).result  # fmt: skip
    else:
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


@gather_p.def_sharding
def _gather_sharding(operand, indices, *, dimension_numbers, slice_sizes, **_):
    """Slices that cut into split operand dimensions, split index vectors or split
    lookups over an unbatched operand would need collectives: JAX asks for
    ``out_sharding`` then. Otherwise offset dimensions keep the operand's splits and
    the others the indices' (a batch dimension the split of either side)."""
    dn = dimension_numbers
    ops, ixs = spec_of(operand), list(spec_of(indices))
    rank = len(dn.offset_dims) + indices.ndim - 1
    if all(e is None for e in (*ops, *ixs)):
        return (None,) * rank
    pairs = list(zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True))
    ok = all(slice_sizes[d] == operand.shape[d] or ops[d] is None for d in dn.start_index_map)
    ok = ok and all(None in (ixs[i], ops[d]) or ixs[i] == ops[d] for d, i in pairs)
    batched = set(dn.start_indices_batching_dims)
    ok = ok and all(e is None for i, e in enumerate(ixs) if i not in batched)
    if not ok:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
            "indexing as out sharding could not be resolved unambiguously (or would require "
            f"collectives on inputs). Got operand={operand!r}, indices={indices!r}"
        )
    for d, i in pairs:
        ixs[i] = ixs[i] if ixs[i] is not None else ops[d]
    dropped = {*dn.collapsed_slice_dims, *dn.operand_batching_dims}
    kept = iter(d for d in range(operand.ndim) if d not in dropped)
    rest = iter(ixs)
    return tuple(ops[next(kept)] if k in dn.offset_dims else next(rest) for k in range(rank))


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
    elif fill_value is None:  # the default, as a Python scalar in the params (as JAX)
        dtype = aval_of(operand).dtype
        if dtypes.issubdtype(dtype, np.inexact):
            fill_value = np.nan
        elif dtype == dtypes.bool_ or dtypes.issubdtype(dtype, np.integer):
            fill_value = default_fill_value(dtype).item()
    dn = GatherDimensionNumbers(*(ints(f) for f in dimension_numbers))
    return gather_p.bind(
        operand,
        start_indices,
        dimension_numbers=dn,
        slice_sizes=tuple(canonicalize_dim(d) for d in slice_sizes),
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=parsed,
        fill_value=fill_value,
    )


# ------------------------------------------------------------------ differentiation


def gather_to_scatter_dnums(dn: GatherDimensionNumbers):
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


ad.defjvp2(gather_p, _gather_jvp, None)


def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes,
                      indices_are_sorted, unique_indices, mode, fill_value):  # fmt: skip

    if reverse.is_undefined_primal(indices):
        raise NotImplementedError("gather is not linear in its indices")
    aval = operand.aval
    ct = ad.instantiate_zeros(ct)
    zeros = broadcast_in_dim(
        np.zeros((), aval.dtype), aval.shape, (), out_sharding=aval.type_sharding
    )
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


# ==================== the scatter family
# The scatter family: ``scatter`` (overwrite), ``scatter-add``, ``scatter-sub``,
# ``scatter-mul``, ``scatter-min`` and ``scatter-max``, each with params
# ``dimension_numbers, indices_are_sorted, unique_indices, mode, update_jaxpr,
# update_consts`` as JAX 0.10.2 has them, and ``scatter_apply``.


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter places windows of ``updates`` into the operand.

    ``update_window_dims``: dimensions of updates that are window dimensions;
    ``inserted_window_dims``: operand dimensions the window has size 1 in (absent from
    updates); ``scatter_dims_to_operand_dims``: the operand dimension each index-vector
    entry addresses; ``operand_batching_dims`` / ``scatter_indices_batching_dims``:
    dimensions of operand and indices batched together."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


register_value_reader("ScatterDimensionNumbers", _read_dimension_numbers(ScatterDimensionNumbers))


@functools.cache
def scatter_jaxpr(kind: str, dtype):
    """The update computation ``(old, new) -> value`` of a combining scatter, as the
    ``update_jaxpr`` / ``update_consts`` params."""
    combine = {"add": ew.add, "sub": ew.sub, "mul": ew.mul, "min": ew.min, "max": ew.max}[kind]
    scalar = ShapedArray((), dtypes.dtype(dtype))
    closed, _ = trace_to_jaxpr(lambda a, b: [combine(a, b)], [scalar, scalar], kind)
    return closed.jaxpr, tuple(closed.consts)


def _window_sizes(operand_shape, updates_shape, dn) -> list[int]:
    """The window's size in every operand dimension."""
    sizes, window = [], iter(dn.update_window_dims)
    for d in range(len(operand_shape)):
        if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
            sizes.append(1)
        else:
            sizes.append(updates_shape[next(window)])
    return sizes


def _scatter_abstract_eval(operand, indices, updates, *, dimension_numbers,
                           indices_are_sorted, unique_indices, mode, update_jaxpr,
                           update_consts):  # fmt: skip
    check_integer_indices(indices)
    check_same_dtypes("scatter", [operand, updates])
    dn = dimension_numbers
    if indices.ndim < 1:
        raise TypeError("Scatter op requires indices of rank at least 1.")
    expected_rank = len(dn.update_window_dims) + indices.ndim - 1
    if updates.ndim != expected_rank:
        raise TypeError(f"Updates tensor must be of rank {expected_rank}; got {updates.ndim}.")
    for name, dims, rank in (
        ("update_window_dims", dn.update_window_dims, updates.ndim),
        ("inserted_window_dims", dn.inserted_window_dims, operand.ndim),
    ):
        if list(dims) != sorted(set(dims)):
            raise TypeError(f"{name} in scatter op must be sorted and unique; got {dims}.")
        for i, d in enumerate(dims):
            if not 0 <= d < rank:
                raise TypeError(
                    f"Invalid {name} set in scatter op; valid range is [0, {rank}); got: "
                    f"{name}[{i}] = {d}."
                )
    check_batching_dims(
        "scatter",
        operand,
        indices,
        dn.operand_batching_dims,
        dn.scatter_indices_batching_dims,
        "scatter_indices_batching_dims",
    )
    window = len(dn.update_window_dims) + len(dn.inserted_window_dims)
    window += len(dn.operand_batching_dims)
    if window != operand.ndim:
        raise TypeError(
            f"Scatter op has window of size {window}; doesn't match operand of rank {operand.ndim}."
        )
    to_operand = dn.scatter_dims_to_operand_dims
    if len(to_operand) != indices.shape[-1]:
        raise TypeError(
            f"Scatter op has {len(to_operand)} elements in scatter_dims_to_operand_dims and "
            f"the bound of dimension index_vector_dim={indices.ndim - 1} of indices is "
            f"{indices.shape[-1]}. These two numbers must be equal."
        )
    for i, d in enumerate(to_operand):
        if not 0 <= d < operand.ndim:
            raise TypeError(
                f"Invalid scatter_dims_to_operand_dims mapping; domain is [0, "
                f"{operand.ndim}), got: {i}->{d}."
            )
    if len(set(to_operand)) != len(to_operand):
        raise TypeError(
            f"Repeated dimensions not allowed in scatter_dims_to_operand_dims; got: {to_operand}."
        )
    kept = [d for d in range(operand.ndim)
            if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]  # fmt: skip
    for d, operand_dim in zip(dn.update_window_dims, kept, strict=True):
        if updates.shape[d] > operand.shape[operand_dim]:
            raise TypeError(
                "Bounds of the window dimensions of updates must not exceed the bounds of "
                f"the corresponding dimensions of operand. For dimension {d}, updates "
                f"bound is {updates.shape[d]}, operand bound is {operand.shape[operand_dim]}."
            )
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    for i, (d, bound) in enumerate(zip(scatter_dims, indices.shape[:-1], strict=True)):
        if updates.shape[d] != bound:
            raise TypeError(
                "Bounds of the scatter dimensions of updates must be the same as the "
                f"bounds of the corresponding dimensions of scatter indices. For scatter "
                f"dimension {i}, updates bound is {updates.shape[d]}, scatter_indices bound "
                f"is {bound}."
            )
    return ShapedArray(operand.shape, operand.dtype, weak_type=operand.weak_type)


def _clamped_indices(indices, indices_aval, operand_shape, window_sizes, index_map):
    """CLIP: every index vector moved so that its window lies in bounds."""
    idx_dtype = indices_aval.dtype
    last = indices_aval.ndim - 1
    upper = np.array([operand_shape[d] - window_sizes[d] for d in index_map], np.int64)
    upper_b = mb.broadcast_in_dim(mb.constant(upper.astype(idx_dtype)), indices_aval, [last])
    zero_b = mb.broadcast_in_dim(mb.constant(np.zeros((), idx_dtype)), indices_aval, [])
    return hlo.clamp(zero_b, indices, upper_b)


def _scatter_lowering(ctx, operand, indices, updates, *, dimension_numbers,
                      indices_are_sorted, unique_indices, mode, update_jaxpr,
                      update_consts):  # fmt: skip
    operand_aval, indices_aval, updates_aval = ctx.avals_in
    dn = dimension_numbers
    if mode is GatherScatterMode.CLIP:
        sizes = _window_sizes(operand_aval.shape, updates_aval.shape, dn)
        indices = _clamped_indices(
            indices, indices_aval, operand_aval.shape, sizes, dn.scatter_dims_to_operand_dims
        )
    # Out-of-bounds windows are dropped by stablehlo.scatter itself, as FILL_OR_DROP asks.
    attr = hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(dn.update_window_dims),
        inserted_window_dims=list(dn.inserted_window_dims),
        input_batching_dims=list(dn.operand_batching_dims),
        scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
        scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims),
        index_vector_dim=indices_aval.ndim - 1,
    )
    op = hlo.ScatterOp(
        [mb.ir_type(ctx.avals_out[0])],
        [operand],
        indices,
        [updates],
        attr,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
    )
    scalar = mb.ir_type(ShapedArray((), operand_aval.dtype))
    block = op.update_computation.blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        if update_jaxpr is None:
            hlo.return_([block.arguments[1]])
        else:
            outs = lower_jaxpr_body(
                ctx.module_context, update_jaxpr, update_consts, list(block.arguments)
            )
            hlo.return_(outs)
    return op.results


def _scatter_primitive(name: str):
    return standard_primitive(name, _scatter_abstract_eval, _scatter_lowering)


scatter_p = _scatter_primitive("scatter")
scatter_add_p = _scatter_primitive("scatter-add")
scatter_sub_p = _scatter_primitive("scatter-sub")
scatter_mul_p = _scatter_primitive("scatter-mul")
scatter_min_p = _scatter_primitive("scatter-min")
scatter_max_p = _scatter_primitive("scatter-max")


def _scatter_sharding(operand, indices, updates, *, dimension_numbers, **_):
    """Scatters resolve as the inverse gather: batch dimensions split alike on all
    sides, window dimensions split alike on operand and updates (or unsplit when the
    window is partial), no other split on indices or updates; else JAX asks for
    ``out_sharding``."""
    dn = dimension_numbers
    ops, ixs, ups = spec_of(operand), spec_of(indices), spec_of(updates)
    if all(e is None for e in (*ops, *ixs, *ups)):
        return ops
    vector_dim = indices.ndim - 1
    update_dims: list = list(range(vector_dim))
    for d in dn.update_window_dims:
        update_dims.insert(d, None)
    up_batch = tuple(update_dims.index(i) for i in dn.scatter_indices_batching_dims)
    dropped = {*dn.inserted_window_dims, *dn.operand_batching_dims}
    kept = [d for d in range(operand.ndim) if d not in dropped]
    windows = list(zip(dn.update_window_dims, kept, strict=False))
    batch = list(
        zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, up_batch, strict=True)
    )
    ok = all(len({e for e in (ops[o], ixs[i], ups[u]) if e is not None}) <= 1 for o, i, u in batch)
    ok = ok and all(
        (updates.shape[u] == operand.shape[o] and ups[u] == ops[o])
        or (ups[u] is None and ops[o] is None)
        for u, o in windows
    )
    ok = ok and all(ops[d] is None for d in dn.inserted_window_dims)
    ok = ok and all(
        e is None for i, e in enumerate(ups) if i not in up_batch and i not in dn.update_window_dims
    )
    ok = ok and all(
        e is None
        for i, e in enumerate(ixs[:vector_dim])
        if i not in dn.scatter_indices_batching_dims
    )
    if not ok or ixs[vector_dim] is not None:
        raise ShardingTypeError(
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for "
            "the scatter update as out sharding could not be resolved unambiguously (or would "
            "require collectives on inputs). Got "
            f"operand={operand!r}, indices={indices!r}, updates={updates!r}"
        )
    out = list(ops)
    for o, i, u in batch:
        out[o] = out[o] if out[o] is not None else ixs[i] if ixs[i] is not None else ups[u]
    for u, o in windows:
        out[o] = out[o] if out[o] is not None else ups[u]
    return tuple(out)


for _p in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    _p.def_sharding(_scatter_sharding)


def _dnums(dimension_numbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(*(ints(f) for f in dimension_numbers))


def _bind_combining(prim, kind, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode):  # fmt: skip
    """Binds ``prim`` with the params of XLA's scatter; ``kind`` names the combining
    computation (None: updates overwrite, no computation)."""
    jaxpr, consts = (None, ()) if kind is None else scatter_jaxpr(kind, aval_of(operand).dtype)
    return prim.bind(
        operand,
        scatter_indices,
        updates,
        dimension_numbers=_dnums(dimension_numbers),
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=GatherScatterMode.from_any(mode),
        update_jaxpr=jaxpr,
        update_consts=consts,
    )


def _public(prim, kind: str, doc: str):
    def fun(operand, scatter_indices, updates, dimension_numbers, *,
            indices_are_sorted=False, unique_indices=False, mode=None):  # fmt: skip
        return _bind_combining(
            prim, kind, operand, scatter_indices, updates, dimension_numbers,
            indices_are_sorted, unique_indices, mode,
        )  # fmt: skip

    fun.__name__ = fun.__qualname__ = f"scatter_{kind}"
    fun.__doc__ = doc
    return fun


scatter_add = _public(scatter_add_p, "add", "Adds ``updates`` into windows of ``operand``.")
scatter_sub = _public(scatter_sub_p, "sub", "Subtracts ``updates`` from windows of ``operand``.")
scatter_mul = _public(scatter_mul_p, "mul", "Multiplies windows of ``operand`` by ``updates``.")
scatter_min = _public(
    scatter_min_p, "min", "The minimum of windows of ``operand`` and ``updates``."
)
scatter_max = _public(
    scatter_max_p, "max", "The maximum of windows of ``operand`` and ``updates``."
)


def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):  # fmt: skip
    """``operand`` with the windows ``scatter_indices`` address overwritten by
    ``updates`` (which of several updates to one place wins is unspecified)."""
    return _bind_combining(scatter_p, None, operand, scatter_indices, updates,
                           dimension_numbers, indices_are_sorted, unique_indices, mode)  # fmt: skip


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):  # fmt: skip
    """``operand`` with ``func`` applied once to each element the windows address."""

    dtype = aval_of(operand).dtype
    scalar = ShapedArray((), dtype)
    closed, _ = trace_to_jaxpr(lambda a, _b: [func(a)], [scalar, scalar], "scatter_apply")
    updates = broadcast_in_dim(np.zeros((), dtype), ints(update_shape), ())
    return scatter_p.bind(
        operand,
        scatter_indices,
        updates,
        dimension_numbers=_dnums(dimension_numbers),
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=GatherScatterMode.from_any(mode),
        update_jaxpr=closed.jaxpr,
        update_consts=tuple(closed.consts),
    )


# ------------------------------------------------------------------ batching


def _scatter_batching(prim):
    def rule(axis_data, vals, dims, *, dimension_numbers, **params):
        size = axis_data.size
        operand, indices, updates = vals
        op_dim, idx_dim, up_dim = dims
        dn = dimension_numbers
        operand = batching.bdim_at_front(operand, op_dim, size)
        updates = batching.bdim_at_front(updates, up_dim, size)
        shifted = {
            "inserted_window_dims": tuple(d + 1 for d in dn.inserted_window_dims),
            "scatter_dims_to_operand_dims": tuple(d + 1 for d in dn.scatter_dims_to_operand_dims),
        }
        if idx_dim is batching.not_mapped:
            # Shared indices: the batch becomes one more window dimension, written whole.
            new = ScatterDimensionNumbers(
                update_window_dims=(0, *(d + 1 for d in dn.update_window_dims)),
                operand_batching_dims=tuple(d + 1 for d in dn.operand_batching_dims),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
                **shifted,
            )
        else:
            indices = batching.moveaxis(indices, idx_dim, 0)
            new = ScatterDimensionNumbers(
                update_window_dims=tuple(d + 1 for d in dn.update_window_dims),
                operand_batching_dims=(0, *(d + 1 for d in dn.operand_batching_dims)),
                scatter_indices_batching_dims=(
                    0, *(d + 1 for d in dn.scatter_indices_batching_dims)
                ),
                **shifted,
            )  # fmt: skip
        return prim.bind(operand, indices, updates, dimension_numbers=new, **params), 0

    prim.def_batching(rule)


for _prim in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
              scatter_max_p):  # fmt: skip
    _scatter_batching(_prim)


# ==================== derivatives of the scatter family


def _zeros(aval):
    return broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())


def _aval(x):
    return x.aval if reverse.is_undefined_primal(x) else shaped_abstractify(x)


def _gather_back(ct, indices, updates_shape, params):
    """The part of ``ct`` each update's window addresses: the gather transposing a
    scatter (out-of-bounds windows read as zeros)."""
    dn = params["dimension_numbers"]
    sizes, window = [], iter(dn.update_window_dims)
    for d in range(len(_aval(ct).shape)):
        dropped = d in dn.inserted_window_dims or d in dn.operand_batching_dims
        sizes.append(1 if dropped else updates_shape[next(window)])
    gather_dn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims,
    )
    return gather_p.bind(
        ct,
        indices,
        dimension_numbers=gather_dn,
        slice_sizes=tuple(sizes),
        indices_are_sorted=False,  # as JAX, whatever the scatter promised
        unique_indices=False,
        mode=params["mode"],
        fill_value=0 if params["mode"] is GatherScatterMode.FILL_OR_DROP else None,
    )


def _scatter_add(base, indices, updates, params):
    """``scatter-add`` with the mode and flags in ``params`` (any update computation
    there is replaced by addition)."""
    jaxpr, consts = scatter_jaxpr("add", shaped_abstractify(base).dtype)
    kept = {k: v for k, v in params.items() if k not in ("update_jaxpr", "update_consts")}
    return scatter_add_p.bind(
        base, indices, updates, **kept, update_jaxpr=jaxpr, update_consts=consts
    )


def _tangent_zero(x):
    return ad.Zero(ad.tangent_aval(shaped_abstractify(x)))


# ------------------------------------------------------------------ add / sub


def _linear_jvp(prim):
    def rule(primals, tangents, **params):
        operand, indices, updates = primals
        t_op, _, t_up = tangents
        ans = prim.bind(operand, indices, updates, **params)
        if type(t_op) is ad.Zero and type(t_up) is ad.Zero:
            return ans, _tangent_zero(ans)
        t_op, t_up = ad.instantiate_zeros(t_op), ad.instantiate_zeros(t_up)
        return ans, prim.bind(t_op, indices, t_up, **params)

    prim.def_jvp(rule)


def _additive_transpose(negate: bool):
    def rule(ct, operand, indices, updates, **params):
        if reverse.is_undefined_primal(indices):
            raise NotImplementedError("scatter is not linear in its indices")
        ct = ad.instantiate_zeros(ct)
        ct_op = ct if reverse.is_undefined_primal(operand) else None
        ct_up = None
        if reverse.is_undefined_primal(updates):
            ct_up = _gather_back(ct, indices, updates.aval.shape, params)
            ct_up = neg(ct_up) if negate else ct_up
        return [ct_op, None, ct_up]

    return rule


_linear_jvp(scatter_add_p)
_linear_jvp(scatter_sub_p)
scatter_add_p.def_transpose(_additive_transpose(negate=False))
scatter_sub_p.def_transpose(_additive_transpose(negate=True))


# ------------------------------------------------------------------ mul


def _scatter_mul_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    t_op, _, t_up = tangents
    ans = scatter_mul_p.bind(operand, indices, updates, **params)
    out = _tangent_zero(ans)
    if type(t_op) is not ad.Zero:
        out = scatter_mul_p.bind(t_op, indices, updates, **params)
    if type(t_up) is not ad.Zero:
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`"
            )
        # Each element is hit by at most one update u: d(x*u) = x*du there.
        placed = scatter_p.bind(
            _zeros(shaped_abstractify(operand)),
            indices,
            t_up,
            **{**params, "update_jaxpr": None, "update_consts": ()},
        )
        out = ad.add_tangents(out, mul(operand, placed))
    return ans, out


def _scatter_mul_transpose(ct, operand, indices, updates, **params):
    if reverse.is_undefined_primal(updates) or reverse.is_undefined_primal(indices):
        raise NotImplementedError("scatter_mul is only linear in its operand")
    ct = ad.instantiate_zeros(ct)
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


scatter_mul_p.def_jvp(_scatter_mul_jvp)
scatter_mul_p.def_transpose(_scatter_mul_transpose)


# ------------------------------------------------------------------ min / max


def _extremal_jvp(prim):
    """JAX's rule: ties share the derivative equally among the operand and the updates
    that reach the extreme value."""

    def rule(primals, tangents, **params):
        operand, indices, updates = primals
        t_op, _, t_up = tangents
        ans = prim.bind(operand, indices, updates, **params)
        if type(t_op) is ad.Zero and type(t_up) is ad.Zero:
            return ans, _tangent_zero(ans)
        t_op, t_up = ad.instantiate_zeros(t_op), ad.instantiate_zeros(t_up)
        up_aval, op_aval = shaped_abstractify(updates), shaped_abstractify(operand)
        plain = {
            **params,
            "indices_are_sorted": False,
            "unique_indices": False,
            "mode": GatherScatterMode.FILL_OR_DROP,
        }
        in_bounds = {**plain, "mode": GatherScatterMode.PROMISE_IN_BOUNDS}

        def back(x):
            return _gather_back(x, indices, up_aval.shape, in_bounds)

        def ones(aval):
            return broadcast_in_dim(np.ones((), aval.dtype), aval.shape, ())

        # Built in JAX's order, so the Jaxpr is the same.
        initial, target = back(operand), back(ans)
        won, kept = eq(updates, target), eq(initial, target)
        base = _zeros(op_aval)
        ones_up = ones(up_aval)
        n_won = back(_scatter_add(base, indices, select_n(won, _zeros(up_aval), ones_up), plain))
        base = _zeros(op_aval)
        n_refs = back(_scatter_add(base, indices, ones(up_aval), plain))
        one = np.ones((), up_aval.dtype)
        shared = div(one, add(n_won, one))
        up_share = select_n(kept, div(one, n_won), shared)
        up_coef = select_n(won, _zeros(up_aval), up_share)
        shared = div(one, add(n_won, one))
        op_share = select_n(kept, _zeros(up_aval), shared)
        op_coef = div(add(np.array(-1, up_aval.dtype), op_share), n_refs)
        t_updates = add(mul(back(t_op), op_coef), mul(t_up, up_coef))
        return ans, _scatter_add(t_op, indices, t_updates, params)

    prim.def_jvp(rule)


_extremal_jvp(scatter_min_p)
_extremal_jvp(scatter_max_p)


# ------------------------------------------------------------------ scatter (overwrite)


def _update_ids(updates_shape, update_window_dims):
    """Ids 1, 2, ..., one per update window, broadcast over its window."""
    ids_shape = [1 if d in update_window_dims else n for d, n in enumerate(updates_shape)]
    count = math.prod(ids_shape)
    dtype = np.uint32 if count <= np.iinfo(np.uint32).max else np.uint64
    ids = reshape(iota(dtype, count), tuple(ids_shape))
    return add(ids, broadcast_in_dim(np.ones((), dtype), tuple(updates_shape), ()))


def _scatter_jvp(primals, tangents, *, update_jaxpr, update_consts, **params):
    operand, indices, updates = primals
    t_op, _, t_up = tangents
    full = {**params, "update_jaxpr": update_jaxpr, "update_consts": update_consts}
    if update_jaxpr is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")
    if type(t_op) is ad.Zero and type(t_up) is ad.Zero:
        ans = scatter_p.bind(operand, indices, updates, **full)
        return ans, _tangent_zero(ans)
    t_op, t_up = ad.instantiate_zeros(t_op), ad.instantiate_zeros(t_up)
    if params["unique_indices"]:
        ans = scatter_p.bind(operand, indices, updates, **full)
        return ans, scatter_p.bind(t_op, indices, t_up, **full)
    # Several updates may hit one element and only one of them wins: find the winner by
    # scattering per-window ids, then keep only winning updates and untouched operand
    # elements, so that the result is a (linear) scatter-add.
    op_aval = shaped_abstractify(operand)
    up_shape = shaped_abstractify(updates).shape
    ids = _update_ids(up_shape, params["dimension_numbers"].update_window_dims)
    id_aval = op_aval.update(dtype=shaped_abstractify(ids).dtype)
    scattered_ids = scatter_p.bind(_zeros(id_aval), indices, ids, **full)
    winners = _gather_back(scattered_ids, indices, up_shape, params)

    def keep(pred, x):
        return select_n(pred(), _zeros(shaped_abstractify(x)), x)

    untouched = lambda: eq(scattered_ids, _zeros(id_aval))  # noqa: E731
    won = lambda: eq(ids, winners)  # noqa: E731
    x_kept, u_kept = keep(untouched, operand), keep(won, updates)
    tx_kept, tu_kept = keep(untouched, t_op), keep(won, t_up)
    return _scatter_add(x_kept, indices, u_kept, params), _scatter_add(
        tx_kept, indices, tu_kept, params
    )


def _scatter_transpose(ct, operand, indices, updates, *, update_jaxpr, update_consts,
                       **params):  # fmt: skip
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where unique_indices=True")
    if reverse.is_undefined_primal(indices):
        raise NotImplementedError("scatter is not linear in its indices")
    ct = ad.instantiate_zeros(ct)
    up_aval = _aval(updates)
    ct_op = ct_up = None
    if reverse.is_undefined_primal(operand):
        ct_op = scatter_p.bind(
            ct, indices, _zeros(up_aval), update_jaxpr=None, update_consts=(), **params
        )
    if reverse.is_undefined_primal(updates):
        ct_up = _gather_back(ct, indices, up_aval.shape, params)
    return [ct_op, None, ct_up]


scatter_p.def_jvp(_scatter_jvp)
scatter_p.def_transpose(_scatter_transpose)


# ---------------------------------------------------------------- index_take


def index_take(src, idxs, axes):
    """``src`` indexed at the points ``zip(*idxs)`` along ``axes`` (indices taken
    modulo the axis sizes, so negative ones count from the end)."""

    shape = aval_of(src).shape
    axes = tuple(int(a) for a in axes)
    columns = []
    for index, axis in zip(idxs, axes, strict=True):
        index = convert_element_type(index, np.int32)
        size = np.int32(shape[axis])
        wrapped = rem(add(rem(index, size), size), size)
        columns.append(broadcast_in_dim(wrapped, (*aval_of(index).shape, 1), (0,)))
    starts = concatenate(columns, 1)
    numbers = GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
        collapsed_slice_dims=axes,
        start_index_map=axes,
    )
    sizes = tuple(1 if d in axes else n for d, n in enumerate(shape))
    return gather(src, starts, numbers, sizes, mode="promise_in_bounds")
