"""`lamina.extend.sharding`: XLA sharding protos (`jax.extend.sharding`).

The proto conversions are jaxlib's; ``GSPMDSharding`` belongs to lamina-sharding,
which is not built yet (issue 17).
"""

from jaxlib import xla_client

__all__ = [
    "GSPMDSharding",  # noqa: F822 (__getattr__ says it is not built)
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


def __getattr__(name: str):
    if name == "GSPMDSharding":
        raise AttributeError("lamina.extend.sharding.GSPMDSharding is not built yet (issue 17)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
