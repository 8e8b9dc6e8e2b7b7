"""Windowed reductions: ``reduce_window_sum``/``max``/``min`` and the general
``reduce_window``, with JAX 0.10.2's params ``window_dimensions``, ``window_strides``,
``padding``, ``base_dilation``, ``window_dilation`` (and ``jaxpr``, ``consts`` for the
general one). The gradient primitives of the max/min windows (``select_and_scatter_add``,
``select_and_gather_add``) are in :mod:`.select_and`.
"""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters import Tracer, ad, batching, def_standard_impl, lower_jaxpr_body
from lamina.interpreters.mlir import hlo
from lamina.ir import ClosedJaxpr, Primitive, ShapedArray, dtypes, resized_spec, tree_util
from lamina.lax.base import primitives as prims
from lamina.lax.base.operands import ANY, NUMBER, aval_of, check_dtype, standard_primitive
from lamina.lax.base.primitives import max_identity, min_identity, reduce_region
from lamina.lax.base.reduce import pair_jvp_jaxpr, scalar_jaxpr
from lamina.lax.base.reshaping import pad
from lamina.lax.convolution.dimension_numbers import padtype_to_pads
from lamina.lax.windowed.select_and import select_and_gather_add
from lamina.lax.windowed.windows import (
    check_window,
    dilated_size,
    reduce_window_shape_tuple,
    window_attrs,
    with_batch_window,
)

__all__ = [
    "reduce_window",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_sum_p",
]


# ------------------------------------------------------------------ the monoid windows


def _window_primitive(name, accepted, identity, combine):
    def abstract_eval(
        x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation
    ):
        check_dtype(name, x.dtype, accepted if accepted is ANY else (accepted,))
        check_window(
            "reduce_window",
            x.shape,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        )
        shape = reduce_window_shape_tuple(
            x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
        )
        return ShapedArray(shape, x.dtype, weak_type=x.weak_type)

    def lowering(ctx, x, **params):
        aval_out = ctx.avals_out[0]
        scalar = ShapedArray((), aval_out.dtype)
        init = ctx.constant(identity(aval_out.dtype), scalar)
        op = hlo.ReduceWindowOp([ctx.ir_type(aval_out)], [x], [init], **window_attrs(**params))
        reduce_region(op, [ctx.ir_type(scalar)], lambda a, b: [getattr(hlo, combine)(a, b)])
        return list(op.results)

    prim = standard_primitive(name, abstract_eval, lowering)
    prim.def_batching(_window_batching(prim))
    prim.def_sharding(
        lambda x, **params: resized_spec(x, abstract_eval(x, **params).shape, "reduce_window")
    )
    return prim


def _window_batching(prim):
    def rule(axis_data, vals, dims, **params):
        (x,), (d,) = vals, dims
        return prim.bind(x, **with_batch_window(params, d)), d

    return rule


reduce_window_sum_p = _window_primitive(
    "reduce_window_sum", NUMBER, lambda d: np.zeros((), d), "add"
)
reduce_window_max_p = _window_primitive("reduce_window_max", ANY, max_identity, "maximum")
reduce_window_min_p = _window_primitive("reduce_window_min", ANY, min_identity, "minimum")


# ------------------------------------------------------------------ the general window


