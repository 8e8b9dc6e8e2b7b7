"""`lamina.experimental.mesh_utils`: arrays of devices shaped for a `Mesh`
(`jax.experimental.mesh_utils`)."""

from lamina.sharding.mesh_utils import *  # noqa: F403
from lamina.sharding.mesh_utils import __all__  # noqa: F401
