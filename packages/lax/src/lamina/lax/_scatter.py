"""The scatter family: ``scatter`` (overwrite), ``scatter-add``, ``scatter-sub``,
``scatter-mul``, ``scatter-min`` and ``scatter-max``, each with params
``dimension_numbers, indices_are_sorted, unique_indices, mode, update_jaxpr,
update_consts`` as JAX 0.10.2 has them, and ``scatter_apply``."""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from lamina.interpreters import batching, lower_jaxpr_body, trace_to_jaxpr
from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ShapedArray, dtypes
from lamina.lax._gather import (
    GatherScatterMode,
    check_batching_dims,
    check_integer_indices,
    ints,
)
from lamina.lax.base import primitives as ew
from lamina.lax.base.operands import aval_of, check_same_dtypes, standard_primitive
from lamina.lax.base.primitives import broadcast_in_dim

__all__ = [
    "ScatterDimensionNumbers",
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
