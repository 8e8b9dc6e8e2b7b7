"""`lamina.experimental.shard_map`: the earlier spelling of ``lamina.shard_map``
(`jax.experimental.shard_map`), with the mesh and specs positional and ``check_rep``
for ``check_vma``."""

import warnings

from lamina.sharding import shard_map as _shard_map

__all__ = ["shard_map"]

warnings.warn(
    "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map instead.",
    DeprecationWarning,
    stacklevel=2,
)


def shard_map(f, mesh, in_specs, out_specs, check_rep=True):
    """``lamina.shard_map(f, mesh=mesh, in_specs=..., out_specs=..., check_vma=check_rep)``."""
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_rep)
