"""A bare ``PartitionSpec`` given to ``with_sharding_constraint`` stands for a
``NamedSharding`` over the mesh in force: the one of ``set_mesh`` (or ``with mesh:``),
else the abstract mesh of the ``shard_map`` body being traced. A ``NamedSharding`` over
an abstract mesh is taken over the concrete mesh in force of that shape, as JAX does
(so that it can lay out an array outside ``jit``)."""

from __future__ import annotations

from lamina.lax import register_spec_sharding
from lamina.sharding.mesh import AbstractMesh
from lamina.sharding.mesh_context import current_mesh, get_abstract_mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec

__all__ = ["spec_sharding"]


def spec_sharding(x) -> NamedSharding | None:
    """``NamedSharding(mesh in force, x)`` for a spec ``x``, or for a NamedSharding
    over an abstract mesh; None for anything else."""
    if isinstance(x, NamedSharding) and isinstance(x.mesh, AbstractMesh):
        mesh = current_mesh()
        if mesh.empty or mesh.abstract_mesh != x.mesh:
            return None
        return NamedSharding(mesh, x.spec, memory_kind=x.memory_kind)
    if not isinstance(x, PartitionSpec):
        return None
    mesh = current_mesh()
    if mesh.empty:
        mesh = get_abstract_mesh()
    if mesh.empty:
        raise RuntimeError(
            "with_sharding_constraint requires a non-empty mesh in context if you are "
            "passing `PartitionSpec`s to shardings. You can define a context mesh via "
            "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to shardings and "
            "then the mesh context manager is not required."
        )
    return NamedSharding(mesh, x)


register_spec_sharding(spec_sharding)
