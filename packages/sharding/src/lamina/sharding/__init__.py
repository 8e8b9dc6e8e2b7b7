"""lamina.sharding: meshes, shardings and sharded arrays (``jax.sharding``).

``__all__`` is ``jax.sharding``'s surface (JAX 0.10.2) as far as it is built; the names
after it are what the root package (``lamina.make_mesh``, ``lamina.debug``, ...) and the
other modules of the sharding work use.
"""

from lamina.interpreters import Sharding, SingleDeviceSharding
from lamina.sharding import aval_sharding as _aval_sharding  # registers typeof(x).sharding
from lamina.sharding.array_creation import (
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from lamina.sharding.auto_axes import auto_axes, explicit_axes
from lamina.sharding.axis_types import AxisType, ManualAxisType
from lamina.sharding.mesh import AbstractDevice, AbstractMesh, Mesh, make_mesh
from lamina.sharding.mesh_context import (
    current_mesh,
    get_abstract_mesh,
    get_mesh,
    set_mesh,
    use_abstract_mesh,
)
from lamina.sharding.named_sharding import DuplicateSpecError, IndivisibleError, NamedSharding
from lamina.sharding.out_sharding import out_sharding as _out_sharding  # registers it
from lamina.sharding.partition_spec import UNCONSTRAINED, P, PartitionSpec
from lamina.sharding.pmap import pmap
from lamina.sharding.reshard import reshard, reshard_p
from lamina.sharding.shard_map import Infer, shard_map, shard_map_p
from lamina.sharding.smap import smap
from lamina.sharding.spec_constraint import spec_sharding as _spec_sharding  # registers it
from lamina.sharding.visualize import sharding_table, visualize_array_sharding, visualize_sharding

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
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
    "use_abstract_mesh",
]


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
    """A ``SingleDeviceSharding`` of ``device``."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


# Outside __all__: used by the root package and the other sharding modules.
_EXTRAS = (
    DuplicateSpecError,
    IndivisibleError,
    Infer,
    P,
    UNCONSTRAINED,
    current_mesh,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
    pmap,
    reshard_p,
    shard_map,
    shard_map_p,
    sharding_table,
    smap,
    visualize_array_sharding,
    visualize_sharding,
)
del _aval_sharding, _out_sharding, _spec_sharding
