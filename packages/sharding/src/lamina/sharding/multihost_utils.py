"""Exchanging host data between the processes of a run (``jax.experimental.multihost_utils``).

Values travel through :func:`~lamina.sharding.global_gather.gather_blocks`, one compiled
all-gather over the devices of every process; with one process, nothing moves.
"""

from __future__ import annotations

import contextlib
import zlib
from typing import Any

import numpy as np

from lamina.interpreters import ArrayImpl, backend, device_put
from lamina.ir import dtypes
from lamina.ir.tree_util import tree_flatten, tree_map, tree_unflatten
from lamina.sharding.array_creation import make_array_from_single_device_arrays
from lamina.sharding.distributed import global_state
from lamina.sharding.global_gather import gather_blocks
from lamina.sharding.mesh import Mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec

__all__ = [
    "ProcessFailureError",
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "live_devices",
    "process_allgather",
    "reached_preemption_sync_point",
    "sync_global_devices",
]


def _is_global(x) -> bool:
    return isinstance(x, ArrayImpl) and not x.is_fully_addressable


def _host_value(x) -> np.ndarray:
    """``x`` as a host array of the dtype it would have on a device."""
    value = np.asarray(x)
    return value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)


def _gather_processes(value: np.ndarray) -> np.ndarray:
    """Stack one host value per process (the same shape in each), in process order."""
    devices = backend.devices()
    stack = gather_blocks(
        {d: value for d in backend.local_devices()}, value.shape, value.dtype, devices
    )
    first = {}
    for i, d in enumerate(devices):
        first.setdefault(d.process_index, i)
    return stack[[first[p] for p in sorted(first)]]


def _gather_global(x) -> np.ndarray:
    """The whole value of a global array, assembled from every device's shard."""
    sharding = x.sharding
    devices = sharding._device_assignment
    shard_shape = sharding.shard_shape(x.shape)
    blocks = {s.device: np.asarray(s.data) for s in x.addressable_shards}
    stack = gather_blocks(blocks, shard_shape, x.dtype, devices)
    out = np.empty(x.shape, x.dtype)
    for i, index in enumerate(sharding.devices_indices_map(x.shape).values()):
        out[index] = stack[i]
    return out


def _allgather_leaf(x, tiled: bool) -> np.ndarray:
    if _is_global(x):
        if not tiled:
            raise ValueError(
                "Gathering global non-fully-addressable arrays only supports tiled=True"
            )
        return _gather_global(x)
    value = np.asarray(x) if backend.process_count() == 1 else _host_value(x)
    if value.ndim == 0 or not tiled:
        value = value[None]
    if backend.process_count() == 1:
        return value
    stack = _gather_processes(value)
    return stack.reshape(-1, *value.shape[1:])


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's value of each leaf, on every process, as NumPy arrays: stacked
    on a new first axis, or with ``tiled`` concatenated along the first axis (scalars
    are stacked either way). A global array gathers to its whole value (``tiled`` only).
    """
    return tree_map(lambda x: _allgather_leaf(x, tiled), in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """The leaves of the source process (default: process 0) on every process, as
    NumPy arrays; each leaf must have the same shape in every process."""
    if backend.process_count() == 1:
        return tree_map(np.asarray, in_tree)
    if is_source is None:
        is_source = backend.process_index() == 0

    def broadcast(x):
        value = _host_value(x)
        stack = _gather_processes(value if is_source else np.zeros_like(value))
        return np.asarray(stack.sum(axis=0, dtype=value.dtype))

    return tree_map(broadcast, in_tree)


def assert_equal(in_tree, fail_message: str = "") -> None:
    """Raise ``AssertionError`` unless every process holds the same leaves."""
    count = backend.process_count()

    def repeated(x):
        if _is_global(x):
            return np.asarray(x.addressable_data(0))
        value = np.asarray(x)
        return np.concatenate([value.reshape(-1) if value.ndim == 0 else value] * count)

    gathered = process_allgather(in_tree, tiled=True)
    expected = tree_map(repeated, in_tree)
    pairs = zip(tree_flatten(expected)[0], tree_flatten(gathered)[0], strict=True)
    if not all(np.all(np.equal(e, g)) for e, g in pairs):
        raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def sync_global_devices(name: str) -> None:
    """A barrier: returns once every process has called it with the same ``name``."""
    digest = np.uint32(zlib.crc32(name.encode()))
    assert_equal(digest, f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether every process has reached the step at which to save after a
    preemption notice (always False outside a multi-process run)."""
    if global_state.client is None:
        return False
    manager = global_state.preemption_sync_manager
    if manager is None:
        raise RuntimeError(
            "Preemption sync manager has not been initialized. Make sure the"
            " 'jax_enable_preemption_service' config is enabled."
        )
    return manager.reached_sync_point(step_id)


# --------------------------------------------------------------------- host-local <-> global


def _check_spec(pspec) -> None:
    if pspec is None:
        raise ValueError(
            "`None` is not a valid input to the pspecs argument. Please use "
            "jax.sharding.PartitionSpec() if you wanted to replicate your input."
        )


