"""Shardings given as bare specs: the ``out_sharding=`` argument of creation and shape
functions (``jnp.zeros``, ``lax.broadcasted_iota``, ...), a ``PartitionSpec`` over the
mesh in force or a ``NamedSharding``, read as a sharding over the abstract mesh; and a
``PartitionSpec`` given to ``device_put``, placed on the mesh of ``set_mesh``; as JAX
reads them."""

from __future__ import annotations

from lamina.ir import register_out_sharding, register_spec_placement
from lamina.sharding.axis_types import AxisType
from lamina.sharding.mesh import Mesh
from lamina.sharding.mesh_context import get_abstract_mesh
from lamina.sharding.mesh_state import concrete_mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec

__all__ = ["out_sharding", "spec_placement"]


def out_sharding(sharding, api_name: str) -> NamedSharding | None:
    """``sharding`` over the abstract mesh (``None`` for a sharding over no mesh)."""
    if isinstance(sharding, NamedSharding) and sharding.mesh.empty:
        return None
    if not isinstance(sharding, (NamedSharding, PartitionSpec)):
        raise TypeError(
            f"`out_sharding` argument of {api_name} only supports instances of "
            f"`NamedSharding` or `PartitionSpec`. Got {sharding} of type: {type(sharding)}"
        )
    mesh = get_abstract_mesh()
    if isinstance(sharding, PartitionSpec):
        if mesh.empty:
            raise ValueError(
                "Using PartitionSpec when you are not under a mesh context is not allowed. "
                "Please pass a NamedSharding instance or enter into a mesh context via "
                f"`jax.set_mesh`. Got {sharding}"
            )
        sharding = NamedSharding(mesh, sharding)
    else:
        own = sharding.mesh.abstract_mesh
        auto = all(t == AxisType.Auto for t in own.axis_types)
        if not mesh.empty and own != mesh and not (auto and mesh.are_all_axes_auto):
            raise ValueError(
                f"Context mesh {mesh} should match the mesh of sharding {own} passed to {api_name}."
            )
        if isinstance(sharding.mesh, Mesh):
            sharding = NamedSharding(own, sharding.spec)
    types = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_types, strict=True))
    for entry in sharding.spec:
        for name in entry if isinstance(entry, tuple) else (entry,):
            if types.get(name) in (AxisType.Auto, AxisType.Manual):
                raise ValueError(
                    f"PartitionSpec passed to {api_name} cannot contain axis names that are "
                    f"of type Auto or Manual. Got PartitionSpec: {sharding.spec} with axis "
                    f"name: {name} of type: {types[name]}"
                )
    return sharding


register_out_sharding(out_sharding)


def spec_placement(x) -> NamedSharding | None:
    """``device_put(x, P(...))``: the spec over the mesh of ``set_mesh``."""
    if not isinstance(x, PartitionSpec):
        return None
    mesh = concrete_mesh.value
    if mesh is None or mesh.empty:
        raise ValueError(
            "Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to device_put"
        )
    return NamedSharding(mesh, x)


register_spec_placement(spec_placement)
