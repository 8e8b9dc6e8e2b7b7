"""custom_jvp, custom_vjp, checkpoint, vmap and grad of programs whose types carry
shardings over Explicit mesh axes. Types, Jaxprs and errors recorded from JAX 0.10.2;
values checked against NumPy."""

import re

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import (
    checkpoint,
    custom_jvp,
    custom_vjp,
    device_put,
    grad,
    jit,
    jvp,
    make_jaxpr,
    typeof,
    vmap,
)
from lamina.sharding import NamedSharding, reshard, set_mesh
from lamina.sharding import PartitionSpec as P

X = np.arange(32, dtype=np.float32).reshape(8, 4) / 10


@pytest.fixture(scope="module")
def x(mesh):
    return device_put(X, NamedSharding(mesh, P("x", None)))


def total(a):
    return lax.reduce_sum(a, tuple(range(a.ndim)))


def test_grad_outside_a_mesh_context(x):
    # recorded from JAX 0.10.2: eagerly the seed cannot be laid out over the mesh ...
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Length of device assignment 1 is not equal to the size of the mesh 8 of aval "
            "f32[]({Explicit: ('x', 'y')}). Please enter your `jit` into a mesh context via "
            "`jax.set_mesh`."
        ),
    ):
        grad(lambda a: total(a * a))(x)
    # ... under jit it can
    g = jit(grad(lambda a: total(a * a)))(x)
    assert str(typeof(g)) == "float32[8@x,4]" and g.sharding.spec == P("x", None)
    np.testing.assert_allclose(np.asarray(g), 2 * X, rtol=1e-6)


def test_custom_jvp(mesh, x):
    @custom_jvp
    def f(a):
        return lax.sin(a)

    f.defjvp(lambda p, t: (f(p[0]), lax.cos(p[0]) * t[0]))
    with set_mesh(mesh):
        # recorded from JAX 0.10.2
        text = str(make_jaxpr(f)(x))
        assert "b:f32[8@x,4] = custom_jvp_call[" in text
        assert "call_jaxpr={ lambda ; c:f32[8@x,4]. let d:f32[8@x,4] = sin c in (d,) }" in text
        text = str(make_jaxpr(lambda a: jvp(f, (a,), (a,)))(x))
        assert "e:f32[8@x,4] = cos a" in text and "f:f32[8@x,4] = mul e a" in text
        g = grad(lambda a: total(f(a)))(x)
        assert str(typeof(g)) == "float32[8@x,4]"
        np.testing.assert_allclose(np.asarray(g), np.cos(X), rtol=1e-6)


def test_custom_vjp(mesh, x):
    @custom_vjp
    def g(a):
        return lax.sin(a)

    g.defvjp(lambda a: (lax.sin(a), a), lambda r, ct: (lax.cos(r) * ct,))

    @custom_vjp
    def bad(a):
        return lax.sin(a)

    bad.defvjp(lambda a: (lax.sin(a), a), lambda r, ct: (reshard(lax.cos(r) * ct, P(None, "y")),))
    with set_mesh(mesh):
        # recorded from JAX 0.10.2
        assert str(make_jaxpr(grad(lambda a: total(g(a))))(x)) == (
            "{ lambda ; a:f32[8@x,4]. let\n"
            "    b:f32[8@x,4] = sin a\n"
            "    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n"
            "    c:f32[] = reshard 1.0:f32[]\n"
            "    d:f32[8@x,4] = broadcast_in_dim c\n"
            "    e:f32[8@x,4] = cos a\n"
            "    f:f32[8@x,4] = mul e d\n"
            "  in (f,) }"
        )
        r = grad(lambda a: total(g(a)))(x)
        assert str(typeof(r)) == "float32[8@x,4]"
        np.testing.assert_allclose(np.asarray(r), np.cos(X), rtol=1e-6)
        with pytest.raises(
            ValueError,
            match=re.escape(
                "Custom VJP bwd rule must produce an output with the same type as the args "
                "tuple of the primal function, but at output[0] the bwd rule produced an output "
                "of type float32[8,4@y] corresponding to an input of type float32[8@x,4]"
            ),
        ):
            make_jaxpr(grad(lambda a: total(bad(a))))(x)


def test_checkpoint(mesh, x):
    f = grad(lambda a: total(checkpoint(lambda b: lax.sin(lax.sin(b)))(a)))
    with set_mesh(mesh):
        text = str(make_jaxpr(f)(x))
        # recorded from JAX 0.10.2
        for line in [
            "d:f32[] = reshard 1.0:f32[]",
            "e:f32[8@x,4] = broadcast_in_dim d",
            "f:f32[8@x,4] = remat2[",
            "jaxpr={ lambda ; g:f32[8@x,4] h:f32[8@x,4]. let",
            "m:f32[8@x,4] = mul l j",
        ]:
            assert line in text, (line, text)
        r = f(x)
    assert str(typeof(r)) == "float32[8@x,4]"
    np.testing.assert_allclose(np.asarray(r), np.cos(np.sin(X)) * np.cos(X), rtol=1e-5)


