"""Test-local primitives for jit tests (lax is a higher layer): abstract evaluation,
StableHLO lowering and eager execution through lamina's dispatch."""

from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina.interpreters import tracing
from lamina.interpreters.runtime.dispatch import def_standard_impl
from lamina.ir import Primitive, ShapedArray, dtypes


def _binary_aval(x, y, **_):
    dtype, weak = dtypes.result_type(x, y, return_weak_type_flag=True)
    return ShapedArray(np.broadcast_shapes(x.shape, y.shape), dtype, weak_type=weak)


def _binary(name, op):
    prim = Primitive(name, registry=None)
    prim.def_abstract_eval(_binary_aval)

    def rule(ctx, x, y):
        x, y = ctx.broadcast_to([x, y])
        if ctx.avals_in[0].dtype != ctx.avals_out[0].dtype:
            x = ctx.convert(
                x, ctx.avals_in[0].update(shape=ctx.avals_out[0].shape), ctx.avals_out[0]
            )
        if ctx.avals_in[1].dtype != ctx.avals_out[0].dtype:
            y = ctx.convert(
                y, ctx.avals_in[1].update(shape=ctx.avals_out[0].shape), ctx.avals_out[0]
            )
        return [op(x, y)]

    prim.def_lowering(rule)
    return def_standard_impl(prim)


def _unary(name, op):
    prim = Primitive(name, registry=None)
    prim.def_abstract_eval(lambda x: x)
    prim.def_lowering(lambda ctx, x: [op(x)])
    return def_standard_impl(prim)


add_p = _binary("add", hlo.add)
mul_p = _binary("mul", hlo.multiply)
sin_p = _unary("sin", hlo.sine)
log_p = _unary("log", hlo.log)
neg_p = _unary("neg", hlo.negate)


def add(x, y):
    return add_p.bind(x, y)


def mul(x, y):
    return mul_p.bind(x, y)


def sin(x):
    return sin_p.bind(x)


def log(x):
    return log_p.bind(x)


METHODS = {
    "__add__": add,
    "__radd__": lambda x, y: add(y, x),
    "__mul__": mul,
    "__rmul__": lambda x, y: mul(y, x),
    "__neg__": neg_p.bind,
}


@pytest.fixture
def methods():
    """The table holds these methods only, not those of layers loaded beside the tests."""
    saved = dict(tracing.array_methods)
    tracing.array_methods.clear()
    tracing.array_methods.update(METHODS)
    yield
    tracing.array_methods.clear()
    tracing.array_methods.update(saved)
