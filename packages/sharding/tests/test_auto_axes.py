"""``reshard``, ``auto_axes`` and ``explicit_axes`` over meshes with Explicit axes:
types, Jaxprs, values and errors recorded from JAX 0.10.2."""

import re

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import device_put, grad, jit, make_jaxpr, typeof, vmap
from lamina.ir import ShardingTypeError
from lamina.sharding import (
    AxisType,
    NamedSharding,
    auto_axes,
    explicit_axes,
    get_abstract_mesh,
    make_mesh,
    reshard,
    set_mesh,
)
from lamina.sharding import PartitionSpec as P

X = np.arange(32, dtype=np.float32).reshape(8, 4)


def _matmul(a, b):
    return lax.dot_general(a, b, (([1], [0]), ([], [])))


@pytest.fixture(scope="module")
def auto_mesh():
    return make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def test_reshard_types_and_values(mesh):
    x = device_put(X, NamedSharding(mesh, P("x", None)))
    with set_mesh(mesh):
        # recorded from JAX 0.10.2
        assert str(make_jaxpr(lambda a: reshard(a, P(None, "y")))(x)) == (
            "{ lambda ; a:f32[8@x,4]. let b:f32[8,4@y] = reshard a in (b,) }"
        )
        text = str(make_jaxpr(lambda a: reshard((a, a), (P(None, "y"), P())))(x))
        assert "b:f32[8,4@y] = reshard a" in text and "c:f32[8,4] = reshard a" in text
        assert "b:f32[8@y,4] = reshard a" in str(make_jaxpr(lambda a: reshard(a, P("y")))(x))
        r = reshard(x, P(None, "y"))
        assert str(typeof(r)) == "float32[8,4@y]"
        assert r.sharding == NamedSharding(mesh, P(None, "y"))
        np.testing.assert_array_equal(np.asarray(r), X)
        j = jit(lambda a: reshard(a * 2, P(None, "y")))(x)
        assert j.sharding == NamedSharding(mesh, P(None, "y"))
        np.testing.assert_array_equal(np.asarray(j), X * 2)
    # a NamedSharding needs no mesh context
    r = reshard(x, NamedSharding(mesh, P(None, "y")))
    assert str(typeof(r)) == "float32[8,4@y]"


def test_reshard_errors(mesh):
    x = device_put(X, NamedSharding(mesh, P("x", None)))
    # recorded from JAX 0.10.2
    with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh"):
        reshard(x, P(None, "y"))
    with (
        set_mesh(mesh),
        pytest.raises(
            ValueError,
            match=r"Reshard should only be used with out_shardings which are non-None and have "
            r"a non-empty mesh\. Got sharding None\.",
        ),
    ):
        reshard(x, None)
    # recorded from JAX 0.10.2
    with set_mesh(mesh):
        with pytest.raises(ValueError, match=re.escape("Resource axis: z of P('z',) is not found")):
            make_jaxpr(lambda a: reshard(a, P("z")))(x)
        indivisible = re.escape(
            "Sharding spec ('x', 'y') implies that array axis 1 is partitioned 8 times, but does "
            "not evenly divide the dimension size 4. Got shape: (8, 4) and sharding "
            "NamedSharding(mesh=AbstractMesh('x': 2, 'y': 4,"
        )
        with pytest.raises(ValueError, match=indivisible):
            make_jaxpr(lambda a: reshard(a, P(None, ("x", "y"))))(x)
        with pytest.raises(ValueError, match=indivisible):
            reshard(x, P(None, ("x", "y")))
        with pytest.raises(AssertionError, match=re.escape("(2, P(None, None, 'y'))")):
            make_jaxpr(lambda a: reshard(a, P(None, None, "y")))(x)