def test_vmap(mesh, x):
    y = device_put(X, NamedSharding(mesh, P(None, "y")))
    with set_mesh(mesh):
        # recorded from JAX 0.10.2: spmd_axis_name leaves the types as they are
        assert str(make_jaxpr(vmap(lambda a: a * 2, spmd_axis_name="x"))(y)) == (
            "{ lambda ; a:f32[8,4@y]. let b:f32[8,4@y] = mul a 2.0:f32[] in (b,) }"
        )
        r = jit(vmap(lambda a: a * 2, spmd_axis_name="x"))(y)
        assert str(typeof(r)) == "float32[8,4@y]" and r.sharding.spec == P(None, "y")
        np.testing.assert_array_equal(np.asarray(r), X * 2)
        plain = device_put(X, NamedSharding(mesh, P()))
        assert str(make_jaxpr(vmap(lambda a: reshard(a, P("y")), spmd_axis_name="x"))(plain)) == (
            "{ lambda ; a:f32[8,4]. let b:f32[8,4@y] = reshard a in (b,) }"
        )
        a = device_put(np.ones((2, 8, 4), np.float32), NamedSharding(mesh, P(None, "x", None)))
        b = device_put(np.ones((4, 4), np.float32), NamedSharding(mesh, P(None, "y")))
        mm = vmap(lambda u, v: lax.dot_general(u, v, (([1], [0]), ([], []))), in_axes=(0, None))
        assert "c:f32[2,8@x,4@y] = dot_general[" in str(make_jaxpr(mm)(a, b))
        np.testing.assert_array_equal(np.asarray(jit(mm)(a, b)), np.full((2, 8, 4), 4.0))


def test_custom_jvp_tangents_must_split_as_the_primals(mesh, x):
    @custom_jvp
    def f(a):
        return lax.sin(a)

    f.defjvp(lambda p, t: (f(p[0]), reshard(lax.cos(p[0]) * t[0], P(None, "y"))))
    # recorded from JAX 0.10.2
    message = (
        "Custom JVP rule must produce primal and tangent outputs with corresponding shapes "
        "and dtypes. Expected float32[8@x,4] (tangent type of float32[8@x,4]) but got "
        "float32[8,4@y]."
    )
    with set_mesh(mesh), pytest.raises(TypeError, match=re.escape(message)):
        make_jaxpr(lambda a: jvp(f, (a,), (a,)))(x)


def test_jit_nested_in_jit(mesh, x):
    f = jit(lambda a: jit(lambda b: b * 2)(a))
    with set_mesh(mesh):
        # recorded from JAX 0.10.2: each staged jit records the mesh in force
        assert str(make_jaxpr(f)(x)) == (
            "{ lambda ; a:f32[8@x,4]. let\n"
            "    b:f32[8@x,4] = jit[\n"
            "      name=<lambda>\n"
            "      ctx_mesh=Mesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit))\n"
            "      jaxpr={ lambda ; a:f32[8@x,4]. let\n"
            "          b:f32[8@x,4] = jit[\n"
            "            name=<lambda>\n"
            "            ctx_mesh=Mesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit))\n"
            "            jaxpr={ lambda ; a:f32[8@x,4]. let\n"
            "                b:f32[8@x,4] = mul a 2.0:f32[]\n"
            "              in (b,) }\n"
            "          ] a\n"
            "        in (b,) }\n"
            "    ] a\n"
            "  in (b,) }"
        )
        r = f(x)
    assert str(typeof(r)) == "float32[8@x,4]" and r.sharding.spec == P("x", None)
    np.testing.assert_allclose(np.asarray(r), X * 2)


def test_vmap_body_types_drop_the_mapped_dimension(mesh):
    y = device_put(X, NamedSharding(mesh, P("x", "y")))
    seen = []

    def body(a):
        seen.append(str(typeof(a)))
        return a

    with set_mesh(mesh):
        vmap(body)(y)
        vmap(body, in_axes=1)(y)
        jit(vmap(body))(y)
    # recorded from JAX 0.10.2
    assert seen == ["float32[4@y]", "float32[8@x]", "float32[4@y]"]


def test_reshape_and_reduce_sum_transposes_print_as_jax(mesh, x):
    # recorded from JAX 0.10.2: the transpose of reshape is typed by a sharding= param,
    # that of reduce_sum broadcasts over NumPy-integer dimensions
    with set_mesh(mesh):
        flat = make_jaxpr(grad(lambda a: total(lax.reshape(a, (32,)) ** 2)))(x)
        summed = make_jaxpr(grad(lambda a: total(lax.reduce_sum(a, (1,)) ** 2)))(x)
        g = grad(lambda a: total(lax.reshape(a, (32,)) ** 2))(x)
    mesh_text = (
        "AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit), device_kind=cpu, "
        "num_cores=None, platform=cpu)"
    )
    assert (
        "    h:f32[8@x,4] = reshape[\n"
        "      dimensions=None\n"
        "      new_sizes=(8, 4)\n"
        f"      sharding=NamedSharding(mesh={mesh_text}, spec=P('x', None))\n"
        "    ] g\n"
    ) in str(flat)
    assert "    h:f32[8@x,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(0),)] g\n" in str(
        summed
    )
    assert str(typeof(g)) == "float32[8@x,4]"
    np.testing.assert_allclose(np.asarray(g), 2 * X, rtol=1e-6)
