"""Where a jitted call runs when it spans several devices: its :class:`Partitioning`.

A call is *partitioned* when ``jit`` was given shardings, or when a committed argument
lies on more than one device. Each input then has a sharding: the one ``jit`` was given
for it, else that of the committed array passed, else replicated over the call's
devices. Outputs have the sharding asked for, or none (XLA chooses, and the compiled
program says what it chose). All shardings must share one device assignment: the
devices the program is partitioned over, in the order XLA numbers them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from jaxlib import xla_client

from lamina.interpreters.runtime.sharding import Sharding, first_device, sharding_with_new_dim
from lamina.ir import is_extended_aval, physical_aval

__all__ = ["Partitioning", "check_fits", "partitioning", "physical_sharding", "replicated"]

ArrayImpl = xla_client.ArrayImpl
_REPLICATED = xla_client.HloSharding.replicate()


class Partitioning(NamedTuple):
    """The placement of a partitioned call (hashable: it keys the executable cache)."""

    devices: tuple  # the device assignment
    in_shardings: tuple  # one Sharding per input
    out_shardings: tuple | None  # one Sharding or None (XLA's choice) per output;
    # None: XLA chooses for every output
    inner: Any = None  # a sharding the program itself names (a layout constraint)


def physical_sharding(sharding, aval):
    """The layout of the physical data of an array of type ``aval`` laid out by
    ``sharding``: for extended dtypes (PRNG keys), the data's trailing dimensions
    unpartitioned."""
    if sharding is None or not is_extended_aval(aval):
        return sharding
    for dim in range(aval.ndim, physical_aval(aval).ndim):
        sharding = sharding_with_new_dim(sharding, dim, dim)
    return sharding


_replicated: dict[tuple, Sharding] = {}


def replicated(devices: Sequence[Any]) -> Sharding:
    """The whole array on each of ``devices`` (one shared object per device tuple, so
    that calls placed alike find the same executable at once)."""
    devices = tuple(devices)
    found = _replicated.get(devices)
    if found is None:
        found = _replicated[devices] = xla_client.GSPMDSharding(devices, _REPLICATED)
    return found


def _committed_sharding(x):
    if type(x) is ArrayImpl and (x._committed or x._sharding.num_devices > 1):
        return x._sharding
    base = getattr(x, "_base_array", None)  # arrays of extended dtypes
    if type(base) is ArrayImpl and base._committed:
        return base._sharding
    return None


def _describe(names, i, x, fun_name) -> str:
    aval = getattr(x, "aval", None)
    shape = aval.str_short() if aval is not None else type(x).__name__
    return f"{_name(names, i)} of {fun_name} with shape {shape}"


def _ids(sharding) -> list[int]:
    return [d.id for d in sharding._device_assignment]


def partitioning(
    args: Sequence[Any],
    in_shardings: Sequence[Any] | None,
    out_shardings: Sequence[Any] | None,
    *,
    fun_name: str = "jit",
    arg_names: Sequence[str] | Callable[[], Sequence[str]] | None = None,
    inner: Any = None,
) -> Partitioning | None:
    """The :class:`Partitioning` of a call on ``args`` (flat) with the shardings ``jit``
    was given (flat, None where unspecified), or None when it runs on one device.
    ``inner`` is a sharding the program itself names (a layout constraint), which
    fixes the devices when nothing else does."""
    n = len(args)
    given = list(in_shardings) if in_shardings is not None else [None] * n
    ins: list[Any] = []
    multi = False
    for x, s in zip(args, given, strict=True):
        held = _committed_sharding(x)
        if s is not None and held is not None and not _same(held, s, x):
            raise ValueError(
                "Sharding passed to jit does not match the sharding on the respective arg. "
                f"Got jit sharding: {s},\narg sharding: {held} for arg type: "
                f"{x.aval.str_short()}"
            )
        chosen = s if s is not None else held
        ins.append(chosen)
        multi = multi or (chosen is not None and (s is not None or chosen.num_devices > 1))
    outs = tuple(out_shardings) if out_shardings is not None else ()
    if not multi and all(o is None for o in outs) and inner is None:
        return None
    first = None  # (description, sharding) that fixes the device assignment
    for i, s in enumerate(ins):
        if s is None:
            continue
        if first is None:
            first = (i, s)
        elif s._internal_device_list != first[1]._internal_device_list:
            j, t = first
            names = arg_names() if callable(arg_names) else arg_names
            raise ValueError(
                "Received incompatible devices for jitted computation. Got argument "
                f"{_describe(names, j, args[j], fun_name)} and with device ids "
                f"{_ids(t)} on platform {_platform(t)} and argument "
                f"{_describe(names, i, args[i], fun_name)} and with device ids "
                f"{_ids(s)} on platform {_platform(s)}"
            )
    for o in outs:
        if o is None:
            continue
        if first is None:
            first = (None, o)
        elif o._internal_device_list != first[1]._internal_device_list:
            raise ValueError(
                "Received incompatible devices for jitted computation. Got "
                f"out_shardings with device ids {_ids(o)} on platform {_platform(o)} and "
                f"inputs with device ids {_ids(first[1])} on platform {_platform(first[1])}"
            )
    if first is None:
        first = (None, inner)
    devices = tuple(first[1]._device_assignment)
    everywhere = replicated(devices)
    ins = [everywhere if s is None else s for s in ins]
    for i, (x, s) in enumerate(zip(args, ins, strict=True)):
        shape = getattr(x, "shape", None)
        if shape is None and isinstance(x, (int, float, complex, bool)):
            shape = ()
        if shape is not None:
            check_fits(s, shape, f"pjit arguments with pytree key path {_name(arg_names, i)}")
    return Partitioning(devices, tuple(ins), outs or None, inner)


def _name(names, i) -> str:
    if callable(names):
        names = names()
    return names[i] if names and i < len(names) else f"args[{i}]"


def check_fits(sharding, shape: tuple, what: str) -> None:
    """JAX's errors when ``sharding`` cannot lay out an array of ``shape`` (too few
    dimensions, or dimensions its tiles do not divide); ``what`` names the array."""
    try:
        hlo = sharding._to_xla_hlo_sharding(len(shape))
    except ValueError as e:
        rank = next((n for n in range(len(shape) + 1, 33) if _fits_rank(sharding, n)), None)
        why = (
            str(e)
            if rank is None
            else f"Sharding {sharding} is only valid for values of rank at least {rank}, "
            f"but was applied to a value of rank {len(shape)}."
        )
        if rank is not None and not shape and what.startswith("pjit"):
            why += " For scalars the PartitionSpec should be P()"
        raise ValueError(
            f"One of {what} is incompatible with its sharding annotation {sharding}: {why}"
        ) from None
    if not hlo.is_tiled() or hlo.is_replicated():
        return
    sharding.shard_shape(tuple(shape))  # a sharding's own check (IndivisibleError)
    tiles = hlo.tile_assignment_dimensions()[: len(shape)]
    if len(hlo.tile_assignment_dimensions()) < len(shape):
        return
    for axis, (n, k) in enumerate(zip(shape, tiles, strict=True)):
        if n % k:
            raise ValueError(
                f"Sharding {sharding} implies that array axis {axis} is partitioned {k} "
                f"times, but the dimension size is {n} (full shape: {tuple(shape)}, "
                f"per-dimension tiling factors: {list(tiles)} should evenly divide the shape)"
            )


def _fits_rank(sharding, ndim: int) -> bool:
    try:
        sharding._to_xla_hlo_sharding(ndim)
    except ValueError:
        return False
    return True


def _platform(sharding) -> str:
    return first_device(sharding).platform.upper()


def _same(held, wanted, x) -> bool:
    return held is wanted or held == wanted or held.is_equivalent_to(wanted, x.ndim)
