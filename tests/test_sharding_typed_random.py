"""The samplers' ``out_sharding=`` over a mesh with Explicit axes, through the top level:
results typed and laid out as asked, the same draws as without it. Types and Jaxpr
lines recorded from JAX 0.10.2. Runs in a fresh process with 8 CPU devices."""

import subprocess
import sys
import textwrap

import numpy as np

import lamina as jax


def test_samplers_out_sharding():
    code = textwrap.dedent(
        """
        import numpy as np
        import lamina as jax
        jax.config.update("jax_num_cpu_devices", 8)
        P = jax.sharding.PartitionSpec
        mesh = jax.make_mesh((2, 4), ("x", "y"))
        k = jax.random.key(0)
        with jax.set_mesh(mesh):
            r = jax.random.normal(k, (8, 4), out_sharding=P("x", None))
            assert str(jax.typeof(r)) == "float32[8@x,4]" and r.sharding.spec == P("x", None)
            assert np.array_equal(np.asarray(r), np.asarray(jax.random.normal(k, (8, 4))))
            f = lambda k: jax.random.normal(k, (8, 4), out_sharding=P("x", None))
            j = jax.jit(f)(k)
            assert str(jax.typeof(j)) == "float32[8@x,4]" and j.sharding.spec == P("x", None)
            assert np.array_equal(np.asarray(j), np.asarray(r))
            lines = [l for l in str(jax.make_jaxpr(f)(k)).split("\\n") if "reshard" in l]
            assert lines == ["    p:key<fry>[] = reshard o", "    t:f32[8@x,4] = reshard q"], lines
            cases = [
                (jax.random.uniform(k, (8, 4), out_sharding=P(None, "y")), "float32[8,4@y]"),
                (jax.random.bits(k, (8, 4), out_sharding=P(None, "y")), "uint32[8,4@y]"),
                (jax.random.randint(k, (8, 4), 0, 10, out_sharding=P("x", None)), "int32[8@x,4]"),
                (jax.random.categorical(k, jax.numpy.zeros((8, 4)), out_sharding=P("x")),
                 "int32[8@x]"),
                (jax.random.bernoulli(k, 0.5, (8, 4), out_sharding=P("x", "y")), "bool[8@x,4@y]"),
                (jax.random.gamma(k, 2.0, (8, 4), out_sharding=P("x", None)), "float32[8@x,4]"),
            ]
            for value, typ in cases:
                assert str(jax.typeof(value)) == typ, (typ, jax.typeof(value))
            u = jax.random.uniform(k, (8, 4), out_sharding=P(None, "y"))
            assert np.array_equal(np.asarray(u), np.asarray(jax.random.uniform(k, (8, 4))))
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_samplers_out_sharding_over_no_mesh():
    # A value's type sharding outside any mesh is a NamedSharding over the empty mesh
    # (flax's Dropout passes it on as out_sharding=): it counts as no out_sharding, no
    # reshard staged, the same draws (values recorded from JAX 0.10.2).
    s = jax.typeof(jax.numpy.ones((2, 2))).sharding
    k = jax.random.key(0)
    f = lambda k: jax.random.bernoulli(k, 0.5, (2, 2), out_sharding=s)  # noqa: E731
    want = [[False, False], [True, True]]
    assert np.asarray(f(k)).tolist() == want
    assert np.asarray(jax.jit(f)(k)).tolist() == want
    assert "reshard" not in str(jax.make_jaxpr(f)(k))
    n = jax.random.normal(k, (2, 2), out_sharding=s.update(spec=jax.sharding.PartitionSpec()))
    assert np.array_equal(np.asarray(n), np.asarray(jax.random.normal(k, (2, 2))))
