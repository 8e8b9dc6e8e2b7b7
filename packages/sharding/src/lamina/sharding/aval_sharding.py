"""The sharding an abstract value reports (``jax.typeof(x).sharding``): a
``NamedSharding`` over the empty abstract mesh, no dimension split, as JAX 0.10.2 gives
for arrays whose types carry no mesh axes."""

from __future__ import annotations

import functools

from lamina.ir import register_aval_sharding
from lamina.sharding.mesh import EMPTY_ABSTRACT_MESH
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec

__all__ = ["unsharded_type_sharding"]


@functools.cache
def unsharded_type_sharding(ndim: int) -> NamedSharding:
    """``NamedSharding(AbstractMesh((), ()), P(None, ...))`` with ``ndim`` entries."""
    return NamedSharding(EMPTY_ABSTRACT_MESH, PartitionSpec(*[None] * ndim))


register_aval_sharding(lambda aval: unsharded_type_sharding(aval.ndim))
