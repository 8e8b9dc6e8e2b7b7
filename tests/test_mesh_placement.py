"""Under ``set_mesh``, results whose types carry no sharding (eager ops and ``jit``
calls on arrays committed nowhere) run on the mesh's devices and come out committed,
replicated over it: ``P(None, ...)`` on an Explicit mesh, ``P()`` on an Auto one.
Shardings recorded from JAX 0.10.2; values checked against NumPy. Runs in a fresh
process with 8 CPU devices."""

import subprocess
import sys
import textwrap


def test_untyped_results_go_on_the_mesh():
    code = textwrap.dedent(
        """
        import numpy as np
        import lamina as jax
        import lamina.numpy as jnp
        from lamina.sharding import AxisType, NamedSharding, SingleDeviceSharding
        from lamina.sharding import PartitionSpec as P
        jax.config.update("jax_num_cpu_devices", 8)

        for kind in (AxisType.Explicit, AxisType.Auto):
            mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(kind,) * 2)
            outside = jnp.ones((8, 4))
            with jax.set_mesh(mesh):
                cases = [
                    (jnp.zeros((8, 4)), np.zeros((8, 4)), "float32[8,4]"),
                    (jnp.arange(8.0), np.arange(8.0), "float32[8]"),
                    (outside + 1, np.full((8, 4), 2.0), "float32[8,4]"),
                    (jax.jit(lambda: jnp.zeros((8, 4)))(), np.zeros((8, 4)), "float32[8,4]"),
                    (jax.jit(lambda a: a * 2)(outside), np.full((8, 4), 2.0), "float32[8,4]"),
                    (jnp.float32(3) + 1, np.float32(4), "float32[]"),
                ]
                for r, want, typ in cases:
                    np.testing.assert_array_equal(np.asarray(r), want)
                    assert r.committed and str(jax.typeof(r)) == typ, (typ, jax.typeof(r))
                    spec = P(*[None] * r.ndim) if kind == AxisType.Explicit else P()
                    assert r.sharding == NamedSharding(mesh, spec), r.sharding
                    assert len(r.addressable_shards) == 8
                # device_put of a host array stays uncommitted on one device, as in JAX
                put = jax.device_put(np.ones(3))
                assert isinstance(put.sharding, SingleDeviceSharding) and not put.committed
                if kind == AxisType.Explicit:
                    b = jax.device_put(np.ones((8, 4), np.float32), P("x", None))
                    c = jnp.arange(32.0).reshape(8, 4) + b  # the split operand's layout wins
                    assert str(jax.typeof(c)) == "float32[8@x,4]"
                    assert c.sharding == NamedSharding(mesh, P("x", None))
                    np.testing.assert_array_equal(np.asarray(c), np.arange(32.0).reshape(8, 4) + 1)
                s = jax.jit(jnp.sum)(jnp.arange(32.0))
                assert s.sharding == NamedSharding(mesh, P()) and float(s) == 496.0
            # outside the mesh, as before
            assert isinstance(outside.sharding, SingleDeviceSharding)
            assert isinstance((outside + 1).sharding, SingleDeviceSharding)
            assert isinstance(jax.jit(lambda a: a * 2)(outside).sharding, SingleDeviceSharding)
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"
