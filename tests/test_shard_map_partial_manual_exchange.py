"""all_gather and all_to_all in a partially manual ``shard_map`` (``axis_names`` a
subset of the mesh's axes) under ``jit``: XLA's partitioner used to abort the process
on them. Also what JAX checks of the arguments of a partially manual ``shard_map``.
JAX 0.10.2 runs these programs; the types and the results' specs below are recorded
from it, the values checked against NumPy. Runs in a fresh process (8 CPU devices), so
a regression fails the test rather than killing pytest."""

import subprocess
import sys
import textwrap


def test_partial_manual_all_gather_and_all_to_all():
    code = textwrap.dedent(
        """
        import numpy as np
        import lamina as jax
        import lamina.numpy as jnp
        from lamina.sharding import AxisType, PartitionSpec as P
        jax.config.update("jax_num_cpu_devices", 8)

        def blocks_all_to_all(blocks, split, concat):
            # device i gets piece i (along split) of every device's block, joined along concat
            n = len(blocks)
            pieces = [np.split(b, n, axis=split) for b in blocks]
            return [np.concatenate([pieces[j][i] for j in range(n)], axis=concat)
                    for i in range(n)]

        x2 = np.arange(64.0, dtype=np.float32).reshape(8, 8)
        x3 = np.arange(128.0, dtype=np.float32).reshape(8, 4, 4)
        b2, b3 = np.split(x2, 2), np.split(x3, 2)
        lax = jax.lax
        cases = [  # name, input, body, NumPy result, type (Explicit), type (Auto)
            ("gather", x2, lambda a: lax.all_gather(a, "x", tiled=True),
             np.concatenate([x2, x2]), "float32[16@x,8]", "float32[16,8]"),
            ("gather untiled", x2,
             lambda a: lax.all_gather(a, "x", axis=1).reshape(a.shape[0], -1),
             np.concatenate([np.concatenate(b2, 1)] * 2), "float32[8@x,16]", "float32[8,16]"),
            ("to_all 0 1", x2, lambda a: lax.all_to_all(a, "x", 0, 1, tiled=True),
             np.concatenate(blocks_all_to_all(b2, 0, 1)), "float32[4@x,16]", "float32[4,16]"),
            ("to_all 0 0", x2, lambda a: lax.all_to_all(a, "x", 0, 0, tiled=True),
             np.concatenate(blocks_all_to_all(b2, 0, 0)), "float32[8@x,8]", "float32[8,8]"),
            ("to_all 2 1", x3, lambda a: lax.all_to_all(a, "x", 2, 1, tiled=True),
             np.concatenate(blocks_all_to_all(b3, 2, 1)), "float32[8@x,8,2]",
             "float32[8,8,2]"),
        ]
        for kind in ("Explicit", "Auto"):
            mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(getattr(AxisType, kind),) * 2)
            with jax.set_mesh(mesh):
                for name, x, body, want, t_explicit, t_auto in cases:
                    f = jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                                      axis_names={"x"})
                    r = jax.jit(f)(jax.device_put(x, P("x")))
                    np.testing.assert_array_equal(np.asarray(r), want, err_msg=name)
                    typ = t_explicit if kind == "Explicit" else t_auto
                    assert str(jax.typeof(r)) == typ, (name, kind, jax.typeof(r))
                    assert r.sharding.spec[0] == "x", (name, r.sharding)
        # an argument typed unsplit passes a partially manual shard_map (JAX checks the
        # in_specs against the argument's type only when every axis is manual); eager
        # results over Explicit axes are laid out by their types
        mesh = jax.make_mesh((2, 4), ("x", "y"))
        x = jnp.arange(64.0).reshape(8, 8)
        with jax.set_mesh(mesh):
            f = jax.shard_map(lambda a: lax.psum(a, "x"), mesh=mesh, in_specs=P("x"),
                              out_specs=P("x"), axis_names={"x"})
            for g in (f, jax.jit(f)):
                r = g(x)
                assert str(jax.typeof(r)) == "float32[8@x,8]", jax.typeof(r)
                assert r.sharding.spec == P("x", None), r.sharding
                b = np.split(np.arange(64.0, dtype=np.float32).reshape(8, 8), 2)
                np.testing.assert_array_equal(np.asarray(r), np.concatenate([b[0] + b[1]] * 2))
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"
