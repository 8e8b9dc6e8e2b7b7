"""A bare ``PartitionSpec`` given to ``with_sharding_constraint`` stands for a
``NamedSharding`` over the mesh in force: the one of ``set_mesh`` (or ``with mesh:``),
else the abstract mesh of the ``shard_map`` body being traced. A ``NamedSharding`` over
an abstract mesh is taken over the concrete mesh in force of that shape, as JAX does
(so that it can lay out an array outside ``jit``).

Over a mesh whose axes are all ``Explicit`` the constraint is an assertion on the
operand's type; elsewhere its spec may name only ``Auto`` axes, as in JAX."""

from __future__ import annotations

from lamina.interpreters import typeof
from lamina.lax import mesh_axes, register_explicit_check, register_spec_sharding
from lamina.sharding.axis_types import AxisType
from lamina.sharding.mesh import AbstractMesh
from lamina.sharding.mesh_context import current_mesh, get_abstract_mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import UNCONSTRAINED, PartitionSpec

__all__ = ["explicit_check", "spec_sharding"]


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


def _names(spec) -> list:
    found = []
    for e in spec:
        if e is not None and e is not UNCONSTRAINED:
            found += list(e) if isinstance(e, tuple) else [e]
    return found


def explicit_check(x, sharding) -> bool:
    """True when the constraint is an assertion ``x``'s type satisfies (over an
    all-``Explicit`` mesh in force); JAX's errors where it is refused."""
    if not isinstance(sharding, NamedSharding) or mesh_axes() is not None:
        return False  # shard_map bodies check their manual axes when lowering
    context = get_abstract_mesh()
    aval = typeof(x)
    if context.are_all_axes_explicit:
        if any(e is UNCONSTRAINED for e in sharding.spec):
            raise ValueError(
                f"{sharding.spec} cannot contain `P.UNCONSTRAINED` when no mesh axis_types "
                f"are `Auto`. Got mesh axis_types: {context.axis_types}"
            )
        held = aval.sharding.spec._normalized_spec_for_aval(aval.ndim)
        wanted = sharding.spec._normalized_spec_for_aval(aval.ndim)
        if tuple(held) != tuple(wanted):
            raise AssertionError(
                "`with_sharding_constraint` acts as an assert when all axes of mesh are of "
                f"type `Explicit`. The array sharding: {held} did not match the sharding "
                f"provided: {wanted}. Please use `jax.sharding.reshard` to shard your input "
                "to the sharding you want."
            )
        return True
    mesh = sharding.mesh.abstract_mesh
    kinds = mesh._name_to_type
    if any(kinds.get(n) != AxisType.Auto for n in _names(sharding.spec)):
        raise ValueError(
            "The spec of NamedSharding passed to with_sharding_constraint can only refer to "
            f"Auto axes of the mesh. Got spec={sharding.spec} and mesh={mesh}. You probably "
            "meant to use `reshard` API?"
        )
    return False


register_explicit_check(explicit_check)
