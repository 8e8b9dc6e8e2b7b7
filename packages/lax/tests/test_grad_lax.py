"""Reverse mode over the lax primitives: gradients against numerical differences
(orders 1 and 2), grad composed with jit and vmap, an MLP against a hand derivation,
symbolic zero cotangents, and JAX's errors."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import (
    ad,
    def_standard_impl,
    enable_x64,
    grad,
    jit,
    linearize,
    make_jaxpr,
    value_and_grad,
    vjp,
    vmap,
)
from lamina.interpreters.mlir import hlo
from lamina.interpreters.test_util import check_grads, numerical_jvp
from lamina.ir import MissingRuleError, Primitive, dtypes

rng = np.random.default_rng(2)


def f32(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def positive(*shape):
    return f32(*shape, low=0.5, high=2.0)


def total(x):
    """A scalar loss of any array: sum(x * w) for a fixed weight."""
    shape = np.shape(x) if not hasattr(x, "aval") else x.aval.shape
    w = np.cos(np.arange(int(np.prod(shape)), dtype=np.float32) + 1).reshape(shape)
    return lax.reduce_sum(lax.mul(x, w), tuple(range(len(shape))))


def check_grad_numeric(fun, args, atol=2e-2, rtol=2e-2):
    """grad of total(fun(*args)) w.r.t. every argument against central differences."""
    loss = lambda *xs: total(fun(*xs))  # noqa: E731
    g = grad(loss, argnums=tuple(range(len(args))))(*args)
    for i, x in enumerate(args):
        for _ in range(2):
            t = [np.zeros_like(a) for a in args]
            t[i] = rng.standard_normal(np.shape(x)).astype(np.float32)
            want = numerical_jvp(loss, tuple(args), tuple(t), 1e-3)
            got = float(np.sum(np.asarray(g[i], np.float64) * t[i]))
            np.testing.assert_allclose(got, want, atol=atol, rtol=rtol)


CASES = [
    ("neg", lax.neg, (f32(3, 2),)),
    ("sin", lax.sin, (f32(3, 2),)),
    ("cos", lax.cos, (f32(3),)),
    ("exp", lax.exp, (f32(4),)),
    ("log", lax.log, (positive(4),)),
    ("tanh", lax.tanh, (f32(2, 3),)),
    ("sqrt", lax.sqrt, (positive(5),)),
    ("add", lax.add, (f32(3, 2), f32(3, 2))),
    ("add_scalar", lax.add, (f32(3, 2), f32())),
    ("add_stretch", lax.add, (f32(1, 2), f32(3, 1))),
    ("sub", lax.sub, (f32(), f32(4))),
    ("mul", lax.mul, (f32(3, 2), f32(3, 2))),
    ("mul_scalar", lax.mul, (f32(3), f32())),
    ("div", lax.div, (f32(3, 2), positive(3, 2))),
    ("div_scalar", lax.div, (f32(), positive(4))),
    ("max", lax.max, (f32(3, 2), f32(3, 2))),
    ("min", lax.min, (f32(4), f32(4))),
    ("reduce_sum", lambda x: lax.reduce_sum(x, (0, 2)), (f32(2, 3, 4),)),
    ("reduce_max", lambda x: lax.reduce_max(x, (1,)), (f32(3, 4),)),
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)), (f32(3),)),
    ("broadcast_stretch", lambda x: lax.broadcast_in_dim(x, (3, 4), (0, 1)), (f32(3, 1),)),
    ("reshape", lambda x: lax.reshape(x, (3, 4)), (f32(2, 6),)),
    ("reshape_dims", lambda x: lax.reshape(x, (6, 2), (1, 0)), (f32(2, 6),)),
    ("transpose", lambda x: lax.transpose(x, (2, 0, 1)), (f32(2, 3, 4),)),
    ("select_n", lambda x, y: lax.select_n(lax.gt(x, y), x, y), (f32(5), f32(5))),
    ("dot", lax.dot, (f32(3, 4), f32(4, 2))),
    ("dot_mv", lax.dot, (f32(3, 4), f32(4))),
    ("dot_vv", lax.dot, (f32(4), f32(4))),
    (
        "dot_general_batch",
        lambda a, b: lax.dot_general(a, b, (((1,), (2,)), ((0,), (0,)))),
        (f32(2, 3, 4), f32(2, 5, 3)),
    ),
    (
        "dot_general_odd",
        lambda a, b: lax.dot_general(a, b, (((2, 0), (0, 3)), ((1,), (2,)))),
        (f32(4, 2, 3, 5), f32(3, 6, 2, 4)),
    ),
]


@pytest.mark.parametrize("name,fun,args", CASES, ids=[c[0] for c in CASES])
def test_grad_numerical(name, fun, args):
    check_grad_numeric(fun, args)


@pytest.mark.parametrize("name,fun,args", CASES, ids=[c[0] for c in CASES])
def test_check_grads_rev(name, fun, args):
    order = 1 if name in ("max", "min", "reduce_max", "select_n") else 2
    check_grads(fun, args, order=order, modes=("rev",))


def test_convert_element_type_x64():
    with enable_x64():
        x = np.linspace(0.1, 0.9, 4).astype(np.float32)
        f = lambda x: lax.reduce_sum(lax.sin(lax.convert_element_type(x, np.float64)), (0,))  # noqa: E731
        g = grad(f)(x)
        assert np.asarray(g).dtype == np.float32
        np.testing.assert_allclose(g, np.cos(x.astype(np.float64)), rtol=1e-6)
        check_grads(lambda x: lax.convert_element_type(x, np.float64), (x,), order=2, modes="rev")


def test_grad_of_jit_and_jit_of_grad():
    def f(x, y):
        return lax.reduce_sum(lax.mul(lax.sin(x), y), (0,))

    x, y = f32(4), f32(4)
    want = (np.cos(x) * y, np.sin(x))
    for g in (grad(jit(f), (0, 1)), jit(grad(f, (0, 1))), jit(grad(jit(f), (0, 1)))):
        gx, gy = g(x, y)
        np.testing.assert_allclose(gx, want[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gy, want[1], rtol=1e-5, atol=1e-6)


def test_grad_of_jit_is_split():
    """grad(jit(f)) runs the primal jit once and a transposed jit, not the primal twice."""

    def f(x):
        return lax.reduce_sum(lax.exp(lax.sin(x)), (0,))

    text = str(make_jaxpr(grad(jit(f)))(f32(3)))
    assert text.count("jit[") == 2 and text.count("name=f") == 2, text
    assert text.count("exp") == 1, text


# Printed by JAX 0.10.2 for make_jaxpr(grad(jit(lambda x: sin(x) * x)))(1.0).
GRAD_OF_JIT_TEXT = """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = mul c a
        in (_, b, c) }
    ] a
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] e:f32[]. let
          f:f32[] = mul c e
          g:f32[] = mul e a
          h:f32[] = mul g b
          d:f32[] = add_any f h
        in (d,) }
    ] b a c 1.0:f32[]
  in (d,) }"""


def test_grad_of_jit_prints_as_jax_does():
    f = jit(lambda x: lax.mul(lax.sin(x), x))
    assert str(make_jaxpr(grad(f))(1.0)) == GRAD_OF_JIT_TEXT


def test_second_order():
    f = lambda x: lax.mul(lax.sin(x), x)  # noqa: E731
    x = np.float32(0.7)
    np.testing.assert_allclose(grad(grad(f))(x), 2 * np.cos(x) - x * np.sin(x), rtol=1e-5)
    np.testing.assert_allclose(grad(grad(grad(f)))(x), -3 * np.sin(x) - x * np.cos(x), rtol=1e-4)
    np.testing.assert_allclose(grad(jit(grad(f)))(x), 2 * np.cos(x) - x * np.sin(x), rtol=1e-5)


def test_vmap_of_grad_per_example():
    w = f32(3)

    def loss(w, x):
        return lax.tanh(lax.reduce_sum(lax.mul(w, x), (0,)))

    xs = f32(5, 3)
    per_example = vmap(grad(loss), in_axes=(None, 0))(w, xs)
    want = (1 - np.tanh(xs @ w) ** 2)[:, None] * xs
    np.testing.assert_allclose(per_example, want, rtol=1e-5, atol=1e-6)


def test_mlp_against_numpy():
    w1, b1, w2, b2 = f32(4, 8), f32(8), f32(8, 1), f32(1)
    x, y = f32(16, 4), f32(16, 1)

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = lax.tanh(lax.add(lax.dot(x, w1), lax.broadcast_in_dim(b1, (16, 8), (1,))))
        out = lax.add(lax.dot(h, w2), lax.broadcast_in_dim(b2, (16, 1), (1,)))
        err = lax.sub(out, y)
        return lax.div(lax.reduce_sum(lax.mul(err, err), (0, 1)), np.float32(16))

    value, g = value_and_grad(loss)((w1, b1, w2, b2), x, y)
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    d_out = 2 * (out - y) / 16
    d_h = d_out @ w2.T * (1 - h**2)
    want = (x.T @ d_h, d_h.sum(0), h.T @ d_out, d_out.sum(0))
    np.testing.assert_allclose(value, np.mean((out - y) ** 2), rtol=1e-5)
    for got, w in zip(g, want, strict=True):
        np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-5)


def test_symbolic_zeros_emit_no_work():
    def f(x, y):
        return lax.reduce_sum(lax.sin(x), (0,))

    jaxpr = make_jaxpr(grad(f, (0, 1)))(f32(3), f32(3))
    text = str(jaxpr)
    assert "cos" in text
    # y's gradient is a broadcast zero; nothing touches y.
    eqns = jaxpr.jaxpr.eqns
    y_var = jaxpr.jaxpr.invars[1]
    assert not any(y_var in e.invars for e in eqns), text


def test_linearize_is_split():
    f = lambda x: lax.mul(lax.sin(x), lax.exp(x))  # noqa: E731
    x = f32(3)
    y, f_jvp = linearize(f, x)
    np.testing.assert_allclose(y, np.sin(x) * np.exp(x), rtol=1e-5)
    t = f32(3)
    want = (np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x)) * t
    np.testing.assert_allclose(f_jvp(t), want, rtol=1e-5, atol=1e-6)
    text = str(make_jaxpr(f_jvp)(t))
    assert "sin" not in text and "exp" not in text, text


def test_vjp_pytree_and_int_inputs():
    def f(d, n):
        return {"a": lax.mul(d["x"], d["y"]), "b": lax.sin(d["x"])}

    x, y = f32(3), f32(3)
    _, pullback = vjp(f, {"x": x, "y": y}, np.int32(3))
    ct = {"a": np.ones(3, np.float32), "b": np.ones(3, np.float32)}
    (gd, gn) = pullback(ct)
    np.testing.assert_allclose(gd["x"], y + np.cos(x), rtol=1e-5)
    np.testing.assert_allclose(gd["y"], x, rtol=1e-5)
    assert np.asarray(gn).dtype == dtypes.float0


def test_has_aux_and_allow_int():
    def f(x):
        return lax.reduce_sum(lax.mul(x, x), (0,)), {"aux": x}

    x = f32(3)
    g, aux = grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(aux["aux"], x)
    (v, aux2), g2 = value_and_grad(f, has_aux=True)(x)
    np.testing.assert_allclose(v, np.sum(x * x), rtol=1e-5)
    np.testing.assert_allclose(aux2["aux"], x)
    np.testing.assert_allclose(g2, 2 * x, rtol=1e-6)
    g_int = grad(lambda a, b: lax.mul(lax.convert_element_type(a, np.float32), b),
                 allow_int=True)(np.int32(2), np.float32(3))  # fmt: skip
    assert np.asarray(g_int).dtype == dtypes.float0


def test_errors():
    with pytest.raises(
        TypeError,
        match=r"Gradient only defined for scalar-output functions\. Output had shape: \(3,\)\.",
    ):
        grad(lax.sin)(f32(3))
    with pytest.raises(TypeError, match="If you want to use Boolean- or integer-valued inputs, "
                       "use vjp or set allow_int to True"):  # fmt: skip
        grad(lambda x: lax.mul(x, x))(np.int32(1))
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        grad(lax.sin, holomorphic=True)(np.float32(1))
    with pytest.raises(TypeError, match="argnums=3 requires at least 4 positional"):
        grad(lax.sin, argnums=3)(np.float32(1))
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        grad(lambda x: lax.convert_element_type(x, np.int32))(np.float32(1))


def test_missing_transpose_rule_is_named():

    double_p = Primitive("double_no_transpose", registry=None)
    double_p.def_abstract_eval(lambda x: x)
    double_p.def_lowering(lambda ctx, x: [hlo.add(x, x)])
    def_standard_impl(double_p)
    ad.deflinear(double_p)
    with pytest.raises(
        MissingRuleError,
        match=r"Transpose rule \(for reverse-mode differentiation\) for "
        r"'double_no_transpose' not implemented",
    ):
        grad(lambda x: double_p.bind(x))(np.float32(1))
