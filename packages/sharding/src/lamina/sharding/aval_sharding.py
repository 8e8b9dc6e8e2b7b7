"""The sharding an abstract value reports (``jax.typeof(x).sharding``): a
``NamedSharding`` over the empty abstract mesh, no dimension split, as JAX 0.10.2 gives
for arrays whose types carry no mesh axes."""

from __future__ import annotations

import functools

from lamina.ir import (
    register_aval_sharding,
    register_context_mesh,
    register_context_placement,
    register_type_placement,
    register_value_sharding,
)
from lamina.sharding.mesh import EMPTY_ABSTRACT_MESH
from lamina.sharding.mesh_state import concrete_mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec

__all__ = ["unsharded_type_sharding"]


@functools.cache
def unsharded_type_sharding(ndim: int) -> NamedSharding:
    """``NamedSharding(AbstractMesh((), ()), P(None, ...))`` with ``ndim`` entries."""
    return NamedSharding(EMPTY_ABSTRACT_MESH, PartitionSpec(*[None] * ndim))


register_aval_sharding(lambda aval: unsharded_type_sharding(aval.ndim))


def value_type_sharding(x):
    """The sharding the type of array ``x`` records: its spec over the abstract mesh,
    keeping only the mesh's ``Explicit`` axes (``None`` when it names none)."""
    s = getattr(x, "_sharding", None)
    if s is None and hasattr(x, "_base_array"):  # PRNG keys: their data's layout
        s = x._base_array._sharding
    if type(s) is not NamedSharding:
        return None
    explicit = set(s.mesh.explicit_axes)
    if not explicit:
        return None
    entries = []
    for e in tuple(s.spec)[: x.ndim]:
        names = e if isinstance(e, tuple) else (e,)
        kept = tuple(n for n in names if n in explicit)
        entries.append(None if not kept else kept[0] if len(kept) == 1 else kept)
    entries += [None] * (len(x.shape) - len(entries))  # one entry per dimension, as in JAX
    return NamedSharding(s.mesh.abstract_mesh, PartitionSpec(*entries))


register_value_sharding(value_type_sharding)


def type_placement(aval):
    """The type's sharding over the devices of the mesh ``set_mesh`` put in force, when
    that mesh is the type's (``None`` otherwise)."""
    mesh, s = concrete_mesh.value, aval.type_sharding
    if mesh is None or mesh.empty or mesh.abstract_mesh != s.mesh:
        return None
    return NamedSharding(mesh, s.spec)


register_type_placement(type_placement)


def _context_mesh():
    mesh = concrete_mesh.value
    return None if mesh is None or mesh.empty else mesh


register_context_mesh(_context_mesh)


@functools.cache
def _placement(mesh, ndim: int) -> NamedSharding:
    entries = [None] * ndim if mesh.explicit_axes else []  # JAX: the type's spec, or P()
    return NamedSharding(mesh, PartitionSpec(*entries))


def context_placement(ndim: int):
    """Where an untyped result of rank ``ndim`` goes under ``set_mesh``: replicated over
    the mesh's devices (``None`` without a mesh of several devices)."""
    mesh = concrete_mesh.value
    if mesh is None or mesh.empty or mesh.size == 1:
        return None
    return _placement(mesh, ndim)


register_context_placement(context_placement)
