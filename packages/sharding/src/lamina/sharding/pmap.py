"""``pmap``: one program run on several devices at once, each on its slice of the inputs.

``pmap(f)(x)`` traces ``f`` once for one slice (the mapped axis removed), with the axis
name bound over devices (``lamina.lax.bind_device_axis``) so that collectives over it
lower to XLA's cross-replica operations. The program is compiled with one XLA replica
per device; device ``i`` receives slice ``i`` of each mapped input and a copy of each
unmapped one. Each result comes back as one array whose mapped axis (at ``out_axes``)
is split over the devices, one slice per device.

In a run of several processes the program spans the devices of every process: each
process passes the slices for its own devices (the mapped axis of the whole program is
that size times the number of processes) and gets back the slices of its own devices.

Called inside another transformation (``jit``, ``grad``, ``vmap``), a pmapped function
computes the same values as ``vmap`` with the same ``axis_name``.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from jaxlib import xla_client

from lamina.interpreters import (
    Tracer,
    backend,
    device_put,
    eval_trace,
    find_current_trace,
    jit,
    lower_jaxpr,
    physical_value,
    runtime_tokens,
    shaped_abstractify,
    trace_to_jaxpr,
)
from lamina.ir import is_extended_aval, physical_aval, prefix_errors, tree_util
from lamina.lax import bind_device_axis, broadcast_in_dim, reshape
from lamina.sharding.axis_types import AxisType
from lamina.sharding.mesh import Mesh
from lamina.sharding.named_sharding import NamedSharding
from lamina.sharding.partition_spec import PartitionSpec
from lamina.sharding.shard_map import body_mesh, check_context_mesh, shard_map

__all__ = ["pmap"]

_ANONYMOUS_AXIS = "_internal_pmap_axis_name"
_NO_MAPPED = "pmap requires at least one argument with a mapped axis."


def _argnums(value) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,)
    return tuple(operator.index(i) for i in value)


class _Leaf:
    """Stands for an argument leaf in prefix errors."""


def _flat_axes(in_axes, dyn_args: tuple, kwargs: dict) -> list:
    """The mapped axis (or None) of each leaf of ``(dyn_args, kwargs)``; keyword
    arguments are always mapped along axis 0."""
    is_leaf = lambda x: x is None  # noqa: E731
    try:
        return tree_util.broadcast_prefix((in_axes, 0), (dyn_args, kwargs), is_leaf=is_leaf)
    except ValueError:
        leafy = tree_util.tree_map(lambda _: _Leaf(), dyn_args)
        makers = prefix_errors((in_axes,), (leafy,), is_leaf=is_leaf)
        raise ValueError(
            f"{makers[0]('pmap in_axes')}\n\n"
            "The 'full pytree' here is the tuple of arguments passed positionally to the "
            "pmapped function, and the value of `in_axes` must be a tree prefix of that "
            "tuple. But it was not a prefix.\n\n"
            "Check that the value of the `in_axes` argument to `pmap` is a tree prefix of "
            "the tuple of arguments passed positionally to the pmapped function."
        ) from None


def _shape(x) -> tuple[int, ...]:
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def _normalized(leaves, axes, axis) -> list:
    """Each mapped axis as a non-negative index, with JAX 0.10.2's errors for a leaf of
    too small a rank (an ``IndexError`` for the first mapped array, whose axis gives
    the size; a ``ValueError`` naming the sharding for the others)."""
    out, first = [], True
    for i, (x, ax) in enumerate(zip(leaves, axes, strict=True)):
        if ax is not None:
            shape = _shape(x)
            if first and hasattr(x, "shape"):
                first = False
                if not -len(shape) <= ax < len(shape):
                    raise IndexError("tuple index out of range")
            if not -len(shape) <= ax < len(shape):
                sharding = (
                    f"NamedSharding(mesh=Mesh('{axis}': {{n}}, axis_types=(Auto,)), "
                    f"spec={_spec(axis, ax)}, memory_kind=device)"
                )
                raise _RankError(i, sharding, ax + 1, len(shape))
            ax %= len(shape)
        out.append(ax)
    return out


class _RankError(Exception):
    """A mapped leaf of too small a rank, reported once the axis size is known."""

    def __init__(self, i, sharding, rank, got):
        super().__init__(i, sharding, rank, got)

    def error(self, n) -> ValueError:
        i, sharding, rank, got = self.args
        sharding = sharding.format(n=n)
        scalars = " For scalars the PartitionSpec should be P()" if got == 0 else ""
        return ValueError(
            f"One of pjit arguments with pytree key path flat_args[{i}] is incompatible "
            f"with its sharding annotation {sharding}: Sharding {sharding} is only valid "
            f"for values of rank at least {rank}, but was applied to a value of rank "
            f"{got}.{scalars}"
        )


def _mapped_size(leaves, axes, axis_size, axis, devices, backend_name) -> tuple[int, tuple, tuple]:
    """The size of the mapped axis here, the local devices that run it and the devices
    of the whole program, with JAX's errors for sizes that do not fit."""
    mapped = [(_shape(x), ax) for x, ax in zip(leaves, axes, strict=True) if ax is not None]
    if not mapped:
        raise ValueError(_NO_MAPPED)
    n = mapped[0][0][mapped[0][1]]
    processes = backend.process_count(backend_name)
    if processes > 1:
        return _across_processes(mapped, n, processes, axis_size, axis, devices, backend_name)
    if axis_size is not None and axis_size != n:
        raise ValueError(f"Specified axis_size {axis_size} doesn't match received axis_size {n}.")
    given = devices is not None
    available = tuple(devices) if given else tuple(backend.local_devices(backend=backend_name))
    used = available if given else available[: min(n, len(available))]
    _check_sizes(mapped, Mesh(np.array(used), (axis,)), axis)
    if given and n != len(available):
        raise ValueError(
            "Leading axis size of input to pmapped function must equal the number of "
            f"local devices passed to pmap. Got axis_size={n}, num_local_devices="
            f"{len(available)}."
        )
    if n > len(available):
        raise ValueError(
            f"compiling computation that requires {n} logical devices, but only "
            f"{len(available)} XLA devices are available (num_replicas={n})"
        )
    return n, used, used


