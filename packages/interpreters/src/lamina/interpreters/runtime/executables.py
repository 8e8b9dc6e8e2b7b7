"""Lowering, compiling and running a ``ClosedJaxpr``: where an eager ``jit`` call ends.

Lowering to StableHLO, compiling once per (Jaxpr, donation, keep_unused, device)
(:func:`compiled_call`), compile logging, checks for ``jax_debug_nans`` and
``jax_debug_infs``, and ``jit_p``'s impl. ``jit`` (:mod:`..jit_functions`) traces and
keeps its per-signature cache; its stages API and C++ fast path build on these too.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import xla_client

from lamina.interpreters.core.config import config
from lamina.interpreters.core.monitoring import JAXPR_TO_MLIR_MODULE_EVENT, compile_step
from lamina.interpreters.jaxprs.calls import jit_p, none_for_unspecified
from lamina.interpreters.jaxprs.discharge import discharge_state, has_refs
from lamina.interpreters.jaxprs.jaxpr_cache import weak_entry_key
from lamina.interpreters.jaxprs.lowering import lower_jaxpr
from lamina.interpreters.jaxprs.tokens import split_tokens
from lamina.interpreters.runtime import backend
from lamina.interpreters.runtime.execute import compile_lowered
from lamina.interpreters.runtime.extended import PhysicalCall
from lamina.interpreters.runtime.float_checks import check_jaxpr_call, checks_on
from lamina.interpreters.runtime.partitioned_module import PartitionedModule
from lamina.interpreters.runtime.partitioning import (
    Partitioning,
    partitioning,
    physical_sharding,
)
from lamina.interpreters.runtime.refs import Ref
from lamina.interpreters.runtime.sharding import Sharding, first_device
from lamina.ir import (
    AbstractRef,
    ClosedJaxpr,
    Jaxpr,
    ShapedArray,
    context_placements,
    dtypes,
    is_extended_aval,
    physical_aval,
    shardable_ordered_effects,
)

__all__ = [
    "Executable",
    "call_placement",
    "compiled_call",
    "lower",
    "lowering_platform",
    "make_executable",
    "module_name",
]

# One logger for everything ``jit`` logs (tracing, lowering, compiling), named for it.
logger = logging.getLogger("lamina.interpreters.jit")
ArrayImpl = xla_client.ArrayImpl

# One lock for every cache miss (tracing, lowering, compiling); re-entrant because
# tracing one jitted function may call another.
_miss_lock = threading.RLock()


def module_name(name: str) -> str:
    """``jit_<name>`` made a valid MLIR symbol, as JAX names its modules."""
    return "jit_" + re.sub(r"[^\w.-]", "_", name.replace(">", ""))


def _log_level() -> int:
    return logging.WARNING if config.jax_log_compiles else logging.DEBUG


def lowering_platform(placement=None) -> str:
    """The platform a call placed on ``placement`` (a device or a :class:`Partitioning`;
    None for the default device) is lowered for: its client's (``cpu``, ``cuda``)."""
    device = placement.devices[0] if isinstance(placement, Partitioning) else placement
    if device is None:
        device = backend.default_device()
    return device.client.platform


def lower(closed: ClosedJaxpr, name: str, donated, keep_unused: bool, placement=None,
          platforms=None, **names):  # fmt: skip
    """``closed`` as a StableHLO module named ``jit_<name>`` (a ``LoweredModule``),
    annotated with the shardings of ``placement`` when it is a :class:`Partitioning`;
    for ``platforms`` (default: the platform of ``placement``)."""
    start = time.perf_counter()
    platforms = tuple(platforms) if platforms else (lowering_platform(placement),)
    if isinstance(placement, Partitioning):
        names.update(_hlo_shardings(closed, placement))
        donated = _shardable_donation(closed, placement, donated)
    with compile_step(JAXPR_TO_MLIR_MODULE_EVENT, f"jit({name})"):
        lowered = lower_jaxpr(
            closed,
            module_name=module_name(name),
            keep_unused=keep_unused,
            donated_args=donated,
            name_stack=f"jit({name})",
            platforms=platforms,
            num_partitions=len(placement.devices) if isinstance(placement, Partitioning) else 1,
            **names,
        )
    logger.log(
        _log_level(),
        "Finished jaxpr to MLIR module conversion jit(%s) in %.9f sec",
        name,
        time.perf_counter() - start,
    )
    return lowered


