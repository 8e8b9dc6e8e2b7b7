"""Staging helpers: ``composite`` (a named operation lowered to ``stablehlo.composite``
with its decomposition), ``platform_dependent`` (defined in ``control_flow``), ``empty``
and ``dce_sink``."""

from __future__ import annotations

import functools

import numpy as np

from lamina.interpreters import eval_jaxpr, shaped_abstractify, trace_to_jaxpr
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ClosedJaxpr, Primitive, ShapedArray, dtypes, tree_util
from lamina.lax.base.operands import standard_primitive
from lamina.lax.control_flow.platform_dependent import platform_dependent

__all__ = ["composite", "dce_sink", "dce_sink_p", "empty", "platform_dependent"]


# ---------------------------------------------------------------- composite

composite_p = Primitive("composite")
composite_p.multiple_results = True


def _composite_impl(*args, jaxpr, **_):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _mlir_attribute(value):
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, (int, np.integer)):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))
    if isinstance(value, (float, np.floating)):
        return ir.FloatAttr.get(ir.F32Type.get(), float(value))
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    array = np.asarray(value)
    return ir.DenseElementsAttr.get(array)


def _composite_lowering(ctx, *args, name, attributes, jaxpr, version):
    callee = ctx.lower_function(jaxpr, name)
    attrs = {key: _mlir_attribute(tree_util.tree_unflatten(tree, leaves))
             for key, leaves, tree in attributes}  # fmt: skip
    op = hlo.CompositeOp(
        [ctx.ir_type(a) for a in ctx.avals_out],
        list(args),
        name=ir.StringAttr.get(name),
        composite_attributes=ir.DictAttr.get(attrs),
        decomposition=ir.FlatSymbolRefAttr.get(callee.name.value),
        version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), version),
    )
    return list(op.results)


composite_p.def_impl(_composite_impl)
composite_p.def_abstract_eval(lambda *avals, jaxpr, **_: list(jaxpr.out_avals))
composite_p.def_lowering(_composite_lowering)


def composite(decomposition, name, version=0):
    """``decomposition`` staged as one operation named ``name``, lowered to
    ``stablehlo.composite`` so a backend may replace it; keyword arguments become its
    attributes. Like JAX, it has no derivative or batching rule of its own."""

    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        leaves, tree = tree_util.tree_flatten(args)
        fun = functools.partial(decomposition, **kwargs)
        box = {}

        def flat(*xs):
            out = fun(*tree_util.tree_unflatten(tree, xs))
            flat_out, box["tree"] = tree_util.tree_flatten(out)
            return flat_out

        closed, _ = trace_to_jaxpr(flat, [shaped_abstractify(x) for x in leaves], name)
        attributes = tuple(
            (key, tuple(tree_util.tree_leaves(value)), tree_util.tree_structure(value))
            for key, value in sorted(kwargs.items())
        )
        jaxpr = ClosedJaxpr(closed.jaxpr, closed.consts)
        outs = composite_p.bind(
            *leaves, name=name, attributes=attributes, jaxpr=jaxpr, version=version
        )
        return tree_util.tree_unflatten(box["tree"], outs)

    return call


# ---------------------------------------------------------------- empty and dce_sink


def _empty_lowering(ctx, *, shape, dtype, out_sharding):
    aval = ctx.avals_out[0]
    zero = ctx.constant(np.zeros((), aval.dtype), ShapedArray((), aval.dtype))
    return [hlo.broadcast_in_dim(ctx.ir_type(aval), zero, [])]


empty_p = standard_primitive(
    "empty",
    lambda *, shape, dtype, out_sharding: ShapedArray(tuple(shape), np.dtype(dtype)),
    _empty_lowering,
)


def empty(shape, dtype, *, out_sharding=None):
    """An array whose values are unspecified (zeros here, as XLA on CPU gives)."""
    dtype = dtypes.canonicalize_dtype(dtypes.check_and_canonicalize_user_dtype(dtype, "empty"))
    return empty_p.bind(shape=tuple(int(d) for d in shape), dtype=np.dtype(dtype),
                        out_sharding=out_sharding)  # fmt: skip


dce_sink_p = standard_primitive(
    "dce_sink", lambda *avals, prevent_mlir_dce: [], lambda ctx, *a, **p: []
)
dce_sink_p.multiple_results = True
dce_sink_p.def_batching(lambda axis_data, vals, dims, **p: (dce_sink_p.bind(*vals, **p), []))


def dce_sink(val, *, prevent_mlir_dce=False):
    """Consumes ``val`` so dead-code elimination of the Jaxpr keeps what computes it."""
    dce_sink_p.bind(*tree_util.tree_leaves(val), prevent_mlir_dce=prevent_mlir_dce)
