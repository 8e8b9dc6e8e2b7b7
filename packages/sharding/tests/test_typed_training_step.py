"""A training step of a small MLP over a mesh with Explicit axes: the cotangents are
typed as the parameters (as JAX 0.10.2 types them) and the values are the unsharded
ones (checked against NumPy)."""

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import (
    device_put,
    grad,
    jit,
    jvp,
    linearize,
    make_jaxpr,
    typeof,
    value_and_grad,
    vjp,
)
from lamina.ir import tree_util
from lamina.sharding import NamedSharding, set_mesh
from lamina.sharding import PartitionSpec as P

MM = (([1], [0]), ([], []))
RNG = np.random.RandomState(0)
X, Y = RNG.randn(8, 4).astype(np.float32), RNG.randn(8, 2).astype(np.float32)
W1, B1, W2 = (RNG.randn(*s).astype(np.float32) for s in [(4, 8), (8,), (8, 2)])


def loss(p, x, y):
    h = lax.dot_general(x, p["w1"], MM) + lax.broadcast_in_dim(p["b1"], (8, 8), (1,))
    h = lax.max(h, 0.0)
    out = lax.dot_general(h, p["w2"], MM, out_sharding=P("x", None))
    d = out - y
    return lax.reduce_sum(d * d, (0, 1)) / 16.0


def step(p, x, y):
    value, g = value_and_grad(loss)(p, x, y)
    return value, tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), g


def numpy_step():
    pre = X @ W1 + B1
    h = np.maximum(pre, 0)
    d = h @ W2 - Y
    value = (d * d).sum() / 16
    dout = 2 * d / 16
    dh = (dout @ W2.T) * (pre > 0)
    g = {"w1": X.T @ dh, "b1": dh.sum(0), "w2": h.T @ dout}
    return value, g


@pytest.fixture(scope="module")
def args(mesh):
    def put(v, spec):
        return device_put(v, NamedSharding(mesh, spec))

    params = {"w1": put(W1, P(None, "y")), "b1": put(B1, P("y")), "w2": put(W2, P("y", None))}
    return params, put(X, P("x", None)), put(Y, P("x", None))


# recorded from JAX 0.10.2: each gradient and updated parameter typed as its parameter
TYPES = {"b1": "float32[8@y]", "w1": "float32[4,8@y]", "w2": "float32[8@y,2]"}
SPECS = {"b1": P("y"), "w1": P(None, "y"), "w2": P("y", None)}


def test_jitted_step(mesh, args):
    want_value, want_grads = numpy_step()
    with set_mesh(mesh):
        value, new, g = jit(step)(*args)
    # recorded from JAX 0.10.2
    assert str(typeof(value)) == "float32[]"
    assert value.sharding == NamedSharding(mesh, P())
    np.testing.assert_allclose(float(value), want_value, rtol=1e-5)
    for k, typ in TYPES.items():
        assert str(typeof(g[k])) == typ and str(typeof(new[k])) == typ
        assert new[k].sharding == NamedSharding(mesh, SPECS[k])
        np.testing.assert_allclose(np.asarray(g[k]), want_grads[k], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(new["w1"]), W1 - 0.1 * want_grads["w1"], rtol=1e-5)


def test_eager_gradients(mesh, args):
    _, want_grads = numpy_step()
    with set_mesh(mesh):
        g = grad(loss)(*args)
    for k, typ in TYPES.items():
        # recorded from JAX 0.10.2
        assert str(typeof(g[k])) == typ
        assert g[k].sharding == NamedSharding(mesh, SPECS[k])
        np.testing.assert_allclose(np.asarray(g[k]), want_grads[k], rtol=1e-4, atol=1e-5)


def test_gradient_jaxpr_types(mesh, args):
    with set_mesh(mesh):
        text = str(make_jaxpr(grad(loss))(*args))
    # recorded from JAX 0.10.2 (the lines whose types show how cotangents are split)
    for line in [
        "{ lambda ; a:f32[8@y] b:f32[4,8@y] c:f32[8@y,2] d:f32[8@x,4] e:f32[8@x,2]. let",
        "f:f32[8@x,8@y] = dot_general[dimension_numbers=(([1], [0]), ([], []))] d b",
        "g:f32[8,8@y] = broadcast_in_dim[broadcast_dimensions=(1,)] a",
        "i:f32[8@x,8@y] = max h 0.0:f32[]",
        "f32[8@x,2] = broadcast_in_dim",
        "f32[2,8@y] = dot_general[dimension_numbers=(([0], [0]), ([], []))]",
        "f32[8@y,2] = transpose[permutation=(1, 0)]",
        "f32[8@x,8@y] = dot_general[dimension_numbers=(([1], [1]), ([], []))]",
        "f32[8@y,4] = dot_general[dimension_numbers=(([0], [0]), ([], []))]",
        "f32[4,8@y] = transpose[permutation=(1, 0)]",
    ]:
        assert line in text, (line, text)


def test_vjp_jvp_linearize_types(mesh, args):
    x = args[1]
    with set_mesh(mesh):
        out, f_vjp = vjp(lambda a: lax.sin(a) * 2, x)
        (ct,) = f_vjp(out)
        primal, tangent = jvp(lax.sin, (x,), (x,))
        _, f_lin = linearize(lax.sin, x)
        lin = f_lin(x)
    # recorded from JAX 0.10.2
    for v in (out, ct, primal, tangent, lin):
        assert str(typeof(v)) == "float32[8@x,4]"
    np.testing.assert_allclose(np.asarray(ct), 4 * np.sin(X) * np.cos(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(tangent), np.cos(X) * X, rtol=1e-5, atol=1e-6)
