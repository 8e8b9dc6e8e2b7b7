"""Named axes mapped over devices (``pmap``'s ``axis_name``), and how collectives over
them lower to XLA's cross-replica operations.

``pmap`` compiles one program for every device (XLA replicas); while it traces and
lowers that program it binds its axis name here (:func:`bind_device_axis`), so that
collectives over the name type-check and lower to ``stablehlo.all_reduce``,
``all_gather``, ``all_to_all``, ``reduce_scatter`` and ``collective_permute`` over the
replica group of all participating devices.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo, ir

__all__ = [
    "all_reduce",
    "bind_device_axis",
    "device_axis_size",
    "group_size",
    "is_device_axis",
    "replica_groups",
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
        groups = np.asarray(axis_index_groups, dtype=np.int64)
        if groups.ndim != 2 or sorted(groups.ravel().tolist()) != list(range(size)):
            raise ValueError(
                f"axis_index_groups must be equal-sized groups that together hold each of "
                f"the {size} indices of the axis once, got {axis_index_groups}"
            )
    return ir.DenseIntElementsAttr.get(groups)


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
    scalar = mb.ir_type(aval.update(shape=()))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([combine(*block.arguments)])
    return op.results[0]
