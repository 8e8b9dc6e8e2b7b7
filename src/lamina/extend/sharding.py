"""`lamina.extend.sharding`: XLA sharding protos (`jax.extend.sharding`).

The proto conversions are jaxlib's; ``GSPMDSharding`` (a sharding given by an
``HloSharding`` over a list of devices) is lamina.interpreters'.
"""

from jaxlib import xla_client

from lamina.interpreters import GSPMDSharding

__all__ = [
    "GSPMDSharding",
    "get_hlo_sharding_from_serialized_proto",
    "get_op_sharding_from_serialized_proto",
    "get_serialized_proto_from_hlo_sharding",
    "xla_client",
]


def get_op_sharding_from_serialized_proto(sharding: bytes) -> xla_client.OpSharding:
    """The ``OpSharding`` proto serialized in ``sharding``."""
    proto = xla_client.OpSharding()
    proto.ParseFromString(sharding)
    return proto


def get_hlo_sharding_from_serialized_proto(sharding: bytes) -> xla_client.HloSharding:
    """The ``HloSharding`` of the ``OpSharding`` proto serialized in ``sharding``."""
    return xla_client.HloSharding.from_proto(get_op_sharding_from_serialized_proto(sharding))


def get_serialized_proto_from_hlo_sharding(sharding: xla_client.HloSharding) -> bytes:
    """``sharding`` as a serialized ``OpSharding`` proto."""
    return sharding.to_proto().SerializeToString()
