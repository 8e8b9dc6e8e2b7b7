"""``NamedSharding``: an array laid out over a mesh by a ``PartitionSpec``.

Dimension ``d`` of the array is cut into as many equal blocks as the product of the
sizes of the mesh axes its spec entry names; the device at mesh position ``(i_0, ...)``
holds, along ``d``, the block numbered by its coordinates on those axes (the first axis
major). Mesh axes the spec does not name replicate the blocks. This follows the
``Sharding`` protocol of ``lamina.interpreters``, so jaxlib's transfers and result
handlers take it as they take a ``SingleDeviceSharding``.
"""

from __future__ import annotations

import math

from jaxlib import xla_client

from lamina.interpreters import Sharding
from lamina.sharding.axis_types import AxisType
from lamina.sharding.mesh import AbstractMesh, Mesh
from lamina.sharding.partition_spec import UNCONSTRAINED, PartitionSpec
from lamina.sharding.sdy_sharding import SdyArray, SdyDim

__all__ = ["DuplicateSpecError", "IndivisibleError", "NamedSharding"]

_REPLICATED = xla_client.HloSharding.replicate()
_REPLICATE_GROUP = xla_client.OpSharding.Type.REPLICATED


class DuplicateSpecError(Exception):
    """A spec names one mesh axis for more than one dimension."""


class IndivisibleError(ValueError):
    """A dimension's size is not a multiple of the number of blocks it is cut into."""


def _names(entry) -> tuple:
    """The mesh axes one spec entry names."""
    if entry is None or entry is UNCONSTRAINED:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


def _check_spec(mesh, spec: PartitionSpec) -> None:
    seen: set = set()
    for entry in spec.partitions:
        for name in _names(entry):
            if name not in mesh.axis_names:
                raise ValueError(
                    f"Resource axis: {name} of {spec} is not found in mesh: {mesh.axis_names}."
                )
            if name in seen:
                raise DuplicateSpecError(
                    "A single NamedSharding spec specification can map every mesh axis to "
                    f"at most one positional dimension, but {spec} has duplicate entries "
                    f"for `{name}`"
                )
            seen.add(name)
    for which in ("unreduced", "reduced"):
        missing = [n for n in getattr(spec, which) if n not in mesh.axis_names]
        if missing:
            raise ValueError(
                f"{which.capitalize()} axes {','.join(map(str, missing))} is not found in "
                f"mesh.axis_names={mesh.axis_names}. Got pspec={spec}"
            )
    if UNCONSTRAINED in spec.partitions and AxisType.Auto not in mesh.axis_types:
        raise ValueError(
            f"{spec} cannot contain `P.UNCONSTRAINED` when no mesh axis_types are `Auto`. "
            f"Got mesh axis_types: {mesh.axis_types}"
        )


def _canonical_memory_kind(kind, mesh) -> str | None:
    """``kind`` checked against the first device of a concrete mesh (its default kind
    when ``None``); abstract meshes keep what they are given."""
    if not isinstance(mesh, Mesh) or mesh.empty:
        return kind
    device = mesh.devices.flat[0]
    if kind is None:
        return device.default_memory().kind
    kinds = [m.kind for m in device.addressable_memories()]
    if kind not in kinds:
        raise ValueError(
            f"Could not find memory addressable by device {device.device_kind}. Device "
            f"{device.device_kind} can address the following memory kinds: "
            f"{', '.join(kinds)}. Got memory kind: {kind}"
        )
    return kind