def _across_processes(mapped, n, processes, axis_size, axis, devices, backend_name):
    """In a run of several processes, the program spans the devices of every process
    (each process's local devices together, in process order) and the mapped axis of
    the whole program is ``n`` times the number of processes (or ``axis_size``); each
    process supplies and receives the slices of its own devices."""
    size = n * processes if axis_size is None else axis_size
    if devices is None:
        devices = [d for p in range(processes) for d in backend.local_devices(p, backend_name)]
    program = tuple(devices)[:size]
    here = backend.process_index(backend_name)
    local = tuple(d for d in program if d.process_index == here)
    if len(local) != n:
        raise ValueError(
            f"pmap in a run of {processes} processes maps each process's arguments over "
            f"its devices in the program: process {here} has {len(local)} of the "
            f"{len(program)} devices, but the mapped axis has size {n}."
        )
    _check_sizes(mapped, Mesh(np.array(local), (axis,)), axis)
    return n, local, program


def _check_sizes(mapped, mesh: Mesh, axis) -> None:
    for shape, ax in mapped:
        _layout(mesh, axis, ax).shard_shape(shape)  # IndivisibleError, as JAX
    sizes = [shape[ax] for shape, ax in mapped]
    if len(set(sizes)) > 1:
        raise ValueError(
            "pmap got inconsistent sizes for array axes to be mapped: the mapped axes "
            f"have sizes {', '.join(str(size) for size in sizes)}"
        )


