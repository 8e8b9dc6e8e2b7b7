"""The primitives of max/min window gradients, with JAX 0.10.2's params.

``select_and_gather_add[select_prim, window_dimensions, window_strides, padding,
base_dilation, window_dilation] tangents operand`` takes, in each window, the tangent of
the element ``select_prim`` (``ge`` for a maximum, ``le`` for a minimum) chooses: the JVP
of ``reduce_window_max``/``min``. ``select_and_scatter_add[select_prim,
window_dimensions, window_strides, padding] source operand`` adds each window's source
value at that element: its transpose. ``select_and_scatter_p`` is the general form
(user select and scatter computations).
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, batching, def_standard_impl, lower_jaxpr_body, reverse
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import (
    Primitive,
    ShapedArray,
    ShardingTypeError,
    padded_sharding,
    resized_spec,
    spec_of,
)
from lamina.lax.base import primitives as prims
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import compare_hlo, max_identity, min_identity, reduce_region
from lamina.lax.base.reshaping import pad
from lamina.lax.base.reshaping import slice as slice_
from lamina.lax.windowed.windows import (
    check_window,
    reduce_window_shape_tuple,
    window_attrs,
    with_batch_window,
)

__all__ = ["select_and_gather_add_p", "select_and_scatter_add_p", "select_and_scatter_p"]


def _direction(select_prim) -> str:
    return {"ge": "GE", "le": "LE", "gt": "GT", "lt": "LT"}[select_prim.name]


def _identity(select_prim, dtype):
    return max_identity(dtype) if _direction(select_prim) in ("GE", "GT") else min_identity(dtype)


def _pads_attr(padding):
    return ir.DenseIntElementsAttr.get(np.asarray(padding, np.int64).reshape(len(padding), 2))


# ------------------------------------------------------------------ select_and_gather_add


def _gather_abstract_eval(tangents, operand, *, select_prim, **params):
    if tangents.shape != operand.shape:
        raise TypeError(
            "select_and_gather_add tangents and operand shapes must match, got "
            f"{tangents.shape} and {operand.shape}."
        )
    check_window("select_and_gather_add", operand.shape, **params)
    return ShapedArray(reduce_window_shape_tuple(operand.shape, **params), tangents.dtype)


def _gather_lowering(ctx, tangents, operand, *, select_prim, **params):
    """One variadic reduce_window over (operand, tangent) pairs: the pair whose operand
    ``select_prim`` prefers wins."""

    t_aval, x_aval = ctx.avals_in
    out_shape = ctx.avals_out[0].shape
    scalars = [ShapedArray((), x_aval.dtype), ShapedArray((), t_aval.dtype)]
    inits = [
        ctx.constant(_identity(select_prim, x_aval.dtype), scalars[0]),
        ctx.constant(np.zeros((), t_aval.dtype), scalars[1]),
    ]
    result_types = ctx.ir_types([ShapedArray(out_shape, a.dtype) for a in scalars])
    op = hlo.ReduceWindowOp(result_types, [operand, tangents], inits, **window_attrs(**params))
    direction = _direction(select_prim)

    def body(a, ta, b, tb):
        pick = compare_hlo(a, b, direction, x_aval.dtype)
        return [hlo.select(pick, a, b), hlo.select(pick, ta, tb)]

    reduce_region(op, ctx.ir_types(scalars), body)
    return [op.results[1]]


select_and_gather_add_p = standard_primitive(
    "select_and_gather_add", _gather_abstract_eval, _gather_lowering
)


@select_and_gather_add_p.def_sharding
def _gather_sharding(tangents, operand, **params):
    if spec_of(tangents) != spec_of(operand):
        like = operand.type_sharding or tangents.type_sharding
        raise ShardingTypeError(
            "select_and_gather_add tangents and operand shardings must match, got "
            f"{padded_sharding(tangents, like)} and {padded_sharding(operand, like)}."
        )
    shape = _gather_abstract_eval(tangents, operand, **params).shape
    return resized_spec(operand, shape, "reduce_window")


def select_and_gather_add(tangents, operand, select_name, **params):
    """The tangent of the element of each window that ``select_name`` picks."""
    select_prim = getattr(prims, f"{select_name}_p")
    return select_and_gather_add_p.bind(tangents, operand, select_prim=select_prim, **params)


def _front(axis_data, vals, dims):
    return [batching.bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims, strict=True)]


def _gather_batching(axis_data, vals, dims, **params):
    tangents, operand = _front(axis_data, vals, dims)
    return select_and_gather_add_p.bind(tangents, operand, **with_batch_window(params, 0)), 0


select_and_gather_add_p.def_batching(_gather_batching)


def _linear_in_first(prim):
    """The JVP of a primitive linear in its first operand whose second operand only
    chooses (its tangent does not matter)."""

    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if type(tangents[0]) is ad.Zero:
            return ans, ad.Zero(ad.tangent_aval(aval_of(ans)))
        return ans, prim.bind(tangents[0], primals[1], **params)

    prim.def_jvp(jvp)


_linear_in_first(select_and_gather_add_p)


def _gather_transpose(
    ct,
    tangents,
    operand,
    *,
    select_prim,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    if reverse.is_undefined_primal(operand):
        raise ValueError("select_and_gather_add is not linear in its operand")
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(
            "VJP not implemented for select_and_gather (MaxPool) with window dilation, "
            f"got window_dilation={window_dilation}."
        )
    if type(ct) is ad.Zero:
        return [ad.Zero(tangents.aval), None]
    dilated = any(d != 1 for d in base_dilation)
    if dilated:
        # Windows see the operand with holes between its entries; filled with the
        # identity of the selection, the holes are never chosen.

        dtype = aval_of(operand).dtype
        hole = (max_identity if select_prim.name == "ge" else min_identity)(dtype)
        operand = pad(operand, hole, tuple((0, 0, d - 1) for d in base_dilation))
    out = select_and_scatter_add_p.bind(
        ad.instantiate_zeros(ct),
        operand,
        select_prim=select_prim,
        window_dimensions=window_dimensions,
        window_strides=window_strides,
        padding=padding,
    )
    if dilated:
        shape = aval_of(out).shape
        out = slice_(out, (0,) * len(shape), shape, base_dilation)
    return [out, None]


select_and_gather_add_p.def_transpose(_gather_transpose)


# ------------------------------------------------------------------ select_and_scatter_add


def _scatter_abstract_eval(
    source, operand, *, select_prim, window_dimensions, window_strides, padding
):
    ones = (1,) * operand.ndim
    check_window(
        "select_and_scatter_add",
        operand.shape,
        window_dimensions,
        window_strides,
        padding,
        ones,
        ones,
    )
    expected = reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides, padding)
    if source.shape != expected:
        raise TypeError(
            f"select_and_scatter_add source shape {source.shape} must be the shape of the "
            f"windows of the operand, {expected}."
        )
    return ShapedArray(operand.shape, source.dtype)


def _scatter_regions(op, ctx, select_scalar, scatter_scalar, select_body, scatter_body):
    for region, scalar, body in (
        (op.select, select_scalar, select_body),
        (op.scatter, scatter_scalar, scatter_body),
    ):
        t = ctx.ir_type(scalar)
        block = region.blocks.append(t, t)
        with ir.InsertionPoint(block):
            hlo.return_(list(body(*block.arguments)))


def _scatter_lowering(
    ctx, source, operand, *, select_prim, window_dimensions, window_strides, padding
):
    s_aval, x_aval = ctx.avals_in
    s_scalar, x_scalar = ShapedArray((), s_aval.dtype), ShapedArray((), x_aval.dtype)
    init = ctx.constant(np.zeros((), s_aval.dtype), s_scalar)
    op = hlo.SelectAndScatterOp(
        ctx.ir_type(ctx.avals_out[0]),
        operand,
        source,
        init,
        window_dimensions=list(window_dimensions),
        window_strides=list(window_strides),
        padding=_pads_attr(padding),
    )
    direction = _direction(select_prim)
    _scatter_regions(
        op,
        ctx,
        x_scalar,
        s_scalar,
        lambda a, b: [compare_hlo(a, b, direction, x_aval.dtype)],
        lambda a, b: [hlo.add(a, b)],
    )
    return [op.result]


select_and_scatter_add_p = standard_primitive(
    "select_and_scatter_add", _scatter_abstract_eval, _scatter_lowering
)
select_and_scatter_add_p.def_sharding(lambda source, operand, **_: spec_of(operand))


def _scatter_batching(axis_data, vals, dims, **params):
    source, operand = _front(axis_data, vals, dims)
    return select_and_scatter_add_p.bind(source, operand, **with_batch_window(params, 0)), 0


select_and_scatter_add_p.def_batching(_scatter_batching)
_linear_in_first(select_and_scatter_add_p)


def _scatter_transpose(
    ct, source, operand, *, select_prim, window_dimensions, window_strides, padding
):
    if reverse.is_undefined_primal(operand):
        raise ValueError("select_and_scatter_add is not linear in its operand")
    ones = (1,) * len(window_dimensions)
    out = select_and_gather_add_p.bind(
        ad.instantiate_zeros(ct),
        operand,
        select_prim=select_prim,
        window_dimensions=window_dimensions,
        window_strides=window_strides,
        padding=padding,
        base_dilation=ones,
        window_dilation=ones,
    )
    return [out, None]


select_and_scatter_add_p.def_transpose(_scatter_transpose)


# ------------------------------------------------------------------ select_and_scatter


def _general_scatter_abstract_eval(
    operand,
    source,
    init_value,
    *,
    select_jaxpr,
    select_consts,
    scatter_jaxpr,
    scatter_consts,
    window_dimensions,
    window_strides,
    padding,
):
    return _scatter_abstract_eval(
        source,
        operand,
        select_prim=None,
        window_dimensions=window_dimensions,
        window_strides=window_strides,
        padding=padding,
    )


def _general_scatter_lowering(
    ctx,
    operand,
    source,
    init_value,
    *,
    select_jaxpr,
    select_consts,
    scatter_jaxpr,
    scatter_consts,
    window_dimensions,
    window_strides,
    padding,
):
    x_aval, s_aval, _ = ctx.avals_in
    op = hlo.SelectAndScatterOp(
        ctx.ir_type(ctx.avals_out[0]),
        operand,
        source,
        init_value,
        window_dimensions=list(window_dimensions),
        window_strides=list(window_strides),
        padding=_pads_attr(padding),
    )
    mctx = ctx.module_context
    _scatter_regions(
        op,
        ctx,
        ShapedArray((), x_aval.dtype),
        ShapedArray((), s_aval.dtype),
        lambda *xs: lower_jaxpr_body(mctx, select_jaxpr, select_consts, list(xs)),
        lambda *xs: lower_jaxpr_body(mctx, scatter_jaxpr, scatter_consts, list(xs)),
    )
    return [op.result]


select_and_scatter_p = Primitive("select_and_scatter")
select_and_scatter_p.def_abstract_eval(_general_scatter_abstract_eval)
select_and_scatter_p.def_lowering(_general_scatter_lowering)
select_and_scatter_p.def_sharding(lambda operand, source, init_value, **_: spec_of(operand))
def_standard_impl(select_and_scatter_p)