def _blocks_per_dim(mesh: Mesh, pspec: PartitionSpec, ndim: int) -> list[int]:
    sizes = mesh.shape
    counts = []
    for entry in (*pspec, *[None] * (ndim - len(pspec))):
        names = () if entry is None else entry if isinstance(entry, tuple) else (entry,)
        counts.append(int(np.prod([sizes[n] for n in names], dtype=int)))
    return counts


def _rescaled(shape, mesh: Mesh, pspec, to_global: bool) -> tuple[int, ...]:
    """The shape of this process's part scaled to the whole (or the reverse)."""
    local = _blocks_per_dim(mesh.local_mesh, pspec, len(shape))
    whole = _blocks_per_dim(mesh, pspec, len(shape))
    if to_global:
        return tuple(d // lo * wh for d, lo, wh in zip(shape, local, whole, strict=True))
    return tuple(d // wh * lo for d, lo, wh in zip(shape, local, whole, strict=True))


def _flatten_specs(pspecs, treedef) -> list:
    is_spec = lambda x: x is None or isinstance(x, PartitionSpec)  # noqa: E731
    if is_spec(pspecs):
        return [pspecs] * treedef.num_leaves
    specs, spec_tree = tree_flatten(pspecs, is_leaf=is_spec)
    per_leaf = spec_tree.flatten_up_to(tree_unflatten(treedef, range(treedef.num_leaves)))
    out = [None] * treedef.num_leaves
    for spec, subtree in zip(specs, per_leaf, strict=True):
        for leaf in tree_flatten(subtree)[0]:
            out[leaf] = spec
    return out


def _local_to_global(x, mesh: Mesh, pspec):
    _check_spec(pspec)
    if _is_global(x):
        return x
    value = _host_value(x)
    local = NamedSharding(mesh.local_mesh, pspec)
    pieces = [device_put(value[i], d) for d, i in local.devices_indices_map(value.shape).items()]
    shape = _rescaled(value.shape, mesh, pspec, True)
    return make_array_from_single_device_arrays(shape, NamedSharding(mesh, pspec), pieces)


def _global_to_local(x, mesh: Mesh, pspec):
    _check_spec(pspec)
    if isinstance(x, ArrayImpl) and x.is_fully_addressable:
        return x
    local = NamedSharding(mesh.local_mesh, pspec)
    shape = _rescaled(x.shape, mesh, pspec, False)
    if isinstance(x, ArrayImpl):
        by_device = {s.device: s.data for s in x.addressable_shards}
        pieces = [by_device[d] for d in local._device_assignment]
    else:  # a host value holding the whole array
        value = _host_value(x)
        index = local.devices_indices_map(x.shape).items()
        pieces = [device_put(value[i], d) for d, i in index]
    return make_array_from_single_device_arrays(shape, local, pieces)


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh, pspecs: Any):
    """Make global arrays from each process's local data: the part of process ``p``
    is laid out over ``p``'s devices of ``global_mesh`` as ``pspecs`` says, and the
    global array is the parts together."""
    leaves, treedef = tree_flatten(local_inputs)
    specs = _flatten_specs(pspecs, treedef)
    out = [_local_to_global(x, global_mesh, s) for x, s in zip(leaves, specs, strict=True)]
    return tree_unflatten(treedef, out)


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh, pspecs: Any):
    """The inverse of :func:`host_local_array_to_global_array`: each process's part
    of global arrays, as arrays over its own devices."""
    leaves, treedef = tree_flatten(global_inputs)
    specs = _flatten_specs(pspecs, treedef)
    out = [_global_to_local(x, global_mesh, s) for x, s in zip(leaves, specs, strict=True)]
    return tree_unflatten(treedef, out)


# --------------------------------------------------------------------- live devices


class ProcessFailureError(Exception):
    """Raised by :data:`live_devices` when processes failed; ``failed_devices`` holds
    their devices."""

    def __init__(self, failed_devices: set):
        self.failed_devices = failed_devices
        super().__init__(f"Devices failed: {failed_devices}")


def _live(client, devices) -> dict:
    processes = {d.process_index for d in devices}
    if backend.process_index() not in processes:
        raise ValueError("Provided devices do not have any local devices.")
    alive = client.get_live_nodes(list(processes))
    return {d: alive[d.process_index] for d in devices if d.process_index in alive}


class _LiveDevices:
    """``with live_devices(devices) as alive:``: run on the devices whose processes
    are alive; raises :class:`ProcessFailureError` if one fails meanwhile."""

    def __init__(self):
        self.devices = None

    @contextlib.contextmanager
    def __call__(self, devices):
        client = global_state.client
        if client is None:
            raise RuntimeError("Distributed JAX not initialized.")
        if not devices:
            raise ValueError("No devices provided.")
        if self.devices is None:
            self.devices = _live(client, devices)
        error = None
        try:
            yield sorted(self.devices, key=lambda d: d.id)
        except Exception as e:
            error = e
        finally:
            before, self.devices = self.devices, _live(client, devices)
            failed = {d for d in before if self.devices.get(d, None) != before[d]}
            if failed:
                raise ProcessFailureError(failed) from error
            if error is not None:
                raise error


live_devices = _LiveDevices()
