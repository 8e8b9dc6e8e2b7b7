"""Eager operations on PRNG key arrays split over several devices (no mesh in force):
they run partitioned, as JAX 0.10.2 runs them. Types and the keys' specs recorded
from JAX 0.10.2; values checked against the same keys on one device. Runs in a fresh
process with 8 CPU devices."""

import subprocess
import sys
import textwrap


def test_eager_ops_on_split_keys():
    code = textwrap.dedent(
        """
        import numpy as np
        import lamina as jax
        import lamina.numpy as jnp
        from lamina.sharding import AxisType, NamedSharding, PartitionSpec as P
        jax.config.update("jax_num_cpu_devices", 8)
        keys = jax.random.split(jax.random.key(0), 8)
        data = lambda k: np.asarray(jax.random.key_data(k))
        cases = [  # name, function, type (Explicit), type (Auto), spec of the result
            ("slice", lambda k: k[2:6], "key<fry>[4@x]", "key<fry>[4]", None),
            ("reshape", lambda k: k.reshape(2, 4), "key<fry>[2@x,4]", "key<fry>[2,4]",
             P("x", None)),
            ("fold_in", lambda k: jax.vmap(jax.random.fold_in, (0, None))(k, 3),
             "key<fry>[8@x]", "key<fry>[8]", P("x")),
            ("split", lambda k: jax.vmap(lambda a: jax.random.split(a, 2))(k),
             "key<fry>[8@x,2]", "key<fry>[8,2]", P("x", None)),
            ("uniform", lambda k: jax.vmap(lambda a: jax.random.uniform(a, ()))(k),
             "float32[8@x]", "float32[8]", P("x")),
            ("eq", lambda k: k == k, "bool[8@x]", "bool[8]", P("x")),
            ("concat", lambda k: jnp.concatenate([k, k]), "key<fry>[16@x]", "key<fry>[16]",
             P("x")),
            ("jit", jax.jit(lambda k: k), "key<fry>[8@x]", "key<fry>[8]", P("x")),
        ]
        for kind in (AxisType.Explicit, AxisType.Auto):
            mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(kind,) * 2)
            ks = jax.device_put(keys, NamedSharding(mesh, P("x")))
            assert ks.sharding.spec == P("x")
            for name, f, t_explicit, t_auto, spec in cases:
                r, want = f(ks), f(keys)
                typ = t_explicit if kind == AxisType.Explicit else t_auto
                assert str(jax.typeof(r)) == typ, (name, jax.typeof(r))
                if spec is not None:
                    assert r.sharding.spec == spec, (name, r.sharding)
                if r.dtype == bool or r.dtype == np.float32:
                    np.testing.assert_array_equal(np.asarray(r), np.asarray(want))
                else:
                    np.testing.assert_array_equal(data(r), data(want))
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"
