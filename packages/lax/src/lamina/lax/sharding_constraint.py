"""``with_sharding_constraint``: ask that an intermediate value be laid out by a given
sharding (the ``sharding_constraint`` primitive).

Eagerly the value is placed by the sharding. Under ``jit`` the constraint lowers to
XLA's ``@Sharding`` custom call carrying the sharding's GSPMD form, which XLA's SPMD
partitioner honours (the devices of the sharding join those the program runs on); on
one device it is the operand itself. It is linear (its transpose constrains the
cotangent alike) and ``vmap`` adds the batch dimension unpartitioned.
"""

from __future__ import annotations

from lamina.interpreters import (
    Sharding,
    ad,
    check_fits,
    device_put,
    mlir,
    sharding_with_new_dim,
)
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import Primitive, spec_of, tree_util
from lamina.lax.parallel.device_axes import is_device_axis, mesh_axes

__all__ = ["register_explicit_check", "sharding_constraint_p", "with_sharding_constraint"]

sharding_constraint_p = Primitive("sharding_constraint")


def _impl(x, *, sharding, layout, context_mesh, unconstrained_dims):
    del layout, context_mesh, unconstrained_dims
    return device_put(x, sharding)


def _manual_axes_named(sharding) -> list:
    """The axes ``sharding``'s spec names that the current ``shard_map`` body holds
    manually."""
    names = []
    for entry in getattr(sharding, "spec", ()):
        names += list(entry) if isinstance(entry, tuple) else [entry]
    return [n for n in names if isinstance(n, str) and is_device_axis(n)]


def _in_manual_body(ctx, x, sharding, aval):
    """Inside a ``shard_map`` body: only the automatic axes may be constrained."""
    if _manual_axes_named(sharding):
        mesh = sharding.mesh.abstract_mesh
        manual = [n for n in mesh.axis_names if is_device_axis(n)]
        kind = type(mesh.axis_types[0])
        mesh = mesh.update_axis_types(dict.fromkeys(manual, kind.Manual))
        raise ValueError(
            "The spec of NamedSharding passed to with_sharding_constraint can only refer "
            f"to Auto axes of the mesh. Got spec={sharding.spec} and mesh={mesh}. You "
            "probably meant to use `reshard` API?"
        )
    within = ctx.module_context.value_sharding
    if within is None:  # every axis is manual: nothing left to constrain
        return x
    dims = ",".join(str(d) for d in range(aval.ndim))
    op = hlo.CustomCallOp.build_generic(
        results=[x.type],
        operands=[x],
        attributes={
            "call_target_name": ir.StringAttr.get("Sharding"),
            "backend_config": ir.StringAttr.get(f"unspecified_dims=[{dims}]" if dims else ""),
            "mhlo.sharding": ir.StringAttr.get(within(aval.ndim, tuple(sharding.spec))),
        },
    )
    return op.result


def _lowering(ctx, x, *, sharding, layout, context_mesh, unconstrained_dims):
    del layout, context_mesh
    if sharding.num_devices == 1:
        return [x]
    if mesh_axes() is not None:
        return [_in_manual_body(ctx, x, sharding, ctx.avals_out[0])]
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


@sharding_constraint_p.def_sharding
def _sharding_rule(x, *, sharding, **_):
    """The result is typed as the operand (a constraint names only automatic axes)."""
    return spec_of(x)


sharding_constraint_p.def_impl(_impl)
sharding_constraint_p.def_lowering(_lowering)
ad.deflinear(sharding_constraint_p)
sharding_constraint_p.def_transpose(
    lambda ct, x, **params: [sharding_constraint_p.bind(ct, **params)]
)
sharding_constraint_p.def_batching(_batching)


# How a bare ``PartitionSpec`` becomes a sharding (over the mesh in force): set by
# ``lamina.sharding``, where specs and meshes live.
_spec_sharding: list = []


def register_spec_sharding(make) -> None:
    """``make(x)``: the sharding ``x`` stands for when it is a bare spec (or a sharding
    over an abstract mesh), else None."""
    _spec_sharding[:] = [make]


def _check_sharding(sharding):
    if _spec_sharding:
        sharding = _spec_sharding[0](sharding) or sharding
    if not isinstance(sharding, Sharding):
        raise TypeError(
            "with_sharding_constraint requires a Sharding (e.g. SingleDeviceSharding or "
            f"NamedSharding) for each leaf, got {sharding!r} of type {type(sharding)}. "
            "A PartitionSpec needs a mesh: wrap it as NamedSharding(mesh, spec)."
        )
    return sharding


# Over meshes with Explicit axes a constraint is an assertion on the operand's type, or
# refused: the check is set by ``lamina.sharding``, which knows the mesh in force.
_explicit_check: list = []


def register_explicit_check(check) -> None:
    """``check(aval, sharding)``: True when the constraint is an assertion the type
    satisfies (the value passes unchanged); raises JAX's errors for those refused."""
    _explicit_check[:] = [check]


def with_sharding_constraint(x, shardings):
    """``x`` (a pytree of arrays) unchanged, constrained to be laid out by
    ``shardings`` (one sharding, or a pytree prefix of ``x`` of them)."""
    leaves, tree = tree_util.tree_flatten(x)
    per_leaf = tree_util.broadcast_prefix(shardings, x, is_leaf=lambda s: s is None)
    per_leaf = [_check_sharding(s) for s in per_leaf]
    for leaf, sharding in zip(leaves, per_leaf, strict=True):
        if sharding.num_devices > 1 and hasattr(leaf, "shape"):
            try:  # a rank the sharding fits (uneven dimensions are padded)
                sharding._to_xla_hlo_sharding(len(leaf.shape))
            except ValueError:
                check_fits(sharding, leaf.shape, "with_sharding_constraint arguments")
    outs = []
    for leaf, sharding in zip(leaves, per_leaf, strict=True):
        if _explicit_check and _explicit_check[0](leaf, sharding):
            outs.append(leaf)
            continue
        outs.append(
            sharding_constraint_p.bind(
                leaf,
                sharding=sharding,
                layout=None,
                context_mesh=None,
                unconstrained_dims=frozenset(),
            )
        )
    return tree_util.tree_unflatten(tree, outs)
