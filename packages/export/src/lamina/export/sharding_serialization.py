"""The sharding tables of JAX's export schema: ``Sharding`` (holding a
``NamedSharding``), ``NamedSharding``, ``AbstractMesh``, ``AbstractDevice`` and
``PartitionSpec``, written as JAX 0.10.2 writes them and read back into
``lamina.sharding`` objects (on abstract meshes)."""

from __future__ import annotations

import numpy as np

from lamina.export.flatbuffer import Builder, FlatbufferError, Table
from lamina.export.pytree_serialization import write_array
from lamina.sharding import AbstractDevice, AbstractMesh, AxisType, NamedSharding, PartitionSpec

__all__ = [
    "abstract_named_sharding",
    "read_abstract_mesh",
    "read_named_sharding",
    "read_sharding",
    "write_abstract_mesh",
    "write_named_sharding",
    "write_sharding",
]

_AXIS_TYPE_CODES = {AxisType.Auto: 1, AxisType.Explicit: 2, AxisType.Manual: 3}
_CODE_AXIS_TYPES = {c: t for t, c in _AXIS_TYPE_CODES.items()}
# Fields of the AbstractDevice, AbstractMesh, PartitionSpec, NamedSharding, Sharding tables.
_DEV_KIND, _DEV_CORES, _DEV_PLATFORM = range(3)
_MESH_SIZES, _MESH_NAMES, _MESH_TYPES, _MESH_DEVICE = range(4)
_SPEC_PARTITIONS, _SPEC_REDUCED, _SPEC_UNREDUCED = range(3)
_NS_MESH, _NS_SPEC, _NS_MEMORY_KIND, _NS_MESH_IDX = range(4)
_SH_HLO_PROTO, _SH_NAMED = 1, 2


def abstract_named_sharding(sharding) -> NamedSharding | None:
    """The ``NamedSharding`` an export records for an argument or result laid out by
    ``sharding``: the same spec on the mesh's abstract mesh (None for other shardings)."""
    mesh, spec = getattr(sharding, "mesh", None), getattr(sharding, "spec", None)
    if mesh is None or spec is None:
        return None
    kind = sharding.memory_kind or "device"
    return NamedSharding(mesh.abstract_mesh, spec, memory_kind=kind)


# ---------------------------------------------------------------------- writing


def _write_abstract_device(b: Builder, device) -> int:
    if device is None:
        return 0
    kind, platform = b.create_string(device.device_kind), b.create_string(device.platform)
    b.start_table(3)
    b.add_offset(_DEV_KIND, kind)
    b.add_scalar(_DEV_CORES, "I", device.num_cores, None)
    b.add_offset(_DEV_PLATFORM, platform)
    return b.end_table()


def write_abstract_mesh(b: Builder, mesh) -> int:
    sizes = b.create_scalar_vector(list(mesh.axis_sizes), np.uint32)
    names = write_array(b, Builder.create_string, mesh.axis_names)
    types = b.create_scalar_vector([_AXIS_TYPE_CODES[t] for t in mesh.axis_types], np.uint8)
    device = _write_abstract_device(b, mesh.abstract_device)
    b.start_table(4)
    b.add_offset(_MESH_SIZES, sizes)
    b.add_offset(_MESH_NAMES, names)
    b.add_offset(_MESH_TYPES, types)
    b.add_offset(_MESH_DEVICE, device)
    return b.end_table()


def _write_spec_axis(b: Builder, entry) -> int:
    axes = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
    off = write_array(b, Builder.create_string, axes)
    b.start_table(1)
    b.add_offset(0, off)
    return b.end_table()


def _write_spec(b: Builder, spec) -> int:
    partitions = write_array(b, _write_spec_axis, tuple(spec))
    reduced = write_array(b, Builder.create_string, spec.reduced)
    unreduced = write_array(b, Builder.create_string, spec.unreduced)
    b.start_table(3)
    b.add_offset(_SPEC_PARTITIONS, partitions)
    b.add_offset(_SPEC_REDUCED, reduced)
    b.add_offset(_SPEC_UNREDUCED, unreduced)
    return b.end_table()