def _compile_options(devices: Sequence) -> xla_client.CompileOptions:
    """One replica per device, in order."""
    options = xla_client.CompileOptions()
    options.num_replicas = len(devices)
    options.num_partitions = 1
    ids = np.array([[d.id] for d in devices], dtype=np.int64)
    options.device_assignment = xla_client.DeviceAssignment.create(ids)
    return options


def _insert(shape: tuple, axis: int, size: int) -> tuple:
    return (*shape[:axis], size, *shape[axis:])


class _Program:
    """The per-device program of a pmapped function for one signature, compiled."""

    def __init__(self, flat_fun, in_avals, in_axes, out_axes_of, name, n, devs, axis):
        # ``devices``: where this process's slices go; ``everywhere``: the devices of
        # the whole program, one replica each (more than ``devices`` across processes).
        devices, everywhere = devs
        self.devices, self.n, self.in_axes = devices, n, in_axes
        # Each device sees its slice with the mapped axis kept at size 1.
        local_avals = [
            a if ax is None else a.update(shape=_insert(a.shape, ax, 1))
            for a, ax in zip(in_avals, in_axes, strict=True)
        ]

        def per_device(*xs):
            sliced = [
                x if ax is None else reshape(x, _drop(x.shape, ax))
                for x, ax in zip(xs, in_axes, strict=True)
            ]
            outs = flat_fun(*sliced)
            self.out_axes = [
                None if ax is None else ax % (len(_shape(o)) + 1)
                for o, ax in zip(outs, out_axes_of(), strict=True)
            ]
            return [
                o if ax is None else broadcast_in_dim(o, _insert(_shape(o), ax, 1), _kept(o, ax))
                for o, ax in zip(outs, self.out_axes, strict=True)
            ]

        within = Mesh(np.array(everywhere), (axis,)).abstract_mesh
        within = within.update_axis_types({axis: AxisType.Manual})
        with bind_device_axis(axis, len(everywhere)), body_mesh(within):
            closed, _ = trace_to_jaxpr(per_device, local_avals, f"pmap({name})", what="pmap")
            self.lowered = lowered = lower_jaxpr(
                closed,
                module_name="pmap_" + re.sub(r"[^\w.-]", "_", name.replace(">", "")),
                platform=everywhere[0].client.platform,
                num_replicas=len(everywhere),
                keep_unused=True,
            )
        self.out_avals = lowered.out_avals
        callbacks = lowered.host_callbacks
        self.calls_host = bool(callbacks)
        self.executable = backend.compile(
            lowered.module if callbacks else lowered.as_bytecode(),
            everywhere,
            _compile_options(everywhere),
            name=f"pmap({name})",
            host_callbacks=callbacks,
        )
        mesh = Mesh(np.array(devices), (axis,))
        self.in_layouts = [_layout(mesh, axis, ax) for ax in in_axes]
        self.out_globals = []
        for aval, ax in zip(self.out_avals, self.out_axes, strict=True):
            shape = aval.shape if ax is None else _widen(aval.shape, ax, n)
            data = physical_aval(aval.update(shape=shape))  # PRNG keys: their key data
            handler = xla_client.array_result_handler(
                data, _layout(mesh, axis, ax), committed=True, _skip_checks=True
            )
            self.out_globals.append(handler)

    def __call__(self, leaves) -> list:
        args = [
            self._place(physical_value(x), layout, ax)
            for x, layout, ax in zip(leaves, self.in_layouts, self.in_axes, strict=True)
        ]
        results = self.executable.execute_sharded(args, with_tokens=self.calls_host)
        if self.calls_host:  # effects_barrier waits for its callbacks
            runtime_tokens.runtime_tokens.set_output_token(self.devices[0], results.consume_token())
        outs = results.consume_with_handlers(self.out_globals)
        return [
            aval.dtype.wrap_physical(o) if is_extended_aval(aval) else o
            for o, aval in zip(outs, self.out_avals, strict=True)
        ]

    def _place(self, x, layout: NamedSharding, dim: int | None):
        """``x`` as one array with a piece on each device: slice ``i`` of the mapped
        axis on device ``i``, or a full copy when unmapped."""
        if type(x) is xla_client.ArrayImpl and x.sharding == layout:
            return x
        aval = shaped_abstractify(x)
        value = np.asarray(x, dtype=aval.dtype)
        if dim is None:
            pieces = [device_put(value, d) for d in self.devices]
        else:
            pieces = [
                device_put(np.take(value, [i], axis=dim), d) for i, d in enumerate(self.devices)
            ]
        return xla_client.ArrayImpl(aval, layout, pieces, committed=True)


