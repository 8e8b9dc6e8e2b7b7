"""``with_sharding_constraint``: ask that an intermediate value be laid out by a given
sharding (the ``sharding_constraint`` primitive).

On one device every layout is the same one, so the constraint lowers to its operand
and eagerly places the value by the sharding. Layouts across several devices (a
``NamedSharding`` over a mesh) arrive with lamina's sharding layer, which compiles
programs for more than one device; until then such constraints are refused with a
message saying so, rather than silently ignored.
"""

from __future__ import annotations

from lamina.interpreters import Sharding, ad, device_put
from lamina.ir import Primitive, tree_util

__all__ = ["sharding_constraint_p", "with_sharding_constraint"]

sharding_constraint_p = Primitive("sharding_constraint")


def _impl(x, *, sharding, layout, context_mesh, unconstrained_dims):
    del layout, context_mesh, unconstrained_dims
    return device_put(x, sharding)


def _lowering(ctx, x, *, sharding, layout, context_mesh, unconstrained_dims):
    del ctx, layout, context_mesh, unconstrained_dims
    if sharding.num_devices != 1:
        raise NotImplementedError(
            f"with_sharding_constraint to {sharding} spans {sharding.num_devices} devices; "
            "lamina compiles single-device programs until its sharding layer lands"
        )
    return [x]


def _batching(axis_data, vals, dims, **params):
    del axis_data
    return sharding_constraint_p.bind(vals[0], **params), dims[0]


sharding_constraint_p.def_abstract_eval(lambda x, **_: x)
sharding_constraint_p.def_impl(_impl)
sharding_constraint_p.def_lowering(_lowering)
ad.deflinear(sharding_constraint_p)
sharding_constraint_p.def_transpose(
    lambda ct, x, **params: [sharding_constraint_p.bind(ct, **params)]
)
sharding_constraint_p.def_batching(_batching)


def _check_sharding(sharding):
    if not isinstance(sharding, Sharding):
        raise TypeError(
            "with_sharding_constraint requires a Sharding (e.g. SingleDeviceSharding or "
            f"NamedSharding) for each leaf, got {sharding!r} of type {type(sharding)}. "
            "A PartitionSpec needs a mesh: wrap it as NamedSharding(mesh, spec)."
        )
    return sharding


def with_sharding_constraint(x, shardings):
    """``x`` (a pytree of arrays) unchanged, constrained to be laid out by
    ``shardings`` (one sharding, or a pytree prefix of ``x`` of them)."""
    leaves, tree = tree_util.tree_flatten(x)
    per_leaf = tree_util.broadcast_prefix(shardings, x, is_leaf=lambda s: s is None)
    outs = [
        sharding_constraint_p.bind(
            leaf,
            sharding=_check_sharding(sharding),
            layout=None,
            context_mesh=None,
            unconstrained_dims=frozenset(),
        )
        for leaf, sharding in zip(leaves, per_leaf, strict=True)
    ]
    return tree_util.tree_unflatten(tree, outs)
