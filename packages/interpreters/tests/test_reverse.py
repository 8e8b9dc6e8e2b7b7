"""Reverse mode on test-local primitives (lax is a higher layer): partial evaluation in
linearize, backward_pass, vjp/grad/value_and_grad, composition with jit, symbolic zero
cotangents, check_grads in reverse mode, and JAX's errors."""

import inspect

import jit_prims
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina.interpreters import Array, hessian, jacfwd, jacrev, jit, make_jaxpr
from lamina.interpreters.test_util import check_grads
from lamina.interpreters.transformations.ad import defjvp2, deflinear
from lamina.interpreters.transformations.partial_eval import linearize_flat
from lamina.interpreters.transformations.reverse import (
    UndefinedPrimal,
    backward_pass,
    grad,
    is_undefined_primal,
    linearize,
    value_and_grad,
    vjp,
)
from lamina.ir import MissingRuleError, ShapedArray, dtypes

add, mul, sin, neg = jit_prims.add, jit_prims.mul, jit_prims.sin, jit_prims.neg_p.bind
cos_p = jit_prims._unary("cos", hlo.cosine)
cos = cos_p.bind
defjvp2(jit_prims.sin_p, lambda t, ans, x: mul(t, cos(x)))
defjvp2(cos_p, lambda t, ans, x: neg(mul(t, sin(x))))
defjvp2(jit_prims.mul_p, lambda t, ans, x, y: mul(t, y), lambda t, ans, x, y: mul(x, t))
deflinear(jit_prims.add_p)
deflinear(jit_prims.neg_p)


def _mul_transpose(ct, x, y):
    if is_undefined_primal(x):
        return [mul(ct, y), None]
    return [None, mul(x, ct)]


jit_prims.mul_p.def_transpose(_mul_transpose)
jit_prims.add_p.def_transpose(lambda ct, x, y: [ct, ct])
jit_prims.neg_p.def_transpose(lambda ct, x: [neg(ct)])

F32 = ShapedArray((), np.float32)


def f(x):
    return mul(sin(x), x)


def df(x):
    return np.cos(x) * x + np.sin(x)


def test_grad_and_value_and_grad():
    x = np.float32(0.8)
    np.testing.assert_allclose(grad(f)(x), df(x), rtol=1e-6)
    v, g = value_and_grad(f)(x)
    np.testing.assert_allclose(v, np.sin(x) * x, rtol=1e-6)
    np.testing.assert_allclose(g, df(x), rtol=1e-6)


def test_higher_order():
    x = np.float32(0.8)
    np.testing.assert_allclose(grad(grad(f))(x), 2 * np.cos(x) - x * np.sin(x), rtol=1e-5)
    check_grads(f, (np.linspace(-1, 1, 4).astype(np.float32),), order=2, modes="rev")
    check_grads(f, (np.linspace(-1, 1, 4).astype(np.float32),), order=2)


def test_linearize_splits_known_from_unknown():
    x = np.float32(0.8)
    y, f_jvp = linearize(f, x)
    np.testing.assert_allclose(y, np.sin(x) * x, rtol=1e-6)
    np.testing.assert_allclose(f_jvp(np.float32(2.0)), 2 * df(x), rtol=1e-6)
    text = str(make_jaxpr(f_jvp)(np.float32(1.0)))
    assert "sin" not in text and "cos" not in text, text  # residuals, computed once
    _, linear = linearize_flat(lambda x: [f(x)], [x], [F32])
    assert all(e.primitive.name in ("mul", "add_any") for e in linear.jaxpr.eqns)


def test_backward_pass_directly():
    _, linear = linearize_flat(lambda x, y: [mul(x, y), neg(x)], [np.float32(2), np.float32(3)],
                               [F32, F32])  # fmt: skip
    cts = backward_pass(
        linear.jaxpr, linear.consts, [UndefinedPrimal(F32)] * 2, [np.float32(1), np.float32(10)]
    )
    np.testing.assert_allclose(cts[0], 3 - 10)
    np.testing.assert_allclose(cts[1], 2)


def test_jit_composition():
    x = np.float32(0.3)
    np.testing.assert_allclose(grad(jit(f))(x), df(x), rtol=1e-6)
    np.testing.assert_allclose(jit(grad(f))(x), df(x), rtol=1e-6)
    np.testing.assert_allclose(grad(jit(grad(f)))(x), 2 * np.cos(x) - x * np.sin(x), rtol=1e-5)
    text = str(make_jaxpr(grad(jit(f)))(x))
    assert text.count("sin") == 1 and text.count("jit[") == 2, text


def test_symbolic_zero_cotangents():
    def g(x, y):
        return sin(x)

    jaxpr = make_jaxpr(grad(g, argnums=(0, 1)))(np.float32(1), np.float32(2))
    y = jaxpr.jaxpr.invars[1]
    assert not any(y in e.invars for e in jaxpr.jaxpr.eqns), str(jaxpr)
    _, gy = grad(g, argnums=(0, 1))(np.float32(1), np.float32(2))
    np.testing.assert_allclose(gy, 0.0)


def test_vjp_int_input_and_aux():
    out, pullback, aux = vjp(lambda x, n: (mul(x, x), n), np.float32(3), np.int32(2), has_aux=True)
    gx, gn = pullback(np.float32(1))
    np.testing.assert_allclose(gx, 6.0)
    assert np.asarray(gn).dtype == dtypes.float0
    assert int(aux) == 2
    np.testing.assert_allclose(out, 9.0)


def test_errors():
    with pytest.raises(TypeError, match=r"Output had shape: \(2,\)\."):
        grad(sin)(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="use vjp or set allow_int to True"):
        grad(sin)(np.int32(1))
    cube_p = jit_prims._unary("twice", hlo.negate)
    deflinear(cube_p)
    with pytest.raises(MissingRuleError, match=r"Transpose rule .* for 'twice' not implemented"):
        grad(cube_p.bind)(np.float32(1))


def test_gradient_that_is_the_seed_is_an_array():
    # recorded from JAX 0.10.2: an output that is an input still gives an Array,
    # weakly typed where the input was
    g = grad(lambda x: x)(1.0)
    assert isinstance(g, Array) and g.weak_type and g.dtype == np.float32
    gx, gy = grad(lambda x, y: x, argnums=(0, 1))(np.float32(1.0), 2.0)
    assert isinstance(gx, Array) and not gx.weak_type
    assert isinstance(gy, Array) and gy.weak_type and float(gy) == 0.0


def test_transformed_functions_take_the_name_of_the_function():
    # recorded from JAX 0.10.2: jit(grad(loss)) is named jit(loss)
    def loss(x):
        return x

    for transform in (grad, value_and_grad, jacfwd, jacrev, hessian):
        transformed = transform(loss)
        assert transformed.__name__ == transformed.__qualname__.split(".")[-1] == "loss"
        assert transformed.__module__ == loss.__module__
    assert inspect.unwrap(grad(loss)) is loss