def _layout(mesh: Mesh, axis, dim: int | None) -> NamedSharding:
    """Dimension ``dim`` split over the devices of ``mesh`` (None: a copy on each)."""
    if dim is None:
        return NamedSharding(mesh, PartitionSpec())
    return NamedSharding(mesh, PartitionSpec(*[None] * dim, axis))


def _drop(shape: tuple, axis: int) -> tuple:
    return (*shape[:axis], *shape[axis + 1 :])


def _widen(shape: tuple, axis: int, n: int) -> tuple:
    return (*shape[:axis], n, *shape[axis + 1 :])


def _kept(x, axis: int) -> tuple[int, ...]:
    return tuple(i if i < axis else i + 1 for i in range(len(_shape(x))))


def _is_traced(leaves) -> bool:
    """Whether pmap is called inside another transformation."""
    return find_current_trace() is not eval_trace or any(isinstance(x, Tracer) for x in leaves)


def pmap(
    fun: Callable,
    axis_name=None,
    *,
    in_axes=0,
    out_axes=0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices=None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
) -> Any:
    """``fun`` mapped over an axis of its arguments, one slice per device, run as one
    program on all those devices; ``axis_name`` names the axis for collectives
    (``psum``, ``all_gather``, ``ppermute``, ...)."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    static = _argnums(static_broadcasted_argnums)
    _argnums(donate_argnums)  # validated; donation is not used by the replicated program
    name = getattr(fun, "__name__", "fun")
    axis = _ANONYMOUS_AXIS if axis_name is None else axis_name
    backend_name = backend
    programs: dict[tuple, _Program] = {}

    def resolve(args, kwargs):
        """The flat dynamic leaves, their mapped axes, the axis size and ``fun`` on
        the flat dynamic leaves."""
        _check_static(args, static, name)
        dyn_idx = [i for i in range(len(args)) if i not in static]
        dyn_args = tuple(args[i] for i in dyn_idx)
        if isinstance(in_axes, tuple) and static and len(in_axes) == len(args):
            dyn_axes = tuple(in_axes[i] for i in dyn_idx)
        else:
            dyn_axes = in_axes
        leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
        flat_axes = _flat_axes(dyn_axes, dyn_args, kwargs)
        try:
            axes = _normalized(leaves, flat_axes, axis)
        except _RankError as e:
            sized = [(x, ax) for x, ax in zip(leaves, flat_axes, strict=True)
                     if ax is not None and hasattr(x, "shape")]  # fmt: skip
            if not sized:
                raise ValueError(_NO_MAPPED) from None
            raise e.error(axis_size or sized[0][0].shape[sized[0][1]]) from None
        n, local, everywhere = _mapped_size(leaves, axes, axis_size, axis, devices, backend_name)
        check_context_mesh(Mesh(np.array(everywhere), (axis,)))
        devs = (local, everywhere)

        def call_fun(*dyn_leaves):
            a, k = tree_util.tree_unflatten(in_tree, list(dyn_leaves))
            full = list(args)
            for i, v in zip(dyn_idx, a, strict=True):
                full[i] = v
            return fun(*full, **k)

        return leaves, in_tree, axes, n, devs, call_fun

    def program_for(args, leaves, in_tree, axes, n, devs, call_fun) -> _Program:
        avals = [shaped_abstractify(x) for x in leaves]
        avals = [a if ax is None else a.update(shape=_drop(a.shape, ax))
                 for a, ax in zip(avals, axes, strict=True)]  # fmt: skip
        key = (in_tree, tuple(avals), tuple(axes), devs, tuple(args[i] for i in static))
        program = programs.get(key)
        if program is None:
            out_tree = []

            def flat_fun(*xs):
                flat, tree = tree_util.tree_flatten(call_fun(*xs))
                out_tree.append(tree)
                return flat

            def out_axes_of():
                return _flat_out_axes(out_axes, out_tree[0])

            program = _Program(flat_fun, avals, axes, out_axes_of, name, n, devs, axis)
            program.out_tree = out_tree[0]
            programs[key] = program
        return program

    @functools.wraps(fun)
    def pmapped(*args, **kwargs):
        leaves, in_tree, axes, n, devs, call_fun = resolve(args, kwargs)
        if _is_traced(leaves):
            return _staged(call_fun, leaves, axes, out_axes, devs, axis)(*leaves)
        program = program_for(args, leaves, in_tree, axes, n, devs, call_fun)
        return tree_util.tree_unflatten(program.out_tree, program(leaves))

    def lower(*args, **kwargs):
        """The per-device program for these arguments, as a lowered StableHLO module
        (``as_text()``)."""
        resolved = resolve(args, kwargs)
        return program_for(args, *resolved).lowered

    pmapped.lower = lower
    return pmapped


def _spec(axis, dim: int | None) -> PartitionSpec:
    return PartitionSpec() if dim is None else PartitionSpec(*[None] * dim, axis)


def _staged(call_fun, leaves, axes, out_axes, devs, axis) -> Callable:
    """Inside another transformation: a ``jit`` of a ``shard_map`` over a 1-D mesh of
    the devices, as JAX 0.10.2 runs ``pmap``."""
    local, everywhere = devs
    program = everywhere if backend.process_count() == 1 else local
    mesh = Mesh(np.array(program), (axis,))

    def body(*xs):
        sliced = [x if ax is None else reshape(x, _drop(x.shape, ax))
                  for x, ax in zip(xs, axes, strict=True)]  # fmt: skip
        out = call_fun(*sliced)
        flat, tree = tree_util.tree_flatten(out)
        dims = _flat_out_axes(out_axes, tree)
        flat = [o if ax is None else broadcast_in_dim(o, _insert(_shape(o), ax, 1), _kept(o, ax))
                for o, ax in zip(flat, dims, strict=True)]  # fmt: skip
        return tree_util.tree_unflatten(tree, flat)

    out_specs = tree_util.tree_map(lambda ax: _spec(axis, ax), out_axes,
                                   is_leaf=lambda x: x is None)  # fmt: skip
    in_specs = tuple(_spec(axis, ax) for ax in axes)
    mapped = shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                       axis_names={axis}, check_vma=False)  # fmt: skip
    return jit(mapped)


def _check_static(args, static, name) -> None:
    for i in static:
        if i >= len(args):
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={static} but was "
                f"called with only {len(args)} positional argument"
                f"{'s' if len(args) > 1 else ''}. All static broadcasted arguments "
                "must be passed positionally."
            )
        try:
            hash(args[i])
        except TypeError:
            raise ValueError(
                "Non-hashable static arguments are not supported, as this can lead to "
                f"unexpected cache-misses. Static argument (index {i}) of type "
                f"{type(args[i])} for function {name} is non-hashable."
            ) from None


def _flat_out_axes(out_axes, tree) -> list:
    skeleton = tree_util.tree_unflatten(tree, [_Leaf()] * tree.num_leaves)
    try:
        return tree_util.broadcast_prefix(out_axes, skeleton, is_leaf=lambda x: x is None)
    except ValueError:
        makers = prefix_errors(out_axes, skeleton, is_leaf=lambda x: x is None)
        raise ValueError(makers[0]("pmap out_axes")) from None