def _general_abstract_eval(
    *avals,
    jaxpr,
    consts,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    n = len(avals) // 2
    operands, inits = avals[:n], avals[n:]
    if any(o.dtype != i.dtype for o, i in zip(operands, inits, strict=True)):
        raise TypeError(
            "reduce_window operand dtypes should match corresponding initial value dtypes, "
            f"got operands={list(operands)} and initial_values={list(inits)}"
        )
    if len({o.shape for o in operands}) > 1:
        raise TypeError(
            f"reduce_window got operands of different shapes: {[o.shape for o in operands]}"
        )
    shape = operands[0].shape
    check_window(
        "reduce_window",
        shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    out = reduce_window_shape_tuple(
        shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    return [ShapedArray(out, o.dtype) for o in operands]


def _general_lowering(ctx, *args, jaxpr, consts, **params):
    n = len(args) // 2
    op = hlo.ReduceWindowOp(
        ctx.ir_types(ctx.avals_out), list(args[:n]), list(args[n:]), **window_attrs(**params)
    )
    scalars = [ShapedArray((), a.dtype) for a in ctx.avals_out]
    mctx = ctx.module_context
    reduce_region(
        op, ctx.ir_types(scalars), lambda *xs: lower_jaxpr_body(mctx, jaxpr, consts, list(xs))
    )
    return list(op.results)


reduce_window_p = Primitive("reduce_window")
reduce_window_p.multiple_results = True
reduce_window_p.def_abstract_eval(_general_abstract_eval)
reduce_window_p.def_lowering(_general_lowering)


@reduce_window_p.def_sharding
def _general_sharding(*avals, **params):
    outs = _general_abstract_eval(*avals, **params)
    return [resized_spec(a, o.shape, "reduce_window") for a, o in zip(avals, outs, strict=False)]


def_standard_impl(reduce_window_p)


def _general_batching(axis_data, vals, dims, **params):
    n = len(vals) // 2
    if any(d is not batching.not_mapped for d in dims[n:]):
        raise NotImplementedError(
            "reduce_window with batched initial values is not supported under vmap"
        )
    operands = [
        batching.bdim_at_front(v, d, axis_data.size)
        for v, d in zip(vals[:n], dims[:n], strict=True)
    ]
    outs = reduce_window_p.bind(*operands, *vals[n:], **with_batch_window(params, 0))
    return outs, [0] * n


reduce_window_p.def_batching(_general_batching)


def _general_jvp(primals, tangents, *, jaxpr, consts, **params):
    """Windows of (primal, tangent) pairs folded by the JVP of the computation
    (forward mode only, as in JAX)."""
    n = len(primals) // 2
    diff = [dtypes.issubdtype(aval_of(x).dtype, np.inexact) for x in primals[:n]]
    pair = pair_jvp_jaxpr(ClosedJaxpr(jaxpr, list(consts)), diff)
    xs_t = [ad.instantiate_zeros(t) for t, d in zip(tangents[:n], diff, strict=True) if d]
    init_t = [ad.instantiate_zeros(t) for t, d in zip(tangents[n:], diff, strict=True) if d]
    outs = reduce_window_p.bind(
        *primals[:n],
        *xs_t,
        *primals[n:],
        *init_t,
        jaxpr=pair.jaxpr,
        consts=tuple(pair.consts),
        **params,
    )
    it = iter(outs[n:])
    out_t = [
        next(it) if d else ad.Zero(ad.tangent_aval(aval_of(o)))
        for o, d in zip(outs[:n], diff, strict=True)
    ]
    return outs[:n], out_t


reduce_window_p.def_jvp(_general_jvp)


# ------------------------------------------------------------------ the function


def _ints(xs):
    return tuple(operator.index(x) for x in xs)


def _monoid_window(computation, init_values):
    """The windowed primitive that ``computation`` from ``init_values`` is (add from 0,
    max/min from their identities), as JAX recognises them; None otherwise."""
    if len(init_values) != 1 or isinstance(init_values[0], Tracer):
        return None
    (init,) = init_values
    if np.shape(init) != ():
        return None
    dtype, value = aval_of(init).dtype, np.asarray(init)
    table = [
        ("add", lambda: 0, reduce_window_sum_p),
        ("max", lambda: max_identity(dtype), reduce_window_max_p),
        ("min", lambda: min_identity(dtype), reduce_window_min_p),
    ]
    for name, identity, prim in table:
        if computation is getattr(prims, name, None):
            return prim if np.equal(value, identity()) else None
    return None


def window_params(
    shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """Defaults filled in and string padding turned into pairs."""
    ndim = len(window_dimensions)
    window_dimensions = _ints(window_dimensions)
    window_strides = (1,) * ndim if window_strides is None else _ints(window_strides)
    if isinstance(padding, str):
        padding = padtype_to_pads(shape, window_dimensions, window_strides, padding)
    padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    return dict(
        window_dimensions=window_dimensions,
        window_strides=window_strides,
        padding=padding,
        base_dilation=(1,) * ndim if base_dilation is None else _ints(base_dilation),
        window_dilation=(1,) * ndim if window_dilation is None else _ints(window_dilation),
    )


def reduce_window(
    operand,
    init_value,
    computation,
    window_dimensions,
    window_strides=None,
    padding="VALID",
    base_dilation=None,
    window_dilation=None,
):
    """Folds each window of ``operand`` (an array or a pytree of them) with
    ``computation`` from ``init_value``; windows of ``window_dimensions`` move by
    ``window_strides`` over the padded (``padding``: pairs, or ``'SAME'``/``'VALID'``)
    and dilated operand."""
    flat_operands, operand_tree = tree_util.tree_flatten(operand)
    flat_inits, init_tree = tree_util.tree_flatten(init_value)
    if operand_tree != init_tree:
        raise ValueError(
            "Cannot reduce a list of operands with init values of a different structure: "
            f"{operand_tree} vs. {init_tree}"
        )
    if not flat_operands:
        raise ValueError("reduce_window must have at least one operand.")
    shape = aval_of(flat_operands[0]).shape
    params = window_params(
        shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    monoid = _monoid_window(computation, flat_inits)
    if monoid is not None:
        out = monoid.bind(flat_operands[0], **params)
        return tree_util.tree_unflatten(operand_tree, [out])

    scalars = [ShapedArray((), aval_of(x).dtype) for x in flat_inits]
    closed = scalar_jaxpr(computation, init_tree, scalars, "reduce_window")
    outs = reduce_window_p.bind(
        *flat_operands, *flat_inits, jaxpr=closed.jaxpr, consts=tuple(closed.consts), **params
    )
    return tree_util.tree_unflatten(operand_tree, outs)


# ------------------------------------------------------------------ differentiation

ad.deflinear(reduce_window_sum_p)


def _reduce_window_sum_transpose(
    ct, operand, *, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """Input element ``i`` sits at ``lo + i * base_dilation`` of the padded operand and
    output ``o`` sums positions ``o * stride + k * window_dilation``; so the cotangent,
    spread out by the strides and padded so that window ``k`` of input ``i`` lands on
    it, summed over windows that move by ``base_dilation``, gives the input's."""

    in_shape = operand.aval.shape
    out_shape = aval_of(ct).shape
    config = []
    for n_in, n_out, w, s, (lo, _), bd, wd in zip(
        in_shape,
        out_shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        strict=True,
    ):
        before = (w - 1) * wd - lo
        needed = (n_in - 1) * bd + (w - 1) * wd + 1
        after = needed - before - dilated_size(n_out, s)
        config.append((before, after, s - 1))
    padded = pad(ct, np.zeros((), aval_of(ct).dtype), config)
    ndim = len(in_shape)
    out = reduce_window_sum_p.bind(
        padded,
        window_dimensions=window_dimensions,
        window_strides=base_dilation,
        padding=((0, 0),) * ndim,
        base_dilation=(1,) * ndim,
        window_dilation=window_dilation,
    )
    return [out]


reduce_window_sum_p.def_transpose(_reduce_window_sum_transpose)


def _chooser_jvp(prim, select_name):
    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, **params)
        return ans, select_and_gather_add(ad.instantiate_zeros(t), x, select_name, **params)

    prim.def_jvp(jvp)


_chooser_jvp(reduce_window_max_p, "ge")
_chooser_jvp(reduce_window_min_p, "le")