class NamedSharding(Sharding):
    """An array laid out over ``mesh`` as ``spec`` says.

    ``NamedSharding(mesh, spec, memory_kind=None)``; ``mesh`` is a ``Mesh`` or an
    ``AbstractMesh`` (the latter describes a layout without devices, as in types).
    """

    def __init__(self, mesh, spec, memory_kind=None, _logical_device_ids=None):
        super().__init__()
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(
                "NamedSharding's mesh must be a jax.sharding.Mesh or AbstractMesh, got "
                f"{mesh!r} of type {type(mesh).__name__}"
            )
        if not isinstance(spec, PartitionSpec):
            raise AttributeError(
                f"'{type(spec).__name__}' object has no attribute 'partitions': "
                f"NamedSharding's spec must be a PartitionSpec (P(...)), got {spec!r}"
            )
        _check_spec(mesh, spec)
        self._mesh = mesh
        self._spec = spec
        self._memory_kind = _canonical_memory_kind(memory_kind, mesh)
        self._logical_device_ids = _logical_device_ids
        self._indices_cache: dict[tuple, dict] = {}
        self._hash: int | None = None

    mesh = property(lambda self: self._mesh)
    spec = property(lambda self: self._spec)
    memory_kind = property(lambda self: self._memory_kind)

    # --- equality
    def _key(self) -> tuple:
        return (self._mesh, self._spec, self._memory_kind, self._logical_device_ids)

    def __eq__(self, other) -> bool:
        if not isinstance(other, NamedSharding):
            return False
        return self is other or self._key() == other._key()

    def __hash__(self) -> int:
        h = self._hash
        if h is None:  # computed once: every call of a partitioned jit hashes it
            h = self._hash = hash(self._key())
        return h

    def __reduce__(self):
        return _rebuild, self._key()

    def __repr__(self) -> str:
        kind = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        ids = (
            ""
            if self._logical_device_ids is None
            else f", logical_device_ids={self._logical_device_ids}"
        )
        return f"NamedSharding(mesh={self._mesh}, spec={self._spec}{kind}{ids})"

    def update(self, **kwargs) -> NamedSharding:
        """A copy with ``mesh``, ``spec`` or ``memory_kind`` replaced."""
        return NamedSharding(
            kwargs.pop("mesh", self._mesh),
            kwargs.pop("spec", self._spec),
            memory_kind=kwargs.pop("memory_kind", self._memory_kind),
            _logical_device_ids=kwargs.pop("_logical_device_ids", self._logical_device_ids),
            **kwargs,
        )

    def with_memory_kind(self, kind: str) -> NamedSharding:
        return self.update(memory_kind=kind)

    # --- devices
    def _concrete(self, what: str) -> Mesh:
        if isinstance(self._mesh, AbstractMesh):
            raise ValueError(f"{what} is not implemented for `jax.sharding.AbstractMesh`.")
        return self._mesh

    @property
    def device_set(self) -> set:
        return self._concrete("device_set")._flat_devices_set

    @property
    def _device_assignment(self) -> tuple:
        return self._concrete("_device_assignment")._flat_devices_tuple

    @property
    def _internal_device_list(self) -> xla_client.DeviceList:
        return self._concrete("_internal_device_list")._internal_device_list

    num_devices = property(lambda self: self._mesh.size)

    @property
    def is_fully_addressable(self) -> bool:
        mesh = self._concrete("is_fully_addressable")
        return not mesh.is_multi_process

    @property
    def is_fully_replicated(self) -> bool:
        sizes = self._mesh.shape
        return all(sizes[n] == 1 for entry in self._spec.partitions for n in _names(entry))

    # --- layout
    def _axes_per_dim(self, ndim: int) -> list[tuple]:
        return [_names(e) for e in self._spec.partitions] + [()] * (ndim - len(self._spec))

    def _tiles(self, ndim: int) -> list[int]:
        sizes = self._mesh.shape
        return [math.prod(sizes[n] for n in axes) for axes in self._axes_per_dim(ndim)]

    def _checked_tiles(self, shape: tuple) -> list[int]:
        self._spec._check_compatible_wrt_shape(shape)
        tiles = self._tiles(len(shape))
        for axis, (size, count) in enumerate(zip(shape, tiles, strict=True)):
            if size % count:
                raise IndivisibleError(
                    f"Sharding {self} implies that array axis {axis} is partitioned "
                    f"{count} times, but the dimension size is {size} (full shape: "
                    f"{tuple(shape)}, per-dimension tiling factors: {tiles} should evenly "
                    "divide the shape)"
                )
        return tiles

    def shard_shape(self, global_shape: tuple) -> tuple:
        """The shape of the block each device holds."""
        tiles = self._checked_tiles(tuple(global_shape))
        return tuple(size // count for size, count in zip(global_shape, tiles, strict=True))

    def devices_indices_map(self, global_shape: tuple) -> dict:
        """For each device of the mesh, the slices of the whole array it holds."""
        global_shape = tuple(global_shape)
        cached = self._indices_cache.get(global_shape)
        if cached is not None:
            return cached
        mesh = self._concrete("_device_assignment")
        tiles = self._checked_tiles(global_shape)
        axes_per_dim = self._axes_per_dim(len(global_shape))
        position = {name: i for i, name in enumerate(mesh.axis_names)}
        result = {}
        for coords, device in zip(_grid(mesh.axis_sizes), mesh._flat_devices_tuple, strict=True):
            index = []
            for size, count, axes in zip(global_shape, tiles, axes_per_dim, strict=True):
                if not axes:
                    index.append(slice(None))
                    continue
                block = 0
                for name in axes:
                    block = block * mesh.shape[name] + coords[position[name]]
                step = size // count
                index.append(slice(block * step, (block + 1) * step))
            result[device] = tuple(index)
        self._indices_cache[global_shape] = result
        return result

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> xla_client.HloSharding:
        """The layout as XLA's ``HloSharding``: an iota tile assignment over the mesh's
        device order, transposed so that the named axes come first."""
        self._spec._check_compatible_wrt_shape((0,) * num_dimensions)
        axes_per_dim = self._axes_per_dim(num_dimensions)
        tiles = self._tiles(num_dimensions)
        used = [name for axes in axes_per_dim for name in axes]
        rest = [name for name in self._mesh.axis_names if name not in used]
        replicas = math.prod(self._mesh.shape[n] for n in rest)
        if math.prod(tiles) == 1:
            return _REPLICATED
        position = {name: i for i, name in enumerate(self._mesh.axis_names)}
        order = [position[n] for n in used + rest]
        groups = [_REPLICATE_GROUP] if replicas > 1 else []
        return xla_client.HloSharding.iota_tile(
            tiles + ([replicas] if replicas > 1 else []),
            list(self._mesh.axis_sizes),
            order,
            groups,
        )

    @property
    def replicated_axes(self) -> frozenset:
        """The mesh axes the spec does not use (not for a dimension, nor as unreduced
        or reduced)."""
        used = {n for entry in self._spec.partitions for n in _names(entry)}
        used |= self._spec.unreduced | self._spec.reduced
        return frozenset(self._mesh.axis_names) - used

    def _to_sdy_sharding(self, num_dimensions: int, modify_wrt_axis_types: bool = False):
        """The layout in Shardy's terms. With ``modify_wrt_axis_types`` on a mesh with
        ``Auto`` axes, every dimension is open and the unused ``Explicit`` axes are
        marked replicated (the partitioner may not use them)."""
        dims = [SdyDim((), False)] * num_dimensions
        for i, entry in enumerate(self._spec.partitions):
            if entry is UNCONSTRAINED:
                dims[i] = SdyDim((), True)
            elif entry is not None:
                dims[i] = SdyDim(_names(entry), False)
        replicated = frozenset()
        if modify_wrt_axis_types and AxisType.Auto in self._mesh.axis_types:
            dims = [SdyDim(d.axes, True) for d in dims]
            types = self._mesh._name_to_type
            replicated = frozenset(a for a in self.replicated_axes if types[a] == AxisType.Explicit)
        return SdyArray(
            mesh_shape=self._mesh.shape_tuple,
            dim_shardings=tuple(dims),
            logical_device_ids=self._logical_device_ids,
            replicated_axes=replicated,
            unreduced_axes=self._spec.unreduced,
        )


def _grid(sizes: tuple):
    """Mesh coordinates in row-major order (the order of the mesh's flat devices)."""
    if not sizes:
        yield ()
        return
    total = math.prod(sizes)
    for flat in range(total):
        coords = []
        for size in reversed(sizes):
            coords.append(flat % size)
            flat //= size
        yield tuple(reversed(coords))


def _rebuild(mesh, spec, memory_kind, logical_device_ids) -> NamedSharding:
    return NamedSharding(
        mesh, spec, memory_kind=memory_kind, _logical_device_ids=logical_device_ids
    )