def test_reshard_grad_and_vmap(mesh):
    x = device_put(X, NamedSharding(mesh, P("x", None)))
    with set_mesh(mesh):
        f = grad(lambda a: lax.reduce_sum(reshard(a, P(None, "y")), (0, 1)))
        # recorded from JAX 0.10.2: the seed is typed as the output, the cotangent goes
        # back to the operand's layout
        assert str(make_jaxpr(f)(x)) == (
            "{ lambda ; a:f32[8@x,4]. let\n"
            "    b:f32[8,4@y] = reshard a\n"
            "    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n"
            "    c:f32[] = reshard 1.0:f32[]\n"
            "    d:f32[8,4@y] = broadcast_in_dim c\n"
            "    e:f32[8@x,4] = reshard d\n"
            "  in (e,) }"
        )
        g = f(x)
        assert str(typeof(g)) == "float32[8@x,4]"
        np.testing.assert_array_equal(np.asarray(g), np.ones_like(X))
        assert str(make_jaxpr(vmap(lambda a: reshard(a, P("y"))))(x)) == (
            "{ lambda ; a:f32[8@x,4]. let b:f32[8@x,4@y] = reshard a in (b,) }"
        )


def test_auto_axes(mesh):
    x = device_put(X, NamedSharding(mesh, P("x", None)))
    seen = []

    def body(b):
        seen.append((str(typeof(b)), get_abstract_mesh().axis_types))
        return b * 2

    f = auto_axes(body, out_sharding=P(None, "y"))
    with set_mesh(mesh):
        # recorded from JAX 0.10.2
        assert str(make_jaxpr(f)(x)) == (
            "{ lambda ; a:f32[8@x,4]. let\n"
            "    b:f32[8,4] = reshard a\n"
            "    c:f32[8,4] = mul b 2.0:f32[]\n"
            "    d:f32[8,4@y] = reshard c\n"
            "  in (d,) }"
        )
        assert seen[-1] == ("float32[8,4]", (AxisType.Auto, AxisType.Auto))
        for r in (f(x), jit(f)(x)):
            assert str(typeof(r)) == "float32[8,4@y]"
            assert r.sharding == NamedSharding(mesh, P(None, "y"))
            np.testing.assert_array_equal(np.asarray(r), X * 2)
        # out_sharding as a keyword of the call, and the decorator form
        for g in (
            lambda a: auto_axes(lambda b: b + 1)(a, out_sharding=P("x")),
            lambda a: auto_axes(out_sharding=P("x"))(lambda b: b + 1)(a),
        ):
            text = str(make_jaxpr(g)(x))
            assert "b:f32[8,4] = reshard a" in text and "d:f32[8@x,4] = reshard c" in text
        with pytest.raises(TypeError, match="Missing required keyword argument: 'out_sharding'"):
            auto_axes(lambda b: b + 1)(x)
    # no mesh in context nor in out_sharding: the function runs as it is
    assert str(typeof(auto_axes(lambda b: b * 2, out_sharding=P("x", None))(x))) == (
        "float32[8@x,4]"
    )


def test_auto_axes_matmul_and_grad(mesh):
    y = device_put(X, NamedSharding(mesh, P("x", "y")))
    x = device_put(X, NamedSharding(mesh, P("x", None)))
    f = auto_axes(lambda a, b: _matmul(a, lax.transpose(b, (1, 0))), out_sharding=P("x", None))
    with set_mesh(mesh):
        text = str(make_jaxpr(f)(y, y))
        # recorded from JAX 0.10.2
        assert "c:f32[8,4] = reshard a" in text and "d:f32[8,4] = reshard b" in text
        assert "f:f32[8,8] = dot_general" in text and "g:f32[8@x,8] = reshard f" in text
        r = jit(f)(y, y)
        assert str(typeof(r)) == "float32[8@x,8]"
        np.testing.assert_allclose(np.asarray(r), X @ X.T)
        h = grad(lambda a: lax.reduce_sum(auto_axes(lax.sin, out_sharding=P(None, "y"))(a), (0, 1)))
        text = str(make_jaxpr(h)(x))
        for line in ["b:f32[8,4] = reshard a", "e:f32[8,4@y] = reshard c", "f32[8@x,4] = reshard"]:
            assert line in text, text
        np.testing.assert_allclose(np.asarray(h(x)), np.cos(X), rtol=1e-6)


