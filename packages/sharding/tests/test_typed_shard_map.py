"""shard_map over meshes with Explicit axes: the manual axes leave the types in the body,
the others stay; results are typed by ``out_specs`` and the body's types; collectives and
the PRNG key primitives carry the splits. Recorded from JAX 0.10.2; values vs NumPy."""

import re

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import device_put, grad, jit, make_jaxpr, typeof, vmap
from lamina.lax import (
    random_bits,
    random_fold_in,
    random_seed,
    random_split,
    random_unwrap,
    resolve_prng_impl,
)
from lamina.sharding import NamedSharding, get_abstract_mesh, set_mesh, shard_map
from lamina.sharding import PartitionSpec as P

X = np.arange(32, dtype=np.float32).reshape(8, 4)


def put(mesh, value, spec):
    return device_put(value, NamedSharding(mesh, spec))


def test_all_axes_manual(mesh):
    x = put(mesh, X, P("x", None))
    seen = []

    def body(b):
        seen.append((str(typeof(b)), get_abstract_mesh().axis_types))
        return lax.psum(b, "x")

    f = shard_map(body, in_specs=P("x", None), out_specs=P(None, None))
    with set_mesh(mesh):
        text = str(make_jaxpr(f)(x))
        # recorded from JAX 0.10.2
        assert "b:f32[4,4] = shard_map[" in text
        assert "jaxpr={ lambda ; c:f32[4,4]{V:x}. let" in text
        assert "d:f32[4,4] = psum_invariant[axes=('x',)] c" in text
        assert seen[-1][0] == "float32[4,4]{V:x}"
        r = jit(f)(x)
        assert str(typeof(r)) == "float32[4,4]" and r.sharding.spec == P(None, None)
        np.testing.assert_array_equal(np.asarray(r), X[:4] + X[4:])
        g = shard_map(lambda b: b * 2, in_specs=P("x", None), out_specs=P("x", None))
        assert "b:f32[8@x,4] = shard_map[" in str(make_jaxpr(g)(x))
        # in_specs inferred from a traced argument's type
        y = put(mesh, X, P("x", "y"))
        h = shard_map(lambda b: b * 2, out_specs=P("x", "y"))
        assert "b:f32[8@x,4@y] = shard_map[" in str(make_jaxpr(h)(y))
        s = grad(lambda a: lax.reduce_sum(f(a), (0, 1)))(x)
        assert str(typeof(s)) == "float32[8@x,4]"
        np.testing.assert_array_equal(np.asarray(s), np.ones_like(X))


def test_some_axes_manual(mesh):
    y = put(mesh, X, P("x", "y"))
    seen = []

    def body(b):
        seen.append((str(typeof(b)), get_abstract_mesh().axis_types))
        return b * 2

    f = shard_map(body, in_specs=P("x", None), out_specs=P("x", None), axis_names={"x"})
    with set_mesh(mesh):
        text = str(make_jaxpr(f)(y))
        # recorded from JAX 0.10.2: y stays Explicit in the body, the result keeps it
        assert "b:f32[8@x,4@y] = shard_map[" in text
        assert "jaxpr={ lambda ; c:f32[4,4@y]{V:x}. let" in text
        assert "e:f32[4,4@y]{V:x} = mul c d" in text
        assert seen[-1][0] == "float32[4,4@y]{V:x}"
        assert str(seen[-1][1]) == "(Manual, Explicit)"
        r = jit(f)(y)
        assert str(typeof(r)) == "float32[8@x,4@y]" and r.sharding.spec == P("x", "y")
        np.testing.assert_array_equal(np.asarray(r), X * 2)
        s = shard_map(
            lambda b: lax.psum(b, "x"), in_specs=P("x", None), out_specs=P(), axis_names={"x"}
        )
        text = str(make_jaxpr(s)(y))
        assert "b:f32[4,4@y] = shard_map[" in text
        assert "d:f32[4,4@y] = psum_invariant[axes=('x',)] c" in text
        r = jit(s)(y)
        assert str(typeof(r)) == "float32[4,4@y]" and r.sharding.spec == P(None, "y")
        np.testing.assert_array_equal(np.asarray(r), X[:4] + X[4:])


