"""Arrays of devices shaped for a ``Mesh`` (``jax.experimental.mesh_utils``).

CPU devices have no physical topology to follow, so a mesh is the device list in its
order, reshaped; the hybrid mesh lays the per-process (or per-slice) meshes out as
blocks of the outer ``dcn_mesh_shape``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina.interpreters import devices as all_devices

__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]

# Device kind -> a function (mesh_shape, devices, contiguous_submeshes=...) returning a
# device array, or None to fall back to the default order.
device_kind_handler_dict: dict[str, Any] = {}


def _axis_sizes(mesh_shape: Sequence[int]) -> tuple[int, ...] | None:
    try:
        return tuple(int(size) for size in mesh_shape)
    except (TypeError, ValueError):
        return None


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """The ``devices`` (default: all of them) as an array of ``mesh_shape``."""
    del allow_split_physical_axes  # no physical axes to split on these platforms
    if devices is None:
        devices = all_devices()
    shape = _axis_sizes(mesh_shape)
    if shape is None:
        raise ValueError(
            "`mesh_shape` passed to `create_device_mesh` should be a sequence of"
            f" ints. Got {mesh_shape}"
        )
    if math.prod(shape) != len(devices):
        raise ValueError(
            f"Number of devices {len(devices)} must equal the product of mesh_shape {shape}"
        )
    handler = device_kind_handler_dict.get(devices[-1].device_kind)
    if handler is not None:
        mesh = handler(shape, devices, contiguous_submeshes=contiguous_submeshes)
        if mesh is not None:
            return mesh
    if devices[-1].platform == "gpu":
        devices = sorted(devices, key=lambda d: d.id)
    return np.asarray(devices).reshape(shape)


def create_hybrid_device_mesh(
    mesh_shape: Sequence[int],
    dcn_mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    process_is_granule: bool = False,
    should_sort_granules_by_key: bool = True,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """A mesh of meshes: the devices of each slice (with ``process_is_granule``, each
    process) form a ``mesh_shape`` block, and the blocks are arranged as
    ``dcn_mesh_shape``; the result has shape ``mesh_shape * dcn_mesh_shape``."""
    if devices is None:
        devices = all_devices()
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attr):
        raise ValueError(
            f"Device {devices[0]} does not have attribute {attr}. See `process_is_granule` option."
        )
    groups: dict[Any, list] = {}
    for device in devices:
        groups.setdefault(getattr(device, attr), []).append(device)
    keys = sorted(groups) if should_sort_granules_by_key else list(groups)
    if math.prod(dcn_mesh_shape) != len(keys):
        raise ValueError(
            f"Number of slices {len(keys)} must equal the product of "
            f"dcn_mesh_shape {dcn_mesh_shape}"
        )
    meshes = [
        create_device_mesh(
            mesh_shape, groups[k], allow_split_physical_axes=allow_split_physical_axes
        )
        for k in keys
    ]
    layout = np.empty(len(meshes), dtype=object)
    for i, mesh in enumerate(meshes):
        layout[i] = mesh
    return np.block(layout.reshape(dcn_mesh_shape).tolist())
