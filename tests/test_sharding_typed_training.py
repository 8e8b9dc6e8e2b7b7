"""A jitted MLP training step written with jax.numpy and jax.nn over a mesh with
Explicit axes, through the top level: parameters, gradients and the loss typed as
JAX 0.10.2 types them (recorded), values equal to the same step on unsharded arrays.
Runs in a fresh process with 8 CPU devices."""

import subprocess
import sys
import textwrap


def test_typed_training_step():
    code = textwrap.dedent(
        """
        import numpy as np
        import lamina as jax
        import lamina.numpy as jnp
        jax.config.update("jax_num_cpu_devices", 8)
        P, NS = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
        mesh = jax.make_mesh((2, 4), ("x", "y"))
        rng = np.random.RandomState(0)
        x, y = rng.randn(8, 4).astype(np.float32), rng.randn(8, 2).astype(np.float32)
        params = {"w1": rng.randn(4, 8).astype(np.float32), "b1": rng.randn(8).astype(np.float32),
                  "w2": rng.randn(8, 2).astype(np.float32)}

        def make_step(out_sharding):
            def loss(p, x, y):
                h = jax.nn.relu(x @ p["w1"] + p["b1"])
                return jnp.mean((jnp.dot(h, p["w2"], out_sharding=out_sharding) - y) ** 2)

            def step(p, x, y):
                value, g = jax.value_and_grad(loss)(p, x, y)
                return value, jax.tree.map(lambda a, b: a - 0.1 * b, p, g), g

            return jax.jit(step)

        specs = {"w1": P(None, "y"), "b1": P("y"), "w2": P("y", None)}
        with jax.set_mesh(mesh):
            sp = {k: jax.device_put(v, NS(mesh, specs[k])) for k, v in params.items()}
            sx, sy = (jax.device_put(v, NS(mesh, P("x", None))) for v in (x, y))
            value, new, g = make_step(P("x", None))(sp, sx, sy)
        want_value, want_new, want_g = make_step(None)(params, x, y)
        # recorded from JAX 0.10.2
        types = {"b1": "float32[8@y]", "w1": "float32[4,8@y]", "w2": "float32[8@y,2]"}
        assert str(jax.typeof(value)) == "float32[]", jax.typeof(value)
        assert value.sharding == NS(mesh, P())
        np.testing.assert_allclose(float(value), float(want_value), rtol=1e-5)
        for k, typ in types.items():
            assert str(jax.typeof(g[k])) == typ, (k, jax.typeof(g[k]))
            assert str(jax.typeof(new[k])) == typ, (k, jax.typeof(new[k]))
            assert new[k].sharding == NS(mesh, specs[k])
            np.testing.assert_allclose(np.asarray(g[k]), np.asarray(want_g[k]), rtol=1e-4,
                                       atol=1e-5)
            np.testing.assert_allclose(np.asarray(new[k]), np.asarray(want_new[k]), rtol=1e-5,
                                       atol=1e-6)
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