def test_collectives_keep_the_splits(mesh):
    y = put(mesh, X, P("x", "y"))

    def body(b):
        return (
            lax.all_gather(b, "x", tiled=True),
            lax.all_gather(b, "x", axis=0),
            lax.pmax(b, "x"),
            lax.psum_scatter(b, "x", scatter_dimension=0, tiled=True),
            lax.ppermute(b, "x", [(0, 1), (1, 0)]),
            lax.all_to_all(b, "x", 0, 0, tiled=True),
            lax.psum(lax.reduce_sum(b, (0,)), "x"),
        )

    specs = (P(), P(), P(), P("x"), P("x"), P("x"), P())
    f = shard_map(body, in_specs=P("x", None), out_specs=specs, axis_names={"x"}, check_vma=False)
    with set_mesh(mesh):
        text = str(make_jaxpr(f)(y))
    # recorded from JAX 0.10.2 (the untiled all_gather keeps the spec in place)
    assert (
        "b:f32[8,4@y] c:f32[2,4@y,4] d:f32[4,4@y] e:f32[4@x,4@y] f:f32[8@x,4@y] "
        "g:f32[8@x,4@y]\n      h:f32[4@y] = shard_map["
    ) in text
    for line in [
        "j:f32[8,4@y] = all_gather[",
        "k:f32[2,4@y,4] = all_gather[",
        "l:f32[4,4@y] = pmax[axes=('x',) axis_index_groups=None] i",
        "m:f32[2,4@y] = reduce_scatter[",
        "n:f32[4,4@y] = ppermute[",
        "o:f32[4,4@y] = all_to_all[",
        "q:f32[4@y] = psum[axes=('x',) axis_index_groups=None] p",
    ]:
        assert line in text, (line, text)
    p = shard_map(
        lambda b: lax.ppermute(b, "x", [(0, 1), (1, 0)]),
        in_specs=P("x", None),
        out_specs=P("x"),
        axis_names={"x"},
    )
    with set_mesh(mesh):
        r = jit(p)(y)
    assert str(typeof(r)) == "float32[8@x,4@y]"
    np.testing.assert_array_equal(np.asarray(r), np.concatenate([X[4:], X[:4]]))


def test_prng_key_primitives_keep_the_splits(mesh):
    keys = random_seed(np.arange(8, dtype=np.uint32), resolve_prng_impl("threefry2x32"))
    ks = put(mesh, keys, P("x"))
    # recorded from JAX 0.10.2
    assert str(typeof(ks)) == "key<fry>[8@x]"
    with set_mesh(mesh):
        text = str(
            make_jaxpr(
                lambda k: (
                    random_bits(k, 32, (3,)),
                    random_unwrap(k),
                    random_split(k, (2,)),
                    random_fold_in(k, np.uint32(3)),
                )
            )(ks)
        )
        assert "b:u32[8@x,3] = random_bits[bit_width=32 shape=(3,)] a" in text
        assert "c:u32[8@x,2] = random_unwrap a" in text
        assert "d:key<fry>[8@x,2] = random_split[shape=(2,)] a" in text
        assert "e:key<fry>[8@x] = random_fold_in a 3:u32[]" in text
        bits = jit(vmap(lambda k: random_bits(k, 32, (4,))))(ks)
        assert str(typeof(bits)) == "uint32[8@x,4]"
        np.testing.assert_array_equal(np.asarray(bits), np.asarray(random_bits(keys, 32, (4,))))


def test_in_specs_checked_against_traced_types(mesh):
    f = shard_map(lambda b: b, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    # recorded from JAX 0.10.2: an unsplit traced argument does not match the in_specs
    with pytest.raises(
        ValueError,
        match=re.escape(
            "in_specs passed to shard_map: P('x', 'y') does not match the specs of the input: "
            "P(None, None) for arg: float32[8,4]. `in_specs` is an optional argument"
        ),
    ):
        make_jaxpr(f)(np.ones((8, 4), np.float32))
    y = put(mesh, X, P("x", "y"))
    for tiled, message in [
        (True, "tiled reduce_scatter operand scatter dimension size 1 must be divisible by "),
        (False, "reduce_scatter operand scatter dimension size 1 must match shard count 4"),
    ]:
        g = shard_map(
            lambda b, tiled=tiled: lax.psum_scatter(b, "y", scatter_dimension=1, tiled=tiled),
            mesh=mesh,
            in_specs=P("x", "y"),
            out_specs=P("x", "y"),
            check_vma=False,
        )
        with pytest.raises(ValueError, match=re.escape(message)):
            make_jaxpr(g)(y)


def test_mesh_of_set_mesh_recorded_abstract(mesh):
    # recorded from JAX 0.10.2: a shard_map taking its mesh from set_mesh records the
    # abstract mesh; one given mesh= records that mesh
    x = put(mesh, np.arange(32, dtype=np.float32).reshape(8, 4), P("x", None))
    with set_mesh(mesh):
        from_context = shard_map(lambda a: a * 2, in_specs=P("x"), out_specs=P("x"))
        given = shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
        text = str(make_jaxpr(from_context)(x))
        assert (
            "      mesh=AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit), "
            "device_kind=cpu, num_cores=None, platform=cpu)\n"
        ) in text
        assert "      mesh=Mesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit))\n" in str(
            make_jaxpr(given)(x)
        )
        # eagerly laid out by out_specs as given, under jit by the type
        for f, spec in ((from_context, P("x")), (jit(from_context), P("x", None))):
            r = f(x)
            assert str(typeof(r)) == "float32[8@x,4]"
            assert r.sharding == NamedSharding(mesh, spec)
            np.testing.assert_array_equal(np.asarray(r), 2 * np.asarray(x))
