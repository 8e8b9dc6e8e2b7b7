"""``reshard``: lay values out by new shardings (``jax.sharding.reshard``), the
``reshard`` primitive.

The result's type records the new layout (``f32[8,4@y]``). Eagerly the value is placed
by it; under ``jit`` the lowering asks XLA for that layout. It is linear: the cotangent
goes back to the operand's layout.
"""

from __future__ import annotations

from lamina.interpreters import ad, device_put, mlir, typeof
from lamina.ir import (
    Primitive,
    ShapedArray,
    check_divisible,
    device_count_error,
    register_reshard,
    tree_util,
)
from lamina.lax import mesh_axes
from lamina.sharding.mesh import AbstractMesh, Mesh
from lamina.sharding.mesh_context import current_mesh, get_abstract_mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec

__all__ = ["reshard", "reshard_p", "typed_like"]

reshard_p = Primitive("reshard")


def typed_like(aval, sharding):
    """``aval`` whose type records ``sharding`` (a ``NamedSharding`` over an abstract
    mesh); a mesh without ``Explicit`` axes records none."""
    if sharding is None or not sharding.mesh.explicit_axes:
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type, aval.vma)
    return check_divisible(aval.update(sharding=sharding))


def _concrete(sharding, concrete_mesh):
    """``sharding`` over devices: those of ``concrete_mesh``, else of the mesh in force
    with the same axes (``None`` when there is none)."""
    mesh = concrete_mesh if concrete_mesh is not None else current_mesh()
    target = sharding.mesh
    if mesh.empty or (mesh.axis_names, mesh.axis_sizes) != (target.axis_names, target.axis_sizes):
        return None
    if mesh.axis_types != target.axis_types:
        mesh = mesh.update(axis_types=target.axis_types)
    return NamedSharding(mesh, sharding.spec)


def _impl(x, *, dst_sharding, concrete_mesh):
    target = _concrete(dst_sharding, concrete_mesh)
    if target is None:
        raise device_count_error(typeof(x).update(sharding=dst_sharding), _device_count(x))
    held = getattr(x, "sharding", None)
    if (  # over automatic axes only, the value stays laid out as it is
        not target.mesh.explicit_axes
        and isinstance(held, NamedSharding)
        and held.mesh.shape_tuple == target.mesh.shape_tuple
    ):
        target = NamedSharding(target.mesh, held.spec)
    return device_put(x, target)


def _device_count(x) -> int:
    sharding = getattr(x, "sharding", None)
    return 1 if sharding is None else sharding.num_devices


def _lowering(ctx, x, *, dst_sharding, concrete_mesh):
    aval = ctx.avals_out[0]
    target = _concrete(dst_sharding, concrete_mesh)
    if target is None or target.num_devices == 1 or mesh_axes() is not None:
        return [x]
    if not target.mesh.explicit_axes:  # automatic axes: XLA chooses
        return [x]
    hlo = target._to_xla_hlo_sharding(aval.ndim)
    return [mlir.wrap_with_sharding_op(ctx, x, aval, hlo)]


def _transpose(ct, x, *, dst_sharding, concrete_mesh):
    sharding = x.aval.type_sharding
    if sharding is None:  # back to no split
        sharding = NamedSharding(dst_sharding.mesh, PartitionSpec(*[None] * x.aval.ndim))
    return [reshard_p.bind(ct, dst_sharding=sharding, concrete_mesh=concrete_mesh)]


def _batching(axis_data, vals, dims, *, dst_sharding, concrete_mesh):
    x, d = vals[0], dims[0]
    del axis_data
    if d is not None:  # the batch dimension keeps the operand's split, as in JAX
        entries = list(dst_sharding.spec) + [None] * (x.ndim - 1 - len(dst_sharding.spec))
        entries.insert(d, _spec_entry(x, d))
        dst_sharding = dst_sharding.update(spec=PartitionSpec(*entries))
    return reshard_p.bind(x, dst_sharding=dst_sharding, concrete_mesh=concrete_mesh), d


def _spec_entry(x, d):
    aval = getattr(x, "aval", None)
    s = getattr(aval, "type_sharding", None)
    if s is None or d >= len(s.spec):
        return None
    return s.spec[d]


reshard_p.def_abstract_eval(lambda x, *, dst_sharding, concrete_mesh: typed_like(x, dst_sharding))
reshard_p.def_impl(_impl)
reshard_p.def_lowering(_lowering)
ad.deflinear(reshard_p)
reshard_p.def_transpose(_transpose)
reshard_p.def_batching(_batching)
reshard_p.def_pp_params(
    lambda params: {},
    lambda params, in_avals, out_avals: {
        "dst_sharding": out_avals[0].sharding,
        "concrete_mesh": None,
    },
)


def _destination(s, aval):
    """The abstract sharding ``s`` (a spec or a sharding) stands for, its spec of
    ``aval``'s rank, and the concrete mesh it names (if any)."""
    if s is None:
        raise ValueError(
            "Reshard should only be used with out_shardings which are non-None and have a "
            f"non-empty mesh. Got sharding {s}."
        )
    concrete = None
    if isinstance(s, PartitionSpec):
        mesh = get_abstract_mesh()
        if mesh.empty:
            raise ValueError(
                "Using PartitionSpec when you are not under a mesh context is not allowed. "
                "Please pass a NamedSharding instance or enter into a mesh context via "
                f"`jax.set_mesh`. Got {s}"
            )
        spec = s
    elif isinstance(s, NamedSharding):
        mesh, spec = s.mesh, s.spec
        if isinstance(mesh, Mesh):
            concrete, mesh = mesh, mesh.abstract_mesh
        elif not isinstance(mesh, AbstractMesh) or mesh.empty:
            raise ValueError(
                "Reshard should only be used with out_shardings which are non-None and have "
                f"a non-empty mesh. Got sharding {s}."
            )
    else:
        raise ValueError(
            "Reshard should only be used with out_shardings which are non-None and have a "
            f"non-empty mesh. Got sharding {s}."
        )
    NamedSharding(mesh, spec)  # checks the spec's axes against the mesh
    if len(spec) > aval.ndim:
        raise AssertionError((aval.ndim, spec))
    entries = [*spec, *[None] * (aval.ndim - len(spec))]
    return NamedSharding(mesh, PartitionSpec(*entries)), concrete


def _is_target(s) -> bool:
    return s is None or isinstance(s, (PartitionSpec, NamedSharding))


def reshard(xs, out_shardings):
    """Each leaf of ``xs`` laid out by its entry of ``out_shardings`` (a ``Sharding``
    or, under ``set_mesh``, a ``PartitionSpec``; one for all leaves or a matching
    tree): its type records the new layout."""
    leaves, tree = tree_util.tree_flatten(xs)
    targets = tree_util.broadcast_prefix(out_shardings, xs, is_leaf=_is_target)
    results = []
    for x, t in zip(leaves, targets, strict=True):
        aval = typeof(x)
        dst, concrete = _destination(t, aval)
        typed_like(aval, dst)  # the splits must divide the dimensions, eagerly too
        results.append(reshard_p.bind(x, dst_sharding=dst, concrete_mesh=concrete))
    return tree_util.tree_unflatten(tree, results)


register_reshard(reshard)
