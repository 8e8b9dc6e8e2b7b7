"""``with_sharding_constraint``: ask that an intermediate value be laid out by a given
sharding (the ``sharding_constraint`` primitive).

Eagerly the value is placed by the sharding. Under ``jit`` the constraint lowers to
XLA's ``@Sharding`` custom call carrying the sharding's GSPMD form, which XLA's SPMD
partitioner honours (the devices of the sharding join those the program runs on); on
one device it is the operand itself. It is linear (its transpose constrains the
cotangent alike) and ``vmap`` adds the batch dimension unpartitioned.
"""

from __future__ import annotations

from lamina.interpreters import Sharding, ad, device_put, mlir, sharding_with_new_dim
from lamina.ir import Primitive, tree_util

__all__ = ["sharding_constraint_p", "with_sharding_constraint"]

sharding_constraint_p = Primitive("sharding_constraint")


def _impl(x, *, sharding, layout, context_mesh, unconstrained_dims):
    del layout, context_mesh, unconstrained_dims
    return device_put(x, sharding)


def _lowering(ctx, x, *, sharding, layout, context_mesh, unconstrained_dims):
    del layout, context_mesh
    if sharding.num_devices == 1:
        return [x]
    aval = ctx.avals_out[0]
    hlo = sharding._to_xla_hlo_sharding(aval.ndim)
    return [mlir.wrap_with_sharding_op(ctx, x, aval, hlo, unconstrained_dims)]


def _batching(axis_data, vals, dims, *, sharding, unconstrained_dims, **params):
    del axis_data
    x, d = vals[0], dims[0]
    if d is None:
        return sharding_constraint_p.bind(
            x, sharding=sharding, unconstrained_dims=unconstrained_dims, **params
        ), None
    out = sharding_constraint_p.bind(
        x,
        sharding=sharding_with_new_dim(sharding, x.ndim - 1, d),
        unconstrained_dims=frozenset(u + (u >= d) for u in unconstrained_dims),
        **params,
    )
    return out, d


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
