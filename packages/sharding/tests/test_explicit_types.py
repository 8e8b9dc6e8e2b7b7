"""Shardings in types over meshes with Explicit axes: ``typeof``, Jaxprs and the
primitives' sharding rules. Printed types and errors recorded from JAX 0.10.2."""

import re

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import device_put, jit, make_jaxpr, typeof
from lamina.ir import ShardingTypeError
from lamina.sharding import AxisType, NamedSharding, make_mesh, set_mesh
from lamina.sharding import PartitionSpec as P


def put(mesh, shape, spec):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    return device_put(x, NamedSharding(mesh, spec))


def test_make_mesh_axes_are_explicit(mesh):
    assert mesh.axis_types == (AxisType.Explicit, AxisType.Explicit)


def test_typeof_prints_the_splits(mesh):
    # recorded from JAX 0.10.2
    x = put(mesh, (16,), P("x"))
    assert str(typeof(x)) == "float32[16@x]"
    assert repr(typeof(x)) == "ShapedArray(float32[16@x])"
    assert repr(typeof(x).sharding) == (
        "NamedSharding(mesh=AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit), "
        "device_kind=cpu, num_cores=None, platform=cpu), spec=P('x',))"
    )
    y = put(mesh, (8, 4), P("x", "y"))
    assert typeof(y).str_short(short_dtypes=True) == "f32[8@x,4@y]"
    assert str(typeof(put(mesh, (8, 4), P(("x", "y"))))) == "float32[8@(x,y),4]"


def test_auto_meshes_and_single_devices_carry_no_splits(mesh):
    auto = make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    assert str(typeof(put(auto, (8, 4), P("x", "y")))) == "float32[8,4]"
    assert str(typeof(np.ones(3, np.float32))) == "float32[3]"
    jaxpr = make_jaxpr(lambda a: lax.add(lax.sin(a), 1.0))(put(auto, (16,), P("x")))
    assert "16@" not in str(jaxpr)


def test_jaxprs_carry_the_splits(mesh):
    # recorded from JAX 0.10.2
    x = put(mesh, (16,), P("x"))
    assert str(make_jaxpr(lambda a: lax.add(lax.sin(a), 1.0))(x)) == (
        "{ lambda ; a:f32[16@x]. let\n"
        "    b:f32[16@x] = sin a\n"
        "    c:f32[16@x] = add b 1.0:f32[]\n"
        "  in (c,) }"
    )
    y = put(mesh, (8, 4), P("x", "y"))
    assert str(make_jaxpr(lambda a: lax.reduce_sum(a, (0,)))(y)) == (
        "{ lambda ; a:f32[8@x,4@y]. let\n"
        "    b:f32[4@y] = reduce_sum[axes=(0,) out_sharding=None] a\n"
        "  in (b,) }"
    )
    assert str(make_jaxpr(lambda a: lax.transpose(a, (1, 0)))(y)) == (
        "{ lambda ; a:f32[8@x,4@y]. let\n"
        "    b:f32[4@y,8@x] = transpose[permutation=(1, 0)] a\n"
        "  in (b,) }"
    )


def test_rules_of_the_core_primitives(mesh):
    # recorded from JAX 0.10.2
    a, b, c = put(mesh, (8, 4), P("x", None)), np.ones((8, 4), np.float32), put(mesh, (4,), P("y"))
    cases = [
        (lambda a, b, c: lax.add(a, b), ["d:f32[8@x,4] = add a b"]),
        (
            lambda a, b, c: lax.mul(a, lax.broadcast_in_dim(c, (1, 4), (1,))),
            [
                "d:f32[1,4@y] = broadcast_in_dim[broadcast_dimensions=(1,)] c",
                "e:f32[8@x,4@y] = mul a d",
            ],
        ),
        (
            lambda a, b, c: lax.convert_element_type(a, np.int32),
            ["d:i32[8@x,4] = convert_element_type[new_dtype=int32 weak_type=False] a"],
        ),
        (
            lambda a, b, c: lax.reduce_sum(a, (0, 1)),
            ["d:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a"],
        ),
        (
            lambda a, b, c: lax.broadcast_in_dim(c, (3, 4), (1,)),
            ["d:f32[3,4@y] = broadcast_in_dim[broadcast_dimensions=(1,)] c"],
        ),
        (
            lambda a, b, c: lax.dot_general(a, c, (([1], [0]), ([], []))),
            ["d:f32[8@x] = dot_general["],
        ),
        (lambda a, b, c: lax.gt(a, 0.0), ["d:bool[8@x,4] = gt a 0.0:f32[]"]),
    ]
    for f, lines in cases:
        text = str(make_jaxpr(f)(a, b, c))
        for line in lines:
            assert line in text, (line, text)


def test_incompatible_operands_raise(mesh):
    y = put(mesh, (8, 4), P("x", "y"))
    z = put(mesh, (8, 4), P("y", "x"))
    # recorded from JAX 0.10.2
    with pytest.raises(
        ShardingTypeError,
        match=r"add got incompatible shardings for broadcasting: \('x', 'y'\), \('y', 'x'\)\.",
    ):
        jit(lambda a, b: lax.add(a, b))(y, z)
    d, e = put(mesh, (4, 4), P(None, "y")), put(mesh, (4, 4), P("y", None))
    with pytest.raises(ShardingTypeError, match="Contracting dimensions are sharded"):
        make_jaxpr(lambda d, e: lax.dot_general(d, e, (([1], [0]), ([], []))))(d, e)


