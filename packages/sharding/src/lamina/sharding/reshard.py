"""``reshard``: lay values out by new shardings (``jax.sharding.reshard``)."""

from __future__ import annotations

from lamina.interpreters import device_put
from lamina.ir import tree_util
from lamina.sharding.mesh_context import current_mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec

__all__ = ["reshard"]


def _as_sharding(target):
    if isinstance(target, PartitionSpec):
        mesh = current_mesh()
        if mesh.empty:
            raise ValueError(
                "Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to `reshard`"
            )
        return NamedSharding(mesh, target)
    return target


def reshard(xs, out_shardings):
    """Each leaf of ``xs`` laid out by its entry of ``out_shardings`` (a ``Sharding``
    or, under ``set_mesh``, a ``PartitionSpec``; one for all leaves or a matching
    tree)."""
    leaves, tree = tree_util.tree_flatten(xs)
    if isinstance(out_shardings, (PartitionSpec, NamedSharding)) or not isinstance(
        out_shardings, (list, tuple, dict)
    ):
        targets = [out_shardings] * len(leaves)
    else:
        targets = tree_util.tree_leaves(
            out_shardings, is_leaf=lambda s: isinstance(s, (PartitionSpec, NamedSharding))
        )
    results = [device_put(x, _as_sharding(t)) for x, t in zip(leaves, targets, strict=True)]
    return tree_util.tree_unflatten(tree, results)
