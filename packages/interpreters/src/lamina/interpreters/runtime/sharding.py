"""Shardings: how an array's data is laid out over devices.

``Sharding`` is the protocol every sharding follows; it *is* jaxlib's C++ base class
``Sharding`` with Python methods added, because jaxlib's C++ code (device puts, result
handlers, the jit fast path) takes its shardings as objects and calls back into them.
What jaxlib calls, found by driving it:

* ``_to_xla_hlo_sharding(ndim)`` -> ``HloSharding``: on every device put, to lay the
  host data out;
* ``_internal_device_list`` -> ``DeviceList``: the C++ sharding classes define it
  themselves; a Python subclass inherits it;
* ``_device_assignment``, ``device_set``, ``num_devices``, ``memory_kind``,
  ``is_fully_replicated``, ``is_fully_addressable``: what lamina's own code (and the
  later layers) read.

This layer defines the one sharding the backend needs, ``SingleDeviceSharding`` (jaxlib's
C++ class with its methods added). Meshes, ``NamedSharding`` and the index arithmetic
of partitioned layouts belong to ``lamina-sharding``, which follows the same protocol.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from jaxlib import xla_client

from lamina.interpreters.runtime import backend
from lamina.interpreters.runtime.cpp_classes import extends

__all__ = [
    "GSPMDSharding",
    "Sharding",
    "SingleDeviceSharding",
    "first_device",
    "hlo_indices",
    "sharding_for_device",
    "sharding_with_new_dim",
]

Device = xla_client.Device
Index = tuple[slice, ...]


def _abstract(name: str):
    def missing(self, *args):
        raise NotImplementedError(f"{type(self).__name__} does not implement {name}")

    return missing


@extends(xla_client.Sharding)
class Sharding:
    """Describes how a :class:`lamina.Array` is laid out across devices."""

    # --- what each sharding must provide
    device_set = property(_abstract("device_set"))
    is_fully_replicated = property(_abstract("is_fully_replicated"))
    is_fully_addressable = property(_abstract("is_fully_addressable"))
    num_devices = property(_abstract("num_devices"))
    memory_kind = property(_abstract("memory_kind"))
    _device_assignment = property(_abstract("_device_assignment"))
    _internal_device_list = property(_abstract("_internal_device_list"))
    with_memory_kind = _abstract("with_memory_kind")
    _to_xla_hlo_sharding = _abstract("_to_xla_hlo_sharding")

    # --- derived from the above
    @property
    def addressable_devices(self) -> set[Device]:
        """The devices of this sharding that this process drives."""
        if backend.process_count() == 1:
            return self.device_set
        return {d for d in self.device_set if d.process_index == d.client.process_index()}

    @property
    def has_addressable_devices(self) -> bool:
        return len(self._internal_device_list.addressable_device_list) > 0

    @property
    def _addressable_device_assignment(self) -> Sequence[Device]:
        if self.is_fully_addressable:
            return self._device_assignment
        return tuple(self._internal_device_list.addressable_device_list)

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> Mapping[Device, Index]:
        """For each device, the slice of an array of ``global_shape`` it holds (read
        from the sharding's ``HloSharding`` and device assignment)."""
        if self.is_fully_replicated:
            whole = tuple(slice(None) for _ in global_shape)
            return {d: whole for d in self._device_assignment}
        hlo = self._to_xla_hlo_sharding(len(global_shape))
        return hlo_indices(hlo, self._device_assignment, global_shape)

    def addressable_devices_indices_map(
        self, global_shape: tuple[int, ...]
    ) -> Mapping[Device, Index]:
        full = self.devices_indices_map(global_shape)
        if self.is_fully_addressable:
            return full
        return {d: full[d] for d in self._internal_device_list.addressable_device_list}

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of the piece of an array of ``global_shape`` each device holds."""
        if self.is_fully_replicated:
            return tuple(global_shape)
        index = next(iter(self.devices_indices_map(global_shape).values()))
        return tuple(len(range(n)[i]) for n, i in zip(global_shape, index, strict=True))

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Whether the two place the same pieces of an ``ndim``-dimensional array on the
        same devices."""
        return (
            self._to_xla_hlo_sharding(ndim) == other._to_xla_hlo_sharding(ndim)
            and self.memory_kind == other.memory_kind
            and self._internal_device_list == other._internal_device_list
        )


@extends(xla_client.SingleDeviceSharding)
class SingleDeviceSharding:
    """A sharding that places the whole array on one device.

    ``SingleDeviceSharding(device, *, memory_kind=None)``; jaxlib's constructor checks
    the memory kind and fills in the device's default one.
    """

    def __repr__(self) -> str:
        kind = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        return f"SingleDeviceSharding(device={self._device!r}{kind})"

    def __reduce__(self):
        return type(self), (self._device,), {"memory_kind": self._memory_kind}

    def __eq__(self, other) -> bool:
        if not isinstance(other, xla_client.SingleDeviceSharding):
            return False
        return self is other or (
            self._device == other._device and self._memory_kind == other._memory_kind
        )

    def __hash__(self) -> int:
        return hash((self._device, self._memory_kind))

    device_set = property(lambda self: {self._device})
    memory_kind = property(lambda self: self._memory_kind)
    num_devices = property(lambda self: 1)
    is_fully_replicated = property(lambda self: True)
    is_fully_addressable = property(lambda self: self._internal_device_list.is_fully_addressable)
    _device_assignment = property(lambda self: (self._device,))

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        return xla_client.SingleDeviceSharding(self._device, memory_kind=kind)

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> xla_client.HloSharding:
        return _REPLICATED

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(global_shape)

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> Mapping[Device, Index]:
        return {self._device: tuple(slice(None) for _ in global_shape)}


def hlo_indices(
    hlo: xla_client.HloSharding, devices: Sequence[Device], shape: tuple[int, ...]
) -> dict[Device, Index]:
    """For each of ``devices`` (the sharding's device assignment, whose positions the
    tile assignment of ``hlo`` names), the slice of an array of ``shape`` it holds."""
    whole = tuple(slice(None) for _ in shape)
    if hlo.is_replicated() or hlo.is_maximal() or not hlo.is_tiled():
        return {d: whole for d in devices}
    dims = hlo.tile_assignment_dimensions()
    order = hlo.tile_assignment_devices()
    chunks = [-(-n // k) for n, k in zip(shape, dims, strict=False)]
    out = {}
    for flat, pos in enumerate(itertools.product(*(range(k) for k in dims))):
        out[devices[order[flat]]] = tuple(
            slice(None) if k == 1 else slice(p * c, min((p + 1) * c, n))
            for p, c, n, k in zip(pos[: len(shape)], chunks, shape, dims, strict=False)
        )
    return out


@extends(xla_client.GSPMDSharding)
class GSPMDSharding:
    """A sharding given by an ``HloSharding`` over a list of devices (what a compiled
    program reports for outputs whose layout XLA chose):
    ``GSPMDSharding(devices, hlo_sharding, *, memory_kind=None)``."""

    def __repr__(self) -> str:
        return f"GSPMDSharding({self._hlo_sharding!r}, memory_kind={self._memory_kind})"

    device_set = property(lambda self: set(self._devices))
    memory_kind = property(lambda self: self._memory_kind)
    num_devices = property(lambda self: len(self._devices))
    is_fully_replicated = property(lambda self: self._hlo_sharding.is_replicated())
    is_fully_addressable = property(lambda self: self._internal_device_list.is_fully_addressable)
    _device_assignment = property(lambda self: tuple(self._devices))

    def with_memory_kind(self, kind: str) -> GSPMDSharding:
        return xla_client.GSPMDSharding(self._devices, self._hlo_sharding, memory_kind=kind)

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> xla_client.HloSharding:
        return self._hlo_sharding


def sharding_with_new_dim(sharding: Sharding, ndim: int, dim: int) -> Sharding:
    """``sharding`` (of ``ndim``-dimensional arrays) for arrays with one more dimension,
    inserted at ``dim`` and not partitioned (how ``vmap`` carries a layout over)."""
    if sharding.is_fully_replicated:
        return sharding
    spec = getattr(sharding, "spec", None)
    if spec is not None and hasattr(sharding, "update"):  # a mesh sharding: a None entry
        entries = [*spec, *[None] * (ndim - len(spec))]
        entries.insert(dim, None)
        return sharding.update(spec=type(spec)(*entries))
    proto = sharding._to_xla_hlo_sharding(ndim).to_proto()
    dims = list(proto.tile_assignment_dimensions)
    dims.insert(dim, 1)
    proto.tile_assignment_dimensions = dims
    hlo = xla_client.HloSharding.from_proto(proto)
    return xla_client.GSPMDSharding(tuple(sharding._device_assignment), hlo)


_REPLICATED = xla_client.HloSharding.replicate()


def first_device(sharding) -> Device:
    """The device of a one-device ``sharding``; of a larger one, the first device of its
    assignment."""
    if type(sharding) is SingleDeviceSharding:  # the common case, kept short
        return sharding._device
    return sharding._device_assignment[0]


_per_device: dict[Device, SingleDeviceSharding] = {}


def sharding_for_device(device: Device) -> SingleDeviceSharding:
    """The ``SingleDeviceSharding`` of ``device`` (one shared object per device, so that
    comparing shardings is usually an identity check)."""
    sharding = _per_device.get(device)
    if sharding is None:
        sharding = _per_device.setdefault(device, xla_client.SingleDeviceSharding(device))
    return sharding
