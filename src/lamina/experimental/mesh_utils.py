"""`lamina.experimental.mesh_utils`: arrays of devices shaped for a `Mesh`
(`jax.experimental.mesh_utils`)."""

from lamina.sharding.mesh_utils import (
    create_device_mesh,
    create_hybrid_device_mesh,
    device_kind_handler_dict,
)

__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]
