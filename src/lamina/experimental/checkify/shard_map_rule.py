"""The checkify rule of ``shard_map``: the body checkified on every device, the
devices' errors brought out stacked along a leading axis (reported per mapped index,
as JAX 0.10.2 does)."""

from __future__ import annotations

from lamina import lax
from lamina.experimental.checkify.interpreter import checkify_jaxpr, error_checks
from lamina.ir.tree_util import tree_flatten, tree_unflatten
from lamina.sharding import PartitionSpec, shard_map, shard_map_p

__all__ = []


def _shard_map_rule(error, enabled_errors, *args, jaxpr, mesh, in_specs, out_specs,
                    newly_manual_axes, **params):  # fmt: skip
    err_vals, err_tree = tree_flatten(error)
    n = len(err_vals)
    stacked = PartitionSpec(tuple(a for a in mesh.axis_names if a in newly_manual_axes))
    found = {}

    def body(*flat):
        checked, outs = checkify_jaxpr(
            jaxpr, enabled_errors, tree_unflatten(err_tree, list(flat[:n])), *flat[n:]
        )
        leaves, found["tree"] = tree_flatten(checked)
        return [lax.expand_dims(leaf, (0,)) for leaf in leaves], list(outs)

    mapped = shard_map(
        body,
        mesh=mesh,
        in_specs=(PartitionSpec(),) * n + tuple(in_specs),
        out_specs=(stacked, list(out_specs)),
        axis_names=set(newly_manual_axes),
        check_vma=False,
    )
    err_leaves, outs = mapped(*err_vals, *args)
    return tree_unflatten(found["tree"], err_leaves), outs


error_checks[shard_map_p] = _shard_map_rule