def _hlo_shardings(closed: ClosedJaxpr, placement: Partitioning) -> dict:
    """The ``arg_shardings`` / ``result_shardings`` of ``lower_jaxpr`` for a call (of
    the physical data, for arrays of extended dtypes)."""

    def hlo(s, a):
        return physical_sharding(s, a)._to_xla_hlo_sharding(physical_aval(a).ndim)

    ins = [hlo(s, a) for s, a in zip(placement.in_shardings, closed.in_avals, strict=True)]
    outs = placement.out_shardings or (None,) * len(closed.out_avals)
    return {
        "arg_shardings": ins,
        "result_shardings": [
            None if s is None else hlo(s, a) for s, a in zip(outs, closed.out_avals, strict=True)
        ],
    }


def _shardable_donation(closed: ClosedJaxpr, placement: Partitioning, donated):
    """Donation kept only for inputs whose sharding some output of their type shares
    (XLA aliases buffers of the same per-device shape only); JAX's warning names the
    per-device shapes of the others."""
    if not donated or placement.out_shardings is None:
        return donated
    pairs = zip(closed.out_avals, placement.out_shardings, strict=True)
    outs = {(a.shape, a.dtype, s) for a, s in pairs}
    kept, unusable = [], []
    for d, a, s in zip(donated, closed.in_avals, placement.in_shardings, strict=True):
        usable = d and (a.shape, a.dtype, s) in outs
        if d and not usable:
            unusable.append(a.update(shape=s.shard_shape(a.shape)).str_short())
        kept.append(usable)
    if unusable:
        warnings.warn(
            f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
            "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
            stacklevel=3,
        )
    return kept


def check_shardable_effects(effects) -> None:
    """JAX's error for ordered effects a program over several devices cannot have."""
    unsupported = shardable_ordered_effects.filter_not_in(effects)
    if unsupported:
        raise ValueError(
            f"The following ordered effects are not supported for more than 1 device: {unsupported}"
        )


def _is_float0(aval) -> bool:
    return getattr(aval, "dtype", None) == dtypes.float0


def _device_aval(aval):
    """What stands for ``aval`` on a device: booleans for float0 (as in the module)."""
    if _is_float0(aval):
        return ShapedArray(aval.shape, np.dtype(bool))
    return physical_aval(aval)


class Float0Slots:
    """Where a call takes and returns float0 values. As JAX, float0 arguments go to the
    device as boolean zeros and float0 results come back as NumPy float0 zeros."""

    __slots__ = ("ins", "outs")

    def __init__(self, in_avals, out_avals):
        self.ins = [i for i, a in enumerate(in_avals) if _is_float0(a)]
        self.outs = [(i, a.shape) for i, a in enumerate(out_avals) if _is_float0(a)]

    def arguments(self, args: Sequence[Any]) -> list:
        args = list(args)
        for i in self.ins:
            args[i] = np.zeros(np.shape(args[i]), np.dtype(bool))
        return args

    def results(self, outs: list) -> list:
        for i, shape in self.outs:
            outs[i] = np.zeros(shape, dtypes.float0)
        return outs


def float0_slots(lowered) -> Float0Slots | None:
    """The float0 inputs and outputs of ``lowered``, or None when it has none."""
    slots = Float0Slots(lowered.in_avals, lowered.out_avals)
    return slots if slots.ins or slots.outs else None


