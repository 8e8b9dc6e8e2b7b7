"""Test-local primitives (lax does not exist at this layer) and operator forwarding."""

from __future__ import annotations

import numpy as np
import pytest

from lamina.interpreters import tracing
from lamina.ir import Primitive, ShapedArray, dtypes


def _binary_aval(x, y, **_):
    dtype, weak = dtypes.result_type(x, y, return_weak_type_flag=True)
    shape = np.broadcast_shapes(x.shape, y.shape)
    return ShapedArray(shape, dtype, weak_type=weak)


def _binary(name, fn):
    prim = Primitive(name, registry=None)
    prim.def_abstract_eval(_binary_aval)
    prim.def_impl(lambda x, y: fn(np.asarray(x), np.asarray(y)))
    return prim


def _unary(name, fn):
    prim = Primitive(name, registry=None)
    prim.def_abstract_eval(lambda x: x)
    prim.def_impl(lambda x: fn(np.asarray(x)))
    return prim


add_p = _binary("add", np.add)
mul_p = _binary("mul", np.multiply)
gt_p = Primitive("gt", registry=None)
gt_p.def_abstract_eval(lambda x, y: ShapedArray(np.broadcast_shapes(x.shape, y.shape), bool))
gt_p.def_impl(lambda x, y: np.greater(x, y))
sin_p = _unary("sin", np.sin)
neg_p = _unary("neg", np.negative)

reduce_sum_p = Primitive("reduce_sum", registry=None)
reduce_sum_p.def_abstract_eval(
    lambda x, *, axes: ShapedArray(
        tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype, x.weak_type
    )
)
reduce_sum_p.def_impl(lambda x, *, axes: np.sum(x, axis=axes))

split_p = Primitive("split2", registry=None)  # multiple results
split_p.multiple_results = True
split_p.def_abstract_eval(lambda x: [x, x])
split_p.def_impl(lambda x: [x, x])

nothing_p = Primitive("no_rules", registry=None)


def add(x, y):
    return add_p.bind(x, y)


def mul(x, y):
    return mul_p.bind(x, y)


def sin(x):
    return sin_p.bind(x)


def reduce_sum(x, axes=None):
    shape = np.shape(x)
    return reduce_sum_p.bind(x, axes=tuple(range(len(shape))) if axes is None else axes)


METHODS = {
    "__add__": add,
    "__radd__": lambda x, y: add(y, x),
    "__mul__": mul,
    "__rmul__": lambda x, y: mul(y, x),
    "__neg__": neg_p.bind,
    "__gt__": gt_p.bind,
    "sum": reduce_sum,
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
