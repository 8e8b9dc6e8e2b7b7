"""``smap``: ``shard_map`` over one mesh axis, with the mapped dimension of each input
and result given by position (``in_axes`` / ``out_axes``, as in ``vmap``)."""

from __future__ import annotations

from lamina.ir import tree_util
from lamina.sharding.partition_spec import PartitionSpec
from lamina.sharding.shard_map import Infer, shard_map

__all__ = ["smap"]


def _spec(axis_name, axis) -> PartitionSpec:
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, axis_name)


def _int_or_none_leaves(tree) -> bool:
    return all(isinstance(a, int) for a in tree_util.tree_leaves(tree))


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """``f`` run on blocks of its inputs split along ``in_axes`` over the mesh axis
    ``axis_name`` (of the mesh of ``set_mesh``); results joined along ``out_axes``."""
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
        raise TypeError(
            "smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of entries "
            "corresponding to the positional arguments passed to the function, but got "
            f"{in_axes}."
        )
    if in_axes is not Infer and not _int_or_none_leaves(in_axes):
        raise TypeError(
            "smap in_axes must be an int, None, jax.sharding.Infer, or (nested) container "
            f"with those types as leaves, but got {in_axes}."
        )
    if not _int_or_none_leaves(out_axes):
        raise TypeError(
            "smap out_axes must be an int, None, or (nested) container with those types "
            f"as leaves, but got {out_axes}."
        )

    def to_specs(axes):
        return tree_util.tree_map(lambda a: _spec(axis_name, a), axes, is_leaf=lambda a: a is None)

    in_specs = Infer if in_axes is Infer else to_specs(in_axes)
    out_specs = to_specs(out_axes)

    def wrap(g):
        return shard_map(g, in_specs=in_specs, out_specs=out_specs, axis_names={axis_name})

    return wrap if f is None else wrap(f)