class Executable:
    """A lowered module compiled for one device (or a :class:`Partitioning`):
    ``run(flat_args)`` returns the outputs (``flat_args`` holds every input of the
    Jaxpr; the unused ones are dropped here)."""

    __slots__ = ("compiled", "float0", "in_avals", "kept", "lowered", "name")

    def __init__(self, lowered, n_in: int, device, name: str):
        self.name = name
        self.lowered = lowered
        kept = tuple(lowered.kept_var_idx)
        self.kept = None if kept == tuple(range(n_in)) else kept  # None: every input is used
        self.in_avals = lowered.in_avals
        self.float0 = float0_slots(lowered)
        out_avals = [_device_aval(a) for a in lowered.out_avals]
        if isinstance(device, Partitioning):
            check_shardable_effects(lowered.ordered_effects)
            ins = device.in_shardings
            if self.kept is not None:
                ins = tuple(ins[i] for i in self.kept)
            outs = device.out_shardings
            device = device._replace(
                in_shardings=tuple(map(physical_sharding, ins, lowered.in_avals)),
                out_shardings=outs and tuple(map(physical_sharding, outs, lowered.out_avals)),
                # a logical sharding to name the outputs XLA lays out after
                inner=device.inner or next((s for s in ins if s is not None), None),
            )
            self.compiled = PartitionedModule(
                lowered.module if lowered.host_callbacks else lowered.as_bytecode(),
                device,
                name=f"jit({name})",
                out_avals=out_avals,
                host_callbacks=lowered.host_callbacks,
                ordered_effects=lowered.ordered_effects,
            )
        else:
            self.compiled = compile_lowered(
                lowered, device, name=f"jit({name})", out_avals=out_avals
            )

    def run(self, args: Sequence[Any]) -> list:
        if self.kept is not None:
            args = [args[i] for i in self.kept]
        if self.float0 is not None:
            return self.float0.results(self.compiled(*self.float0.arguments(args)))
        return self.compiled(*args)


class ExtendedExecutable(Executable):
    """An :class:`Executable` with inputs or outputs of extended dtypes (PRNG keys): it
    runs on their physical data."""

    __slots__ = ("_call",)

    def __init__(self, lowered, n_in: int, device, name: str):
        super().__init__(lowered, n_in, device, name)
        self._call = PhysicalCall(self.compiled, lowered.out_avals)

    def run(self, args: Sequence[Any]) -> list:
        if self.kept is not None:
            args = [args[i] for i in self.kept]
        if self.float0 is not None:
            return self.float0.results(self._call(*self.float0.arguments(args)))
        return self._call(*args)


def make_executable(lowered, n_in: int, device, name: str) -> Executable:
    """The :class:`Executable` of ``lowered`` (an :class:`ExtendedExecutable` when it
    takes or returns arrays of extended dtypes)."""
    avals = (*lowered.in_avals, *lowered.out_avals)
    extended = any(is_extended_aval(a) for a in avals)
    return (ExtendedExecutable if extended else Executable)(lowered, n_in, device, name)


# Keyed on (id(closed), ...): each entry holds its Jaxpr weakly, and goes when it dies.
_executables: dict[tuple, tuple[Any, Executable]] = {}


def _device_of(args: Sequence[Any], device=None):
    """Where a call runs: the ``device=`` of the jit, else that of the first committed
    argument, else the default device."""
    if device is not None:
        return device
    for a in args:
        if type(a) is ArrayImpl and a._committed:
            return first_device(a._sharding)
    return backend.default_device()


_inner: dict[int, tuple[Any, Any]] = {}  # id -> (weak reference to the Jaxpr, sharding)


def inner_sharding(closed: ClosedJaxpr):
    """A sharding over several devices that an equation of ``closed`` (or of a Jaxpr
    nested in it) names in its params (a layout constraint, say), else None."""
    found = _inner.get(id(closed))
    if found is not None and found[0]() is closed:
        return found[1]
    sharding = _find_sharding(closed.jaxpr)
    _inner[id(closed)] = (weak_entry_key(closed, _inner, id(closed)), sharding)
    return sharding


# Types of params that hold nothing to look into (most params: axes, flags, names);
# the other types that are neither Jaxprs, sequences nor shardings join as they are met.
_PLAIN = {int, float, bool, str, bytes, type(None)}


def _find_sharding(jaxpr: Jaxpr, seen: set | None = None):
    seen = set() if seen is None else seen  # ids of the Jaxprs looked into
    seen.add(id(jaxpr))
    plain = _PLAIN
    for eqn in jaxpr.eqns:
        for value in eqn.params.values():  # most equations hold plain values only
            kind = type(value)
            if kind in plain:
                continue
            if kind is tuple:
                for v in value:
                    if type(v) not in plain:
                        break
                else:
                    continue
            break
        else:
            continue
        found = _find_in_params(eqn.params, seen)
        if found is not None:
            return found
    return None


