"""The layout of ``pmap``'s arrays: one dimension split evenly over a list of devices,
one slice per device (or, with no split dimension, a full copy on each device)."""

from __future__ import annotations

from jaxlib import xla_client

__all__ = ["PmapLayout"]


def _hlo_sharding(n: int, ndim: int, dim: int | None) -> xla_client.HloSharding:
    if dim is None:
        return xla_client.HloSharding.replicate()
    tiles = [1] * ndim
    tiles[dim] = n
    return xla_client.HloSharding.iota_tile(tiles)


class PmapLayout(xla_client.GSPMDSharding):
    """Arrays of rank ``ndim`` whose dimension ``dim`` is split over ``devices`` (device
    ``i`` holds slice ``i``); ``dim=None``: each device holds the whole array."""

    def __init__(self, devices, ndim: int, dim: int | None):
        devices = tuple(devices)
        super().__init__(xla_client.DeviceList(devices), _hlo_sharding(len(devices), ndim, dim))
        self._on = devices
        self._rank = ndim
        self._split = dim

    def __repr__(self) -> str:
        ids = [d.id for d in self._on]
        return f"PmapLayout(devices={ids}, ndim={self._rank}, dim={self._split})"

    def __reduce__(self):
        return type(self), (self._on, self._rank, self._split)

    def __eq__(self, other) -> bool:
        return isinstance(other, PmapLayout) and (
            (self._on, self._rank, self._split) == (other._on, other._rank, other._split)
        )

    def __hash__(self) -> int:
        return hash((self._on, self._rank, self._split))

    device_set = property(lambda self: set(self._on))
    memory_kind = property(lambda self: self._on[0].default_memory().kind)
    num_devices = property(lambda self: len(self._on))
    is_fully_replicated = property(lambda self: self._split is None or len(self._on) == 1)
    is_fully_addressable = property(lambda self: self._internal_device_list.is_fully_addressable)
    _device_assignment = property(lambda self: self._on)

    def with_memory_kind(self, kind: str) -> PmapLayout:
        if kind != self.memory_kind:
            raise ValueError(f"pmap arrays live in memory kind {self.memory_kind!r}, not {kind!r}")
        return self

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> xla_client.HloSharding:
        return _hlo_sharding(len(self._on), num_dimensions, self._split)

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        shape = list(global_shape)
        if self._split is not None:
            shape[self._split] //= len(self._on)
        return tuple(shape)

    def devices_indices_map(self, global_shape: tuple[int, ...]):
        whole = [slice(None)] * len(global_shape)
        out = {}
        for i, device in enumerate(self._on):
            index = list(whole)
            if self._split is not None:
                step = global_shape[self._split] // len(self._on)
                index[self._split] = slice(i * step, (i + 1) * step)
            out[device] = tuple(index)
        return out
