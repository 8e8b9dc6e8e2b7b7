"""Test-local primitives with every rule the Jacobian tests need (lax is a higher
layer): NumPy impls, JVP, transpose and batching rules, and ``shape_ops`` for vmap.
Operands of binary primitives have one shape (or one is a scalar constant), so
transposes need no unbroadcasting."""

from __future__ import annotations

import numpy as np
import pytest

from lamina.interpreters import batching
from lamina.interpreters.transformations.ad import defjvp2, deflinear
from lamina.interpreters.transformations.reverse import is_undefined_primal
from lamina.ir import Primitive, ShapedArray, dtypes


def make_prim(name, abstract_eval, impl):
    prim = Primitive(name, registry=None)
    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    return prim


def _binary_aval(x, y):
    return ShapedArray(np.broadcast_shapes(x.shape, y.shape), dtypes.result_type(x, y))


add_p = make_prim("add", _binary_aval, lambda x, y: np.add(x, y))
mul_p = make_prim("mul", _binary_aval, lambda x, y: np.multiply(x, y))
sin_p = make_prim("sin", lambda x: x, lambda x: np.sin(x))
cos_p = make_prim("cos", lambda x: x, lambda x: np.cos(x))
neg_p = make_prim("neg", lambda x: x, lambda x: np.negative(x))
reduce_sum_p = make_prim(
    "reduce_sum",
    lambda x, *, axes: ShapedArray(
        tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype
    ),
    lambda x, *, axes: np.sum(x, axis=axes),
)
bcast_p = make_prim(
    "broadcast_in_dim", lambda x, *, shape, dims: ShapedArray(shape, x.dtype), lambda x, *, shape,
    dims: np.broadcast_to(np.expand_dims(x, [i for i in range(len(shape)) if i not in dims]), shape)
)  # fmt: skip
transpose_p = make_prim(
    "transpose",
    lambda x, *, perm: ShapedArray(tuple(x.shape[p] for p in perm), x.dtype),
    lambda x, *, perm: np.transpose(x, perm),
)


def add(x, y):
    return add_p.bind(x, y)


def mul(x, y):
    return mul_p.bind(x, y)


def sin(x):
    return sin_p.bind(x)


def cos(x):
    return cos_p.bind(x)


def neg(x):
    return neg_p.bind(x)


def reduce_sum(x, axes):
    return reduce_sum_p.bind(x, axes=tuple(axes))


def bcast(x, shape, dims):
    return bcast_p.bind(x, shape=tuple(shape), dims=tuple(dims))


def transpose(x, perm):
    return transpose_p.bind(x, perm=tuple(perm))


defjvp2(sin_p, lambda t, ans, x: mul(t, cos(x)))
defjvp2(cos_p, lambda t, ans, x: neg(mul(t, sin(x))))
defjvp2(mul_p, lambda t, ans, x, y: mul(t, y), lambda t, ans, x, y: mul(x, t))
for _p in (add_p, neg_p, reduce_sum_p, bcast_p, transpose_p):
    deflinear(_p)

add_p.def_transpose(lambda ct, x, y: [ct, ct])
neg_p.def_transpose(lambda ct, x: [neg(ct)])
mul_p.def_transpose(
    lambda ct, x, y: [mul(ct, y), None] if is_undefined_primal(x) else [None, mul(x, ct)]
)
reduce_sum_p.def_transpose(
    lambda ct, x, *, axes: [
        bcast(ct, x.aval.shape, [i for i in range(len(x.aval.shape)) if i not in axes])
    ]
)
bcast_p.def_transpose(
    lambda ct, x, *, shape, dims: [reduce_sum(ct, [i for i in range(len(shape)) if i not in dims])]
)
transpose_p.def_transpose(lambda ct, x, *, perm: [transpose(ct, np.argsort(perm))])

for _p in (add_p, mul_p):
    batching.defbroadcasting(_p)
for _p in (sin_p, cos_p, neg_p):
    batching.defvectorized(_p)
batching.defreducer(reduce_sum_p)


def _bcast_batch_rule(axis_data, vals, vdims, *, shape, dims):
    x = batching.moveaxis(vals[0], vdims[0], 0)
    return bcast(x, (axis_data.size, *shape), (0, *(d + 1 for d in dims))), 0


def _transpose_batch_rule(axis_data, vals, vdims, *, perm):
    x = batching.moveaxis(vals[0], vdims[0], 0)
    return transpose(x, (0, *(p + 1 for p in perm))), 0


bcast_p.def_batching(_bcast_batch_rule)
transpose_p.def_batching(_transpose_batch_rule)


@pytest.fixture(autouse=True)
def shape_ops():
    saved = dict(batching.shape_ops)
    batching.shape_ops["transpose"] = transpose
    batching.shape_ops["broadcast_in_dim"] = bcast
    yield
    batching.shape_ops.clear()
    batching.shape_ops.update(saved)
