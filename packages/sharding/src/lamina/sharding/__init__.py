"""lamina.sharding: meshes, shardings and sharded arrays (``jax.sharding``)."""

from lamina.interpreters import Sharding, SingleDeviceSharding
from lamina.sharding.axis_types import AxisType, ManualAxisType
from lamina.sharding.mesh import AbstractDevice, AbstractMesh, Mesh, make_mesh
from lamina.sharding.named_sharding import DuplicateSpecError, IndivisibleError, NamedSharding
from lamina.sharding.partition_spec import P, PartitionSpec

__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "ManualAxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
]

# Outside __all__ (jax.sharding's surface): names the root package and other modules use.
_extras = (DuplicateSpecError, IndivisibleError, P, make_mesh)
