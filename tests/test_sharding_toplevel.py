"""lamina.sharding through the top level, as a JAX program uses it."""

import subprocess
import sys
import textwrap

import lamina as jax
import lamina.numpy as jnp


def test_type_sharding_through_the_top_level():
    # optax reads this; recorded from JAX 0.10.2: False for arrays without mesh axes
    sharding = jax.typeof(jnp.ones((2, 3))).sharding
    assert not sharding.mesh.are_all_axes_explicit
    assert sharding.spec == jax.P(None, None)
    assert isinstance(sharding, jax.sharding.NamedSharding)


def test_a_sharded_program_on_eight_devices():
    # A fresh process: the device count is set before the backend starts.
    code = textwrap.dedent(
        """
        import numpy as np
        import lamina as jax
        from lamina.sharding import NamedSharding, PartitionSpec as P
        jax.config.update("jax_num_cpu_devices", 8)
        mesh = jax.make_mesh((4, 2), ("data", "model"))
        x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
        a = jax.device_put(x, NamedSharding(mesh, P("data", "model")))
        assert len(a.addressable_shards) == 8 and a.addressable_shards[3].data.shape == (2, 4)
        assert (np.asarray(a) == x).all()
        b = jax.make_array_from_callback(x.shape, jax.NamedSharding(mesh, jax.P("data")),
                                         lambda index: x[index])
        assert [s.replica_id for s in b.addressable_shards] == [0, 1] * 4
        with jax.set_mesh(mesh):
            assert jax.sharding.get_abstract_mesh().axis_names == ("data", "model")
        jax.debug.visualize_array_sharding(a)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == "│  CPU 0   │  CPU 1   │"  # as JAX 0.10.2 draws it
