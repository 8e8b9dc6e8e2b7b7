"""Making a sharded array from its pieces: ``make_array_from_callback`` (a function
gives each device's block), ``make_array_from_single_device_arrays`` (the blocks are
given, one array per device) and ``make_array_from_process_local_data`` (the data this
process holds; in a single process, the whole array)."""

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


def make_array_from_process_local_data(sharding: Sharding, local_data, global_shape=None):
    """An array laid out by ``sharding`` from the data this process holds. In a single
    process that is the whole array, so ``global_shape`` is its shape or ``None``."""
    local_data = np.asarray(local_data) if not isinstance(local_data, Array) else local_data
    if global_shape is not None and tuple(global_shape) != local_data.shape:
        raise ValueError(
            "When calling `make_array_from_process_local_data` on a single process, "
            "global_shape should be None or equal to local_data.shape.Got "
            f"global_shape={tuple(global_shape)} and local_data.shape={local_data.shape}."
        )
    return make_array_from_callback(local_data.shape, sharding, lambda index: local_data[index])
