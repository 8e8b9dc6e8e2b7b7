"""Named axes mapped over devices (``pmap``'s ``axis_name``), and how collectives over
them lower to XLA's cross-replica operations.

``pmap`` compiles one program for every device (XLA replicas); while it traces and
lowers that program it binds its axis name here (:func:`bind_device_axis`), so that
collectives over the name type-check and lower to ``stablehlo.all_reduce``,
``all_gather``, ``all_to_all``, ``reduce_scatter`` and ``collective_permute`` over the
replica group of all participating devices.

``shard_map`` instead binds the axes of a whole device mesh (:func:`bind_mesh_axes`):
its program is one SPMD program over the mesh's devices (XLA partitions, numbered in
the mesh's device order), so a collective over some of the mesh's axes runs within the
groups of devices that agree on the other axes, addressed by global device ids with a
channel handle, and ``axis_index`` derives from the partition id.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools

import numpy as np

from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo, ir

__all__ = [
    "all_reduce",
    "bind_device_axis",
    "bind_mesh_axes",
    "device_axis_size",
    "group_size",
    "is_device_axis",
    "mesh_axes",
    "mesh_axis_index",
    "permute_pairs",
    "replica_groups",
    "spmd_collective",
]

_device_axes: contextvars.ContextVar[tuple[tuple, ...]] = contextvars.ContextVar(
    "lamina_device_axes", default=()
)


@contextlib.contextmanager
def bind_device_axis(name, size: int):
    """Within the block, ``name`` is an axis of ``size`` participants, one per device."""
    token = _device_axes.set((*_device_axes.get(), (name, int(size))))
    try:
        yield
    finally:
        _device_axes.reset(token)


_mesh_axes: contextvars.ContextVar[tuple[tuple, tuple] | None] = contextvars.ContextVar(
    "lamina_mesh_axes", default=None
)
_channels = itertools.count(1)


@contextlib.contextmanager
def bind_mesh_axes(names, sizes, manual=None):
    """Within the block, the program runs on a device mesh of axes ``names`` (of
    ``sizes``), of which those in ``manual`` (default: all) are bound: collectives over
    them lower to cross-partition operations over the mesh."""
    names, sizes = tuple(names), tuple(int(s) for s in sizes)
    token = _mesh_axes.set((names, sizes))
    try:
        with contextlib.ExitStack() as stack:
            for name, size in zip(names, sizes, strict=True):
                if manual is None or name in manual:
                    stack.enter_context(bind_device_axis(name, size))
            yield
    finally:
        _mesh_axes.reset(token)


def mesh_axes() -> tuple[tuple, tuple] | None:
    """The (names, sizes) of the mesh bound by :func:`bind_mesh_axes`, else None."""
    return _mesh_axes.get()


def _mesh_groups(names) -> np.ndarray | None:
    """The partition ids of the mesh grouped by the axes ``names``: one row per group,
    in the order of ``names`` (the last varying fastest); None outside a mesh."""
    mesh = _mesh_axes.get()
    if mesh is None or not all(n in mesh[0] for n in names):
        return None
    all_names, sizes = mesh
    ids = np.arange(int(np.prod(sizes)), dtype=np.int64).reshape(sizes)
    picked = [all_names.index(n) for n in names]
    rest = [i for i in range(len(sizes)) if i not in picked]
    size = int(np.prod([sizes[i] for i in picked]))
    return ids.transpose(rest + picked).reshape(-1, size)


def spmd_collective(op) -> None:
    """Make ``op`` address partitions by global device id (inside a mesh)."""
    if _mesh_axes.get() is None:
        return
    op.attributes["channel_handle"] = hlo.ChannelHandle.get(next(_channels), 1)
    if "replica_groups" in op.attributes:
        op.attributes["use_global_device_ids"] = ir.UnitAttr.get()


def permute_pairs(names, perm) -> ir.DenseIntElementsAttr:
    """``perm``'s (source, destination) pairs of positions along ``names``, as device
    pairs: within each group of the mesh, or the positions themselves under pmap."""
    pairs = np.asarray(perm, dtype=np.int64).reshape(-1, 2)
    groups = _mesh_groups(names)
    if groups is not None:
        pairs = np.ascontiguousarray(np.concatenate([row[pairs] for row in groups]))
    return ir.DenseIntElementsAttr.get(pairs)


def mesh_axis_index(names) -> ir.Value:
    """The position of this partition along the mesh axes ``names`` (an i32 scalar)."""
    all_names, sizes = _mesh_axes.get()
    i32 = ir.IntegerType.get_signless(32)
    scalar = ir.RankedTensorType.get((), i32)
    pid = hlo.convert(scalar, hlo.PartitionIdOp().result)

    def const(v):
        return hlo.constant(ir.DenseElementsAttr.get(np.asarray(v, np.int32), type=i32))

    index = None
    for name in names:
        axis = all_names.index(name)
        stride = int(np.prod(sizes[axis + 1 :]))
        own = hlo.remainder(hlo.divide(pid, const(stride)), const(sizes[axis]))
        index = own if index is None else hlo.add(hlo.multiply(index, const(sizes[axis])), own)
    return index


def device_axis_size(name) -> int | None:
    """The number of devices the axis ``name`` maps over; None if it is not bound."""
    for bound, size in reversed(_device_axes.get()):
        if bound == name:
            return size
    return None


def is_device_axis(name) -> bool:
    return device_axis_size(name) is not None


def replica_groups(names, axis_index_groups=None) -> ir.DenseIntElementsAttr:
    """The replica groups of a collective over the device axes ``names``: one group of
    every replica, or the given ``axis_index_groups`` (equal-sized groups that cover
    every replica once)."""
    size = 1
    for name in names:
        size *= device_axis_size(name)
    if axis_index_groups is None:
        groups = np.arange(size, dtype=np.int64).reshape(1, size)
    else:
        if len({len(g) for g in axis_index_groups}) != 1:
            raise ValueError(
                f"axis_index_groups must all be the same size, got {axis_index_groups}"
            )
        groups = np.asarray(axis_index_groups, dtype=np.int64)
        if groups.ndim != 2 or sorted(groups.ravel().tolist()) != list(range(size)):
            raise ValueError(
                f"axis_index_groups must be equal-sized groups that together hold each of "
                f"the {size} indices of the axis once, got {axis_index_groups}"
            )
    mesh_groups = _mesh_groups(names)
    if mesh_groups is not None:
        # Positions along ``names`` within each group of the mesh, as partition ids.
        groups = np.concatenate([row[groups] for row in mesh_groups])
    return ir.DenseIntElementsAttr.get(np.ascontiguousarray(groups))


def group_size(name, axis_index_groups) -> int:
    """How many participants a collective over ``name`` combines."""
    if axis_index_groups is None:
        return device_axis_size(name)
    return len(axis_index_groups[0])


_REDUCERS = {"add": hlo.add, "max": hlo.maximum, "min": hlo.minimum}


def all_reduce(ctx, x: ir.Value, aval, names, kind: str, axis_index_groups=None) -> ir.Value:
    """``x`` combined by ``kind`` (add, max or min) across the device axes ``names``."""
    combine = _REDUCERS[kind]
    if aval.dtype == np.dtype(bool):
        combine = {"add": hlo.or_, "max": hlo.or_, "min": hlo.and_}[kind]
    groups = replica_groups(names, axis_index_groups)
    op = hlo.AllReduceOp([mb.ir_type(aval)], [x], groups)
    spmd_collective(op)
    scalar = mb.ir_type(aval.update(shape=()))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([combine(*block.arguments)])
    return op.results[0]
