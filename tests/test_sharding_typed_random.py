"""The samplers' ``out_sharding=`` over a mesh with Explicit axes, through the top level:
results typed and laid out as asked, the same draws as without it. Types and Jaxpr
lines recorded from JAX 0.10.2. Runs in a fresh process with 8 CPU devices."""

import subprocess
import sys
import textwrap


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
