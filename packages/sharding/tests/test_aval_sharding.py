"""typeof(x).sharding: as JAX 0.10.2 reports it for arrays whose type has no mesh axes
(optax reads ``jax.typeof(a).sharding.mesh.are_all_axes_explicit``)."""

import numpy as np

from lamina.interpreters import device_put, typeof
from lamina.sharding import AbstractMesh, NamedSharding, P


def test_type_sharding_of_plain_arrays():
    for shape, spec in [((), P()), ((4,), P(None)), ((2, 3), P(None, None))]:
        sharding = typeof(device_put(np.ones(shape, np.float32))).sharding
        assert isinstance(sharding, NamedSharding)
        assert sharding.spec == spec
        assert sharding.mesh == AbstractMesh((), ())
        assert not sharding.mesh.are_all_axes_explicit
    # recorded from JAX 0.10.2
    assert repr(typeof(device_put(np.ones(4))).sharding) == (
        "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None,))"
    )
