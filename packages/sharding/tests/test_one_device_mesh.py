"""An array laid out by a NamedSharding over a one-device mesh (chex's tests make such
meshes) goes into jitted computations on that device, as in JAX 0.10.2."""

import numpy as np

from lamina import lax
from lamina.interpreters import device_put, jit, local_devices
from lamina.sharding import Mesh, NamedSharding, PartitionSpec


def test_one_device_mesh_arrays_run_where_they_are():
    device = local_devices()[0]
    x = device_put(
        np.arange(4.0, dtype=np.float32), NamedSharding(Mesh([device], ("i",)), PartitionSpec())
    )
    assert x.committed
    np.testing.assert_array_equal(jit(lambda a: lax.mul(a, 2.0))(x), [0.0, 2.0, 4.0, 6.0])
    y = jit(lambda a, b: lax.add(a, b))(x, np.ones(4, np.float32))
    np.testing.assert_array_equal(y, [1.0, 2.0, 3.0, 4.0])
    assert y.devices() == {device}
