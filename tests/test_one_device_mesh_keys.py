"""PRNG keys (an extended dtype, dispatched eagerly on their own path) laid out by a
NamedSharding over a one-device mesh are used where they are; values recorded from JAX
0.10.2."""

import numpy as np

import lamina
from lamina.sharding import Mesh, NamedSharding, PartitionSpec


def test_keys_on_a_one_device_mesh():
    mesh = Mesh(lamina.local_devices()[:1], ("i",))
    key = lamina.device_put(lamina.random.key(0), NamedSharding(mesh, PartitionSpec()))
    assert lamina.random.split(key).shape == (2,)
    np.testing.assert_allclose(lamina.random.normal(key, (2,)), [1.6226422, 2.0252647], rtol=1e-6)