def test_jit_results_keep_the_layout(mesh):
    y = put(mesh, (8, 4), P("x", "y"))
    r = jit(lambda a: lax.mul(lax.sin(a), 2.0))(y)
    assert r.sharding == NamedSharding(mesh, P("x", "y"))
    assert str(typeof(r)) == "float32[8@x,4@y]"
    np.testing.assert_allclose(np.asarray(r), np.sin(np.asarray(y)) * 2, rtol=1e-6)
    s = jit(lambda a: lax.reduce_sum(a, (0,)))(y)
    np.testing.assert_allclose(np.asarray(s), np.asarray(y).sum(0))
    assert str(typeof(s)) == "float32[4@y]"


def test_a_result_split_twice_over_one_axis_raises(mesh):
    a = put(mesh, (8, 4), P("x", None))
    # recorded from JAX 0.10.2
    with pytest.raises(
        ShardingTypeError,
        match=r"dot_general operation with inputs: f32\[8@x,4\], f32\[4,8@x\] produces an "
        r"illegally sharded result: f32\[8@x,8@x\]",
    ):
        make_jaxpr(lambda a: lax.dot_general(a, lax.transpose(a, (1, 0)), (([1], [0]), ([], []))))(
            a
        )


def test_unary_ops_and_reductions_keep_the_splits(mesh):
    a = put(mesh, (8, 4), P("x", None))
    x = np.asarray(a)
    # values and types recorded from JAX 0.10.2 (the same under lamina)
    v = jit(lambda a: lax.mul(lax.sin(a), a))(a)
    np.testing.assert_allclose(np.asarray(v), np.sin(x) * x, rtol=1e-6)
    text = str(make_jaxpr(lambda a: lax.reduce_max(lax.neg(a), (1,)))(a))
    assert "b:f32[8@x,4] = neg a" in text
    assert "c:f32[8@x] = reduce_max[axes=(1,)] b" in text


def test_reshape_keeps_splits_where_jax_allows(mesh):
    a, b = put(mesh, (8, 4), P("x", None)), put(mesh, (8, 4), P(None, "y"))
    # recorded from JAX 0.10.2
    for arg, sizes, out in [
        (a, (32,), "f32[32@x]"),
        (a, (2, 4, 4), "f32[2@x,4,4]"),
        (a, (8, 4, 1), "f32[8@x,4,1]"),
        (a, (1, 8, 4), "f32[1,8@x,4]"),
    ]:
        text = str(make_jaxpr(lambda v, sizes=sizes: lax.reshape(v, sizes))(arg))
        assert f"b:{out} = reshape" in text, text
    for arg, sizes, typ in [(a, (4, 8), "float32[8@x,4]"), (b, (32,), "float32[8,4@y]")]:
        with pytest.raises(
            ShardingTypeError,
            match=r"This reshape is not supported\. Please specify the sharding of the output "
            r"via the `out_sharding` argument of jax\.lax\.reshape\. Got operand type: "
            + re.escape(f"{typ}, new sizes: {sizes}"),
        ):
            make_jaxpr(lambda v, sizes=sizes: lax.reshape(v, sizes))(arg)


def test_results_come_out_laid_out_as_their_types(mesh):
    a = put(mesh, (8, 4), P("x", None))
    dims = (([1], [1]), ([], []))
    with set_mesh(mesh):
        r = jit(lambda a: lax.dot_general(a, a, dims, out_sharding=P("x", None)))(a)
    # recorded from JAX 0.10.2
    assert str(typeof(r)) == "float32[8@x,8]"
    assert r.sharding == NamedSharding(mesh, P("x", None))
    x = np.asarray(a)
    np.testing.assert_allclose(np.asarray(r), x @ x.T)


def test_sharding_constraint_over_explicit_axes(mesh):
    a = put(mesh, (8, 4), P("x", None))
    constrained = NamedSharding(mesh, P(None, "y"))
    # recorded from JAX 0.10.2: a constraint may name only Auto axes ...
    with pytest.raises(ValueError, match="can only refer to Auto axes of the mesh"):
        make_jaxpr(lambda v: lax.with_sharding_constraint(v, constrained))(a)
    with set_mesh(mesh):
        # ... and under an all-Explicit mesh it asserts the operand's type
        assert str(make_jaxpr(lambda v: lax.with_sharding_constraint(v, P("x")))(a)) == (
            "{ lambda ; a:f32[8@x,4]. let  in (a,) }"
        )
        with pytest.raises(
            AssertionError,
            match=re.escape(
                "`with_sharding_constraint` acts as an assert when all axes of mesh are of "
                "type `Explicit`. The array sharding: P('x', None) did not match the sharding "
                "provided: P(None, 'y'). Please use `jax.sharding.reshard`"
            ),
        ):
            make_jaxpr(lambda v: lax.with_sharding_constraint(v, P(None, "y")))(a)
        with pytest.raises(ValueError, match=r"cannot contain `P\.UNCONSTRAINED` when no mesh"):
            lax.with_sharding_constraint(a, P("x", P.UNCONSTRAINED))
    mixed = make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    b = put(mixed, (8, 4), P("x", None))
    with set_mesh(mixed):
        r = jit(lambda v: lax.with_sharding_constraint(lax.neg(v), P(None, "y")))(b)
        assert str(typeof(r)) == "float32[8@x,4]"
        np.testing.assert_array_equal(np.asarray(r), -np.asarray(b))
        with pytest.raises(ValueError, match=r"Got spec=P\('x', None\) and mesh=AbstractMesh"):
            make_jaxpr(lambda v: lax.with_sharding_constraint(v, P("x", None)))(b)
