"""Gathering one block from every device of every process, through XLA's collectives.

``gather_blocks`` runs one compiled program over the global device list: device ``i``
contributes a block, an ``all_gather`` over all partitions stacks them, and every
device ends with the stack. Across processes the data moves through the CPU client's
collectives (gloo over TCP), as any multi-process program's would.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np

from lamina.interpreters import backend, device_put, execute
from lamina.sharding.array_creation import make_array_from_single_device_arrays
from lamina.sharding.mesh import Mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec

__all__ = ["gather_blocks"]

_AXIS = "blocks"


def _program(count: int, block_shape: tuple[int, ...], dtype: np.dtype) -> str:
    one = execute.tensor_type((1, *block_shape), dtype)
    stacked = execute.tensor_type((count, *block_shape), dtype)
    group = ", ".join(map(str, range(count)))
    return f"""
module @gather_blocks attributes {{mhlo.num_partitions = {count} : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%block: {one}) -> {stacked} {{
    %all = "stablehlo.all_gather"(%block) <{{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[{group}]]> : tensor<1x{count}xi64>, use_global_device_ids}}> : ({one}) -> {stacked}
    return %all : {stacked}
  }}
}}
"""  # noqa: E501


@functools.lru_cache(maxsize=64)
def _compiled(devices: tuple, block_shape: tuple[int, ...], dtype: np.dtype):
    return backend.compile(
        _program(len(devices), block_shape, dtype), list(devices), name="gather_blocks"
    )


def gather_blocks(
    blocks: Mapping, block_shape: Sequence[int], dtype, devices: Sequence | None = None
) -> np.ndarray:
    """Stack the blocks of all ``devices`` (default: every device of every process).

    ``blocks`` maps each of this process's devices among ``devices`` to its block (a
    host array of ``block_shape``); every process calls this with the same
    ``devices``, shape and dtype. Returns ``stack[i]`` = the block of ``devices[i]``.
    """
    devices = tuple(backend.devices() if devices is None else devices)
    block_shape, dtype = tuple(block_shape), np.dtype(dtype)
    mesh = Mesh(np.array(devices), (_AXIS,))
    local = [d for d in devices if d in blocks]
    pieces = [device_put(np.asarray(blocks[d], dtype)[None], d) for d in local]
    sharding = NamedSharding(mesh, PartitionSpec(_AXIS))
    argument = make_array_from_single_device_arrays((len(devices), *block_shape), sharding, pieces)
    results = _compiled(devices, block_shape, dtype).execute_sharded([argument])
    return np.asarray(results.disassemble_into_single_device_arrays()[0][0])