def _find_in_params(params: dict, seen: set):
    stack = [v for v in params.values() if type(v) not in _PLAIN]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in _PLAIN:
            continue
        if kind is ClosedJaxpr:
            value, kind = value.jaxpr, Jaxpr
        if kind is Jaxpr:
            if id(value) not in seen:
                found = _find_sharding(value, seen)
                if found is not None:
                    return found
        elif isinstance(value, (tuple, list)):
            stack.extend(value)
        elif isinstance(value, Sharding):
            if value.num_devices > 1 and _on_devices(value):
                return value
        else:
            _PLAIN.add(kind)
    return None


def _on_devices(sharding) -> bool:
    """Whether ``sharding`` names devices (a type's sharding, over an abstract mesh,
    names none)."""
    mesh = getattr(sharding, "mesh", None)
    return mesh is None or getattr(mesh, "abstract_mesh", None) is not mesh


def call_placement(args, device, in_shardings, out_shardings, name="jit", arg_names=None,
                   closed=None):  # fmt: skip
    """Where a call runs: a :class:`Partitioning` when it spans several devices (see
    :func:`..partitioning.partitioning`), else its one device. ``closed`` is the Jaxpr
    called, whose layout constraints may name devices too."""
    if device is not None:
        return device
    inner = None if closed is None else inner_sharding(closed)
    if in_shardings is None and out_shardings is None and inner is None:
        first = None  # the common case: no argument spans several devices
        for a in args:
            if type(a) is not ArrayImpl:  # a PRNG key array: its data's placement
                a = getattr(a, "_base_array", None)
            if type(a) is ArrayImpl and a._committed:
                if a._sharding.num_devices != 1:
                    break
                if first is None:  # a one-device sharding of any kind (a 1-device mesh too)
                    first = first_device(a._sharding)
        else:
            if first is not None:
                return first
            # under set_mesh, a call on no committed array runs on the mesh's devices
            out_shardings = None if closed is None else context_placements(closed.out_avals)
            if out_shardings is None:
                return backend.default_device()
    found = partitioning(
        args, in_shardings, out_shardings, fun_name=name, arg_names=arg_names, inner=inner
    )
    if found is not None:
        return found if len(found.devices) > 1 else found.devices[0]
    return _device_of(args, device)


def compiled_call(
    closed: ClosedJaxpr,
    args: Sequence[Any],
    *,
    name: str = "jaxpr",
    donated_invars: Sequence[bool] = (),
    keep_unused: bool = False,
    device=None,
    arg_names=None,
    result_names=None,
    in_shardings=None,
    out_shardings=None,
    compiler_options: tuple = (),
) -> list:
    """Run ``closed`` on ``args`` (flat) as one compiled executable, compiled once per
    (Jaxpr object, donation, keep_unused, placement, ``compiler_options``: XLA's
    ``((name, value), ...)``). ``in_shardings`` /
    ``out_shardings`` (flat, None where unspecified) partition the call over several
    devices (see :func:`call_placement`). A Jaxpr with mutable array
    references runs discharged: each ``Ref`` argument or constant passes its array in
    and gets its final array back."""
    if has_refs(closed):
        return _call_with_refs(
            closed, args, name=name, donated_invars=donated_invars, keep_unused=keep_unused,
            device=device, compiler_options=compiler_options,
        )  # fmt: skip
    split = split_tokens(closed)
    if split is not None:
        donated = [donated_invars[i] for i in split.in_kept] if donated_invars else ()
        outs = compiled_call(
            split.closed,
            split.inputs(args),
            name=name,
            donated_invars=donated,
            keep_unused=keep_unused,
            device=device,
            arg_names=None if arg_names is None or callable(arg_names) else split.inputs(arg_names),
            result_names=None,
            in_shardings=None if in_shardings is None else split.inputs(in_shardings),
            compiler_options=compiler_options,
        )
        return split.outputs(outs)
    device = call_placement(
        args, device, in_shardings, out_shardings, name, arg_names=arg_names, closed=closed
    )
    donated = tuple(donated_invars) or (False,) * len(args)
    key = (id(closed), donated, keep_unused, device, compiler_options)
    entry = _executables.get(key)
    if entry is None:
        with _miss_lock:
            entry = _executables.get(key)
            if entry is None:
                _log_compile(name, closed.in_avals)
                names = {}
                if callable(arg_names):
                    arg_names = None
                if arg_names is not None and len(arg_names) == len(closed.in_avals):
                    names["arg_names"] = arg_names
                if result_names is not None and len(result_names) == len(closed.out_avals):
                    names["result_names"] = result_names
                lowered = lower(closed, name, donated, keep_unused, device, **names)
                with backend.compiler_option_overrides(dict(compiler_options)):
                    exe = make_executable(lowered, len(closed.in_avals), device, name)
                entry = _executables[key] = (weak_entry_key(closed, _executables, key), exe)
    outs = entry[1].run(args)
    if checks_on():
        check_jaxpr_call(closed, args, outs, name)
    return outs