def write_named_sharding(b: Builder, sharding, mesh_index: dict) -> int:
    """A ``NamedSharding`` table; ``mesh_index`` maps abstract meshes to their place in
    the export's table of meshes."""
    mesh = sharding.mesh.abstract_mesh
    mesh_off = write_abstract_mesh(b, mesh)
    spec_off = _write_spec(b, sharding.spec)
    kind = 0 if sharding.memory_kind is None else b.create_string(sharding.memory_kind)
    b.start_table(4)
    b.add_offset(_NS_MESH, mesh_off)
    b.add_offset(_NS_SPEC, spec_off)
    b.add_offset(_NS_MEMORY_KIND, kind)
    b.add_scalar(_NS_MESH_IDX, "I", mesh_index[mesh], 0)
    return b.end_table()


def write_sharding(b: Builder, sharding, mesh_index: dict) -> int:
    """A ``Sharding`` table: empty for None (unspecified), else a ``NamedSharding``."""
    named = 0 if sharding is None else write_named_sharding(b, sharding, mesh_index)
    b.start_table(3)
    b.add_offset(_SH_NAMED, named)
    return b.end_table()


# ---------------------------------------------------------------------- reading


def _read_abstract_device(t: Table | None):
    if t is None:
        return None
    kind = t.string(_DEV_KIND)
    if kind is None:
        raise FlatbufferError("an abstract device has no device kind")
    cores = t.scalar(_DEV_CORES, "I", None)
    platform = t.string(_DEV_PLATFORM)
    if not platform:  # written before platforms were recorded: guessed from the kind
        low = kind.lower()
        if "cpu" in low:
            platform = "cpu"
        elif "tpu" in low:
            platform = "tpu"
        elif any(k in low for k in ("nvidia", "tesla", "amd")):
            platform = "gpu"
        else:
            raise ValueError(f"Got unexpected device_kind={kind!r}")
    return AbstractDevice(kind, cores, platform)


def read_abstract_mesh(t: Table | None):
    if t is None:
        raise FlatbufferError("a named sharding has no mesh")
    sizes = tuple(t.scalars(_MESH_SIZES, np.uint32))
    names = tuple(t.strings(_MESH_NAMES))
    codes = t.scalars(_MESH_TYPES, np.uint8)
    if any(c not in _CODE_AXIS_TYPES for c in codes):
        raise FlatbufferError("unknown mesh axis type")
    if len(sizes) != len(names) or len(codes) != len(names):
        raise FlatbufferError("the mesh's axis sizes, names and types differ in number")
    types = tuple(_CODE_AXIS_TYPES[c] for c in codes)
    device = _read_abstract_device(t.table(_MESH_DEVICE))
    try:
        return AbstractMesh(sizes, names, types, abstract_device=device)
    except (TypeError, ValueError) as e:
        raise ValueError(f"cannot read the abstract mesh: {e}") from None


def _read_spec(t: Table | None) -> PartitionSpec:
    if t is None:
        raise FlatbufferError("a named sharding has no partition spec")
    entries = []
    for axis in t.tables(_SPEC_PARTITIONS):
        names = tuple(axis.strings(0))
        entries.append(None if not names else names[0] if len(names) == 1 else names)
    reduced = frozenset(t.strings(_SPEC_REDUCED))
    unreduced = frozenset(t.strings(_SPEC_UNREDUCED))
    try:
        return PartitionSpec(*entries, reduced=reduced, unreduced=unreduced)
    except (TypeError, ValueError) as e:
        raise ValueError(f"cannot read the partition spec: {e}") from None


def read_named_sharding(t: Table, meshes: list) -> NamedSharding:
    """A ``NamedSharding`` table, its mesh taken from ``meshes`` (the export's table
    of meshes) when there is one, else from the table itself."""
    if meshes:
        idx = t.scalar(_NS_MESH_IDX, "I")
        if idx >= len(meshes):
            raise FlatbufferError("a mesh index is out of range")
        mesh = meshes[idx]
    else:
        mesh = read_abstract_mesh(t.table(_NS_MESH))
    spec = _read_spec(t.table(_NS_SPEC))
    try:
        return NamedSharding(mesh, spec, memory_kind=t.string(_NS_MEMORY_KIND))
    except (TypeError, ValueError) as e:
        raise ValueError(f"cannot read the named sharding: {e}") from None


def read_sharding(t: Table, meshes: list) -> NamedSharding | None:
    """A ``Sharding`` table: its ``NamedSharding``, or None (unspecified)."""
    named = t.table(_SH_NAMED)
    if named is not None:
        return read_named_sharding(named, meshes)
    if t.has(_SH_HLO_PROTO):
        raise ValueError("lamina.export does not read exports with HloSharding protos")
    return None
