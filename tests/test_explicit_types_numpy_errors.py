"""NumPy functions on arrays split over Explicit mesh axes that JAX 0.10.2 refuses:
``kron``, ``diagonal`` across a split axis, ``percentile`` over a split axis,
``nonzero`` and running sums of the flattened array raise
JAX's errors (type and message recorded from JAX 0.10.2), eagerly and under jit.
Runs in a fresh process with 8 CPU devices."""

import subprocess
import sys
import textwrap


def test_split_operands_refused_as_in_jax():
    code = textwrap.dedent(
        """
        import numpy as np
        import lamina as jax
        import lamina.numpy as jnp
        from lamina.ir import ShardingTypeError
        from lamina.sharding import PartitionSpec as P
        jax.config.update("jax_num_cpu_devices", 8)
        mesh = jax.make_mesh((2, 4), ("x", "y"))
        MESH = ("AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit), "
                "device_kind=cpu, num_cores=None, platform=cpu)")
        xn = np.arange(32.0, dtype=np.float32).reshape(8, 4)
        with jax.set_mesh(mesh):
            x = jax.device_put(xn, P("x", None))
            cases = [
                (lambda: jnp.kron(x, x),
                 "mul operation with inputs: f32[8@x,1,4,1], f32[1,8@x,1,4] produces an "
                 "illegally sharded result: f32[8@x,8@x,4,4]"),
                (lambda: jnp.diagonal(x),
                 "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the "
                 "gather indexing as out sharding could not be resolved unambiguously (or "
                 "would require collectives on inputs). Got operand=ShapedArray(float32[8@x,4]), "
                 "indices=ShapedArray(int32[4,2])"),
                (lambda: jnp.percentile(x, 50, axis=0),
                 "Arguments to sort must be unsharded over the sorting dimension. Got arg "
                 f"sharding=NamedSharding(mesh={MESH}, spec=P('x', None)) and sorting "
                 "dimension=0"),
                (lambda: jnp.nonzero(x[:, 0], size=8),
                 "The input should be fully replicated when axis is not specified to cumsum. "
                 "Got input type=bool[8@x]"),
                (lambda: jnp.cumsum(x),
                 "The input should be fully replicated when axis is not specified to cumsum. "
                 "Got input type=float32[8@x,4]"),
            ]
            for f, message in cases:
                for g in (f, jax.jit(f)):
                    try:
                        g()
                        raise AssertionError("no error")
                    except ShardingTypeError as e:
                        assert str(e) == message, (str(e), message)
            # split along other axes they work, equal to NumPy
            y = jax.device_put(xn, P(None, "y"))
            np.testing.assert_array_equal(np.asarray(jnp.percentile(y, 50, axis=0)),
                                          np.percentile(xn, 50, axis=0))
            z = jax.device_put(np.arange(64.0, dtype=np.float32).reshape(8, 2, 4), P("x"))
            d = jnp.diagonal(z, axis1=1, axis2=2)
            assert str(jax.typeof(d)) == "float32[8@x,2]"
            np.testing.assert_array_equal(np.asarray(d),
                np.diagonal(np.arange(64.0).reshape(8, 2, 4), axis1=1, axis2=2))
        small = np.arange(6.0).reshape(2, 3)
        np.testing.assert_array_equal(np.asarray(jnp.kron(small, small[:, :2])),
                                      np.kron(small, small[:, :2]))
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"