_with_ref_args: dict[int, tuple[Any, ClosedJaxpr, list]] = {}


def _refs_to_inputs(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """``closed`` taking its ``Ref`` constants as trailing inputs, and those ``Ref``s."""
    entry = _with_ref_args.get(id(closed))
    if entry is None or entry[0]() is not closed:
        jaxpr = closed.jaxpr
        is_ref = [type(v.aval) is AbstractRef for v in jaxpr.constvars]
        pairs = list(zip(jaxpr.constvars, closed.consts, is_ref, strict=True))
        moved = jaxpr.replace(
            constvars=[v for v, _, r in pairs if not r],
            invars=[*jaxpr.invars, *[v for v, _, r in pairs if r]],
        )
        refs = [c for _, c, r in pairs if r]
        moved_closed = ClosedJaxpr(moved, [c for _, c, r in pairs if not r])
        entry = (weak_entry_key(closed, _with_ref_args, id(closed)), moved_closed, refs)
        _with_ref_args[id(closed)] = entry
    return entry[1], entry[2]


def _call_with_refs(
    closed, args, *, name, donated_invars, keep_unused, device, compiler_options
) -> list:
    opened, ref_consts = _refs_to_inputs(closed)
    args = [*args, *ref_consts]
    seen: set[int] = set()
    for var, x in zip(opened.jaxpr.invars, args, strict=True):
        if type(var.aval) is AbstractRef:
            if type(x) is not Ref:
                raise TypeError(
                    f"expected a mutable array reference of type {var.aval.str_short()}, "
                    f"got {type(x).__name__}"
                )
            if id(x) in seen:
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument "
                    f"to a function, but the mutable array reference of type "
                    f"{var.aval.str_short()} appeared twice"
                )
            seen.add(id(x))
    discharged = discharge_state(opened)
    donated = (*donated_invars, *[False] * len(ref_consts)) if donated_invars else ()
    outs = compiled_call(
        discharged.jaxpr,
        [x._buf if type(x) is Ref else x for x in args],
        name=name,
        donated_invars=donated,
        keep_unused=keep_unused,
        device=device,
        compiler_options=compiler_options,
    )
    n = len(closed.out_avals)
    for x, new in zip(args, discharged.new_values(args, outs[n:]), strict=True):
        if new is not None:
            x._buf = new
    return outs[:n]


def _log_compile(name: str, in_avals) -> None:
    logger.log(
        _log_level(),
        "Compiling jit(%s) with global shapes and types %s. Argument mapping: %s.",
        name,
        "(" + "".join(f"{a!r}, " for a in in_avals).rstrip(" ") + ")",
        "(" + "UnspecifiedValue, " * len(in_avals) + ")",
    )


def _jit_impl(*args, jaxpr, name, donated_invars, keep_unused, in_shardings=(),
              out_shardings=(), compiler_options_kvs=(), **_):  # fmt: skip
    return compiled_call(
        jaxpr,
        args,
        name=name,
        donated_invars=donated_invars,
        keep_unused=keep_unused,
        in_shardings=none_for_unspecified(in_shardings),
        out_shardings=none_for_unspecified(out_shardings),
        compiler_options=compiler_options_kvs,
    )


jit_p.def_impl(_jit_impl)
