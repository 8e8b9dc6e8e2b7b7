"""Making a sharded array from its pieces: ``make_array_from_callback`` (a function
gives each device's block), ``make_array_from_single_device_arrays`` (the blocks are
given, one array per device) and ``make_array_from_process_local_data`` (the data this
process holds; in a single process, the whole array; across processes, this
process's part of it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from jaxlib import xla_client

from lamina.interpreters import Array, ArrayImpl, Sharding, device_put
from lamina.ir import ShapedArray, dtypes

__all__ = [
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
]


def _check_pieces(shape: tuple, sharding: Sharding, aval: ShapedArray, pieces: list) -> list:
    """The single-device ``pieces`` checked against ``sharding`` and put in the order
    of its addressable devices."""
    expected = list(sharding._addressable_device_assignment)
    if len(pieces) != len(expected):
        raise ValueError(
            f"Expected {len(expected)} per-device arrays (this is how many devices are "
            f"addressable by the sharding), but got {len(pieces)}"
        )
    shard_shape = sharding.shard_shape(shape)
    by_device = {}
    for piece in pieces:
        if piece.shape != shard_shape:
            raise ValueError(
                f"Expected shard shape {shard_shape} doesn't match the single device array "
                f"shape {piece.shape}. Shape of Array is {aval.str_short()} with sharding "
                f"{sharding}"
            )
        by_device[next(iter(piece.devices()))] = piece
    if len(by_device) != len(pieces):
        ids = [next(iter(p.devices())).id for p in pieces]
        raise ValueError(
            "When making an array from single-device arrays, the input arrays must be from "
            f"distinct devices, but got device IDs {ids}"
        )
    missing = {d.id for d in expected if d not in by_device}
    extra = {d.id for d in by_device if d not in set(expected)}
    if missing or extra:
        raise ValueError(
            "Addressable devices and per-device arrays devices do not match. Sharding "
            f"contains devices {missing} that are not present in per-device arrays. "
            f"Per-device arrays contain devices {extra} that are not present in the "
            "sharding."
        )
    return [by_device[d] for d in expected]


def _assemble(shape: tuple, sharding: Sharding, dtype, pieces: list) -> ArrayImpl:
    aval = ShapedArray(shape, dtype)
    ordered = _check_pieces(shape, sharding, aval, pieces)
    return xla_client.ArrayImpl(aval, sharding, ordered, committed=True, _skip_checks=True)


def make_array_from_callback(
    shape: Sequence[int],
    sharding: Sharding,
    data_callback: Callable,
    dtype=None,
) -> ArrayImpl:
    """An array of ``shape`` laid out by ``sharding``, each device's block being
    ``data_callback(index)`` (``index`` a tuple of slices into the whole array)."""
    shape = tuple(shape)
    indices = sharding.addressable_devices_indices_map(shape)
    pieces = []
    for device in sharding._addressable_device_assignment:
        pieces.append(device_put(data_callback(indices[device]), device))
    if dtype is None:
        dtype = pieces[0].dtype if pieces else np.dtype(np.float32)
    elif pieces and pieces[0].dtype != dtypes.canonicalize_dtype(dtype):
        raise ValueError(
            "If `dtype` is provided to `jax.make_array_from_callback`, it must match the "
            f"dtype of the addressable shards. Got dtype={np.dtype(dtype)} and shard "
            f"dtype={pieces[0].dtype}`."
        )
    return _assemble(shape, sharding, dtypes.canonicalize_dtype(dtype), pieces)


def make_array_from_single_device_arrays(
    shape: Sequence[int], sharding: Sharding, arrays: Sequence, *, dtype=None
) -> ArrayImpl:
    """An array of ``shape`` laid out by ``sharding`` from its blocks: one array on
    each addressable device of the sharding, holding that device's block."""
    arrays = list(arrays)
    if dtype is None:
        if not arrays:
            raise ValueError(
                "If the Array has no addressable shards, `dtype` must be provided via the "
                "`dtype` argument to `jax.make_array_from_single_device_arrays`."
            )
        dtype = arrays[0].dtype
    return _assemble(tuple(shape), sharding, dtype, arrays)


def _tiles(sharding: Sharding, ndim: int) -> tuple[int, ...]:
    """How many blocks ``sharding`` cuts each of ``ndim`` dimensions into."""
    hlo = sharding._to_xla_hlo_sharding(ndim)
    if hlo.is_replicated():
        return (1,) * ndim
    return tuple(hlo.tile_assignment_dimensions()[:ndim])


def _process_global_shape(sharding: Sharding, local_shape: tuple) -> tuple:
    """The whole array's shape when this process holds ``local_shape`` of it: each
    dimension scaled by how many of its blocks live on other processes."""
    tiles = _tiles(sharding, len(local_shape))
    held = sharding.addressable_devices_indices_map(tiles).values()
    shape = []
    for d, (n, t) in enumerate(zip(local_shape, tiles, strict=True)):
        mine = len({index[d].indices(t)[0] for index in held})
        if n % mine:
            raise ValueError(
                f"local_data of shape {local_shape} can't be split into the {mine} blocks "
                f"this process holds along dimension {d} of sharding {sharding}"
            )
        shape.append(n // mine * t)
    return tuple(shape)


def make_array_from_process_local_data(sharding: Sharding, local_data, global_shape=None):
    """An array laid out by ``sharding`` from the data this process holds: the part
    of the whole array covering this process's devices (in a single process, the whole
    array). ``global_shape`` defaults to that implied by the sharding."""
    local_data = np.asarray(local_data) if not isinstance(local_data, Array) else local_data
    if sharding.is_fully_addressable:
        if global_shape is not None and tuple(global_shape) != local_data.shape:
            raise ValueError(
                "When calling `make_array_from_process_local_data` on a single process, "
                "global_shape should be None or equal to local_data.shape.Got "
                f"global_shape={tuple(global_shape)} and local_data.shape={local_data.shape}."
            )
        return make_array_from_callback(local_data.shape, sharding, lambda index: local_data[index])
    local_shape = tuple(local_data.shape)
    if global_shape is None:
        global_shape = _process_global_shape(sharding, local_shape)
    global_shape = tuple(global_shape)
    held = sharding.addressable_devices_indices_map(global_shape).values()
    starts = [min(index[d].indices(n)[0] for index in held) for d, n in enumerate(global_shape)]

    def block(index):
        local = []
        for i, n, start, size in zip(index, global_shape, starts, local_shape, strict=True):
            lo, hi, _ = i.indices(n)
            if hi - start > size:
                raise ValueError(
                    f"local_data of shape {local_shape} does not cover this process's "
                    f"part of an array of shape {global_shape} laid out by {sharding}"
                )
            local.append(slice(lo - start, hi - start))
        return local_data[tuple(local)]

    return make_array_from_callback(global_shape, sharding, block)