def test_auto_axes_errors(mesh, auto_mesh):
    x = device_put(X, NamedSharding(mesh, P("x", "y")))
    with set_mesh(mesh):
        # recorded from JAX 0.10.2
        with pytest.raises(ValueError, match=r"Context mesh AbstractMesh\('x': 2, 'y': 4, "):
            auto_axes(lambda b: b, out_sharding=NamedSharding(auto_mesh, P("x")))(x)
        g = auto_axes(
            lambda b: _matmul(b, lax.transpose(b, (1, 0))), axes="x", out_sharding=P("x", "y")
        )
        with pytest.raises(ShardingTypeError, match="Contracting dimensions are sharded"):
            make_jaxpr(g)(x)


def test_explicit_axes(auto_mesh):
    x = device_put(X, NamedSharding(auto_mesh, P("x", None)))
    seen = []

    def body(b):
        seen.append(str(typeof(b)))
        return b * 2

    h = explicit_axes(body, in_sharding=P("x", None))
    with set_mesh(auto_mesh):
        # recorded from JAX 0.10.2
        assert str(make_jaxpr(h)(x)) == (
            "{ lambda ; a:f32[8,4]. let\n"
            "    b:f32[8@x,4] = reshard a\n"
            "    c:f32[8@x,4] = mul b 2.0:f32[]\n"
            "    d:f32[8,4] = reshard c\n"
            "  in (d,) }"
        )
        assert seen[-1] == "float32[8@x,4]"
        for r in (jit(h)(x), h(x)):
            assert str(typeof(r)) == "float32[8,4]"
            assert r.sharding.mesh == auto_mesh and r.sharding.spec[0] == "x"
            np.testing.assert_array_equal(np.asarray(r), X * 2)
        s = explicit_axes(lambda b: lax.reduce_sum(b, (0,)), axes="x", in_sharding=P("x", None))
        text = str(make_jaxpr(s)(x))
        assert "c:f32[4] = reduce_sum[axes=(0,) out_sharding=None] b" in text
        with pytest.raises(TypeError, match="Missing required keyword argument: 'in_sharding'"):
            explicit_axes(lambda b: b)(x)
    with pytest.raises(
        ValueError, match=r"Context mesh cannot be empty\. Please use `jax\.set_mesh`"
    ):
        explicit_axes(lambda b: b, in_sharding=P("x"))(x)


def test_switching_some_axes(mesh):
    mixed = make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    x = device_put(X, NamedSharding(mixed, P("x", "y")))
    with set_mesh(mixed):
        # recorded from JAX 0.10.2
        assert str(typeof(x)) == "float32[8@x,4]"
        f = auto_axes(lambda b: b * 2, axes="y", out_sharding=P("x"))
        assert str(make_jaxpr(f)(x)) == (
            "{ lambda ; a:f32[8@x,4]. let b:f32[8@x,4] = mul a 2.0:f32[] in (b,) }"
        )
        g = explicit_axes(lambda b: b * 2, axes="y", in_sharding=P("x", "y"))
        assert str(make_jaxpr(g)(x)) == (
            "{ lambda ; a:f32[8@x,4]. let\n"
            "    b:f32[8@x,4@y] = reshard a\n"
            "    c:f32[8@x,4@y] = mul b 2.0:f32[]\n"
            "    d:f32[8@x,4] = reshard c\n"
            "  in (d,) }"
        )
        np.testing.assert_array_equal(np.asarray(jit(g)(x)), X * 2)


def test_results_typed_over_more_devices_than_the_call_runs_on(mesh):
    f = jit(lambda a: reshard(a * 2, NamedSharding(mesh, P("x"))))
    # recorded from JAX 0.10.2: no mesh in force and the argument on one device
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Length of device assignment 1 is not equal to the size of the mesh 8 of aval "
            "f32[8@x]({Explicit: ('x', 'y')}). Please enter your `jit` into a mesh context via "
            "`jax.set_mesh`."
        ),
    ):
        f(np.ones(8, np.float32))
    with set_mesh(mesh):
        r = f(np.ones(8, np.float32))
    assert str(typeof(r)) == "float32[8@x]" and r.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_array_equal(np.asarray(r), np.full(8, 2.0))
