"""Eager execution of primitives: the impl rule every primitive without a special one
uses.

``apply_primitive(primitive, *args, **params)`` runs one primitive on concrete values.
The first call for a given (primitive, params, input types, device) builds a
one-equation Jaxpr from the inputs' abstract values (abstract evaluation fills in the
outputs), lowers it to StableHLO, compiles it, and keeps the ``CompiledModule``; later
calls with the same key find it in a dictionary and run it straight away. Running
returns before the computation finishes (dispatch is asynchronous).

Python scalars and NumPy values are put on the device first (Python ``int``,
``float`` and ``complex`` as weakly typed arrays, as JAX does). Small Python scalars are
kept on the device once made, so ``x * 2`` does not copy ``2`` to the device each time.
Arrays of extended dtypes (PRNG keys) take :func:`apply_extended`: the executable of the
logical types, run on their physical data.

A primitive takes it as its impl rule with ``def_standard_impl(primitive)``, which is
``primitive.def_impl(functools.partial(apply_primitive, primitive))`` in effect.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from jaxlib import _jax, xla_client

from lamina.interpreters.core.config import config, host_transfer_watch, trace_context
from lamina.interpreters.core.monitoring import (
    JAXPR_TO_MLIR_MODULE_EVENT,
    JAXPR_TRACE_EVENT,
    compile_step,
)
from lamina.interpreters.jaxprs.discharge import discharge_state, has_refs
from lamina.interpreters.jaxprs.lowering import lower_jaxpr
from lamina.interpreters.jaxprs.staging import params_effects
from lamina.interpreters.runtime import backend
from lamina.interpreters.runtime.cpp_pjit import CacheKey, FastpathData, registry, shard_arg
from lamina.interpreters.runtime.executables import compiled_call
from lamina.interpreters.runtime.execute import CompiledModule, EffectfulModule, compile_lowered
from lamina.interpreters.runtime.extended import PhysicalCall, is_extended_value, physical_value
from lamina.interpreters.runtime.float_checks import check_values, checks_on
from lamina.interpreters.runtime.refs import Ref
from lamina.interpreters.runtime.sharding import first_device
from lamina.interpreters.runtime.transfer import put_on_device
from lamina.ir import (
    ClosedJaxpr,
    Jaxpr,
    Primitive,
    ShapedArray,
    Var,
    abstract_eval_rules,
    check_one_device_types,
    context_mesh,
    dtypes,
    new_jaxpr_eqn,
    physical_aval,
    type_placements,
    typed_value_aval,
)

__all__ = [
    "apply_extended",
    "apply_primitive",
    "clear_dispatch_cache",
    "compile_count",
    "def_standard_impl",
    "primitive_executable",
    "scalar_array",
]

ArrayImpl = xla_client.ArrayImpl

_cache: dict[Any, CompiledModule] = {}
_lock = threading.Lock()
_compiles = 0  # how many executables eager dispatch has compiled (for tests)
_fast: dict[Any, Any] = {}  # (primitive, *params items) -> jaxlib C++ function running it
_extended_calls: dict[Any, PhysicalCall] = {}  # same keys as _cache
_pjit_cache = _jax.PjitFunctionCache(capacity=8192)

# Python scalars put on the device, by (type, repr): repr tells 0.0 from -0.0 and
# keeps nan equal to itself. Bounded, as the values are user data.
_scalars: dict[tuple[type, str], Any] = {}
_MAX_SCALARS = 512
_PY_SCALARS = (int, float, complex, bool)


def compile_count() -> int:
    """How many one-primitive executables have been compiled so far."""
    return _compiles


def clear_dispatch_cache() -> None:
    _cache.clear()
    _ref_jaxprs.clear()
    _extended_calls.clear()
    _scalars.clear()
    _fast.clear()
    _pjit_cache.clear()


def scalar_array(x):
    """A Python scalar as a (weakly typed) device array, made once per value and kept
    (made anew while a host-to-device transfer guard is on: JAX transfers it each time)."""
    if host_transfer_watch.on:
        return put_on_device(x)
    kind = type(x)
    # A Python int is int64 under x64. Ints and bools are keyed by value; other values
    # by repr, which tells 0.0 from -0.0 and keeps nan equal to itself.
    key = (kind, x if kind is int or kind is bool else repr(x), dtypes.x64_enabled())
    arr = _scalars.get(key)
    if arr is None:
        arr = put_on_device(x)
        if len(_scalars) < _MAX_SCALARS:
            _scalars[key] = arr
    return arr


class _ExtendedOperand(Exception):
    """Raised by :func:`_to_array` for an array of an extended dtype (a PRNG key), so
    that the call takes :func:`apply_extended` instead."""


def _to_array(x):
    if type(x) in _PY_SCALARS:
        return scalar_array(x)
    if is_extended_value(x):
        raise _ExtendedOperand
    return put_on_device(x)


def _to_physical_operand(x):
    """An operand of :func:`apply_extended`: extended arrays as they are."""
    return x if type(x) is ArrayImpl or is_extended_value(x) else _to_array(x)


def _params_key(params: dict):
    items = tuple(params.items())
    try:
        hash(items)
    except TypeError:
        raise TypeError(
            f"primitive params must be hashable to be dispatched eagerly, got {params!r}"
        ) from None
    return items


def _one_equation_jaxpr(primitive: Primitive, in_avals, params) -> ClosedJaxpr:
    out = primitive.abstract_eval(*in_avals, **params)  # with the types' shardings
    if getattr(primitive, "effectful", False):
        out, effects = out
    else:
        effects = frozenset()
    effects = frozenset(effects) | params_effects(params)  # a loop's body prints, say
    out_avals = list(out) if primitive.multiple_results else [out]
    invars = [Var(a) for a in in_avals]
    outvars = [Var(a) for a in out_avals]
    eqn = new_jaxpr_eqn(invars, outvars, primitive, params, effects)
    return ClosedJaxpr(Jaxpr([], invars, outvars, [eqn], frozenset(effects)), [])


def primitive_executable(primitive: Primitive, in_avals, params: dict, device=None):
    """The ``CompiledModule`` computing ``primitive`` on inputs of types ``in_avals``
    on ``device`` (None: the default device); compiled once per configuration that
    lowerings may read (``trace_context()``) and cached."""
    if device is None:
        device = backend.default_device()
    key = (primitive, _params_key(params), tuple(in_avals), device, trace_context())
    compiled = _cache.get(key)
    if compiled is None:
        compiled = _compile(key, primitive, in_avals, params, device)
    return compiled


def _compile(key, primitive, in_avals, params, device) -> CompiledModule:
    global _compiles
    with _lock:
        compiled = _cache.get(key)
        if compiled is not None:
            return compiled
        if config.jax_no_tracing:
            raise RuntimeError(
                f"re-tracing function {primitive.name} for `jit`, but 'no_tracing' is set"
            )
        with compile_step(JAXPR_TRACE_EVENT, primitive.name):
            closed = _one_equation_jaxpr(primitive, list(in_avals), params)
            if has_refs(closed):  # references made inside (a loop body, say)
                closed = discharge_state(closed).jaxpr
        target = backend.default_device() if device is None else device
        name = f"jit({primitive.name})"
        with compile_step(JAXPR_TO_MLIR_MODULE_EVENT, name):
            lowered = lower_jaxpr(
                closed,
                module_name=f"jit_{primitive.name}",
                platform=target.client.platform,
                keep_unused=True,
            )
        compiled = compile_lowered(
            lowered,
            target,
            name=name,
            out_avals=[physical_aval(a) for a in closed.out_avals],
        )
        _compiles += 1
        _cache[key] = compiled
        return compiled


def apply_primitive(primitive: Primitive, *args, **params):
    """Run ``primitive`` on concrete ``args`` through a cached one-primitive executable;
    returns its result (a list of them for ``multiple_results`` primitives).

    Calls go through a jaxlib C++ function per (primitive, params), which runs the
    executable without Python once it has seen the argument types; the first call for
    each argument signature (and every call jaxlib declines) takes :func:`_apply`."""
    for x in args:
        if type(x) is not ArrayImpl:
            if any(type(a) is Ref for a in args):
                return _apply_with_refs(primitive, args, params)
            try:
                args = [x if type(x) is ArrayImpl else _to_array(x) for x in args]
            except _ExtendedOperand:
                return apply_extended(primitive, args, params)
            break
    try:
        fast = _fast[(primitive, *params.items())]
    except KeyError:
        fast = _fast_function(primitive, params)
    except TypeError:  # unhashable params: _apply says so
        return _apply(primitive, args, params)
    return fast(*args)


_ref_jaxprs: dict[Any, ClosedJaxpr] = {}


def _apply_with_refs(primitive: Primitive, args, params):
    """Eager dispatch with ``Ref`` operands: the one-primitive Jaxpr (made once per
    primitive, params and operand types) run discharged by ``compiled_call``."""
    args = [x if type(x) in (ArrayImpl, Ref) else _to_array(x) for x in args]
    avals = tuple(x.aval for x in args)
    key = (primitive, _params_key(params), avals)
    closed = _ref_jaxprs.get(key)
    if closed is None:
        closed = _ref_jaxprs[key] = _one_equation_jaxpr(primitive, list(avals), params)
    outs = compiled_call(closed, args, name=primitive.name)
    return outs if primitive.multiple_results else outs[0]


def _apply_float0(primitive: Primitive, args, params):
    """Eager dispatch with float0 operands or results (which stay on the host): the
    one-primitive Jaxpr run by ``compiled_call``, which passes float0 as JAX does."""
    avals = tuple(x.aval if type(x) is ArrayImpl else ShapedArray(x.shape, x.dtype) for x in args)
    key = (primitive, _params_key(params), avals, trace_context())
    closed = _ref_jaxprs.get(key)
    if closed is None:
        closed = _ref_jaxprs[key] = _one_equation_jaxpr(primitive, list(avals), params)
    outs = compiled_call(closed, args, name=primitive.name)
    return outs if primitive.multiple_results else outs[0]


def _apply_partitioned(primitive: Primitive, args, params):
    """Eager dispatch with operands laid out over several devices: the one-primitive
    Jaxpr run by ``compiled_call``, partitioned by the operands' shardings."""
    avals = tuple(typed_value_aval(x, x.aval) for x in args)  # typed by their layouts
    key = (primitive, _params_key(params), avals, trace_context())
    closed = _ref_jaxprs.get(key)
    if closed is None:
        closed = _ref_jaxprs[key] = _one_equation_jaxpr(primitive, list(avals), params)
    # results typed over an explicit mesh come out laid out by their types, as under jit
    placements = type_placements(closed.out_avals)
    if placements is None and all(physical_value(x)._sharding.num_devices == 1 for x in args):
        check_one_device_types(closed.out_avals)
    outs = compiled_call(closed, args, name=primitive.name, out_shardings=placements)
    if checks_on():
        check_values(primitive.name, outs)
    return outs if primitive.multiple_results else outs[0]


def _apply(primitive: Primitive, args, params):
    """The Python path of :func:`apply_primitive`."""
    args = [x if type(x) is ArrayImpl else _to_array(x) for x in args]
    if any(type(x) is not ArrayImpl for x in args):  # float0 values stay on the host
        return _apply_float0(primitive, args, params), None
    if params.get("sharding") is not None or params.get("out_sharding") is not None:
        return _apply_partitioned(primitive, args, params), None  # a result typed by them
    device = None
    for x in args:
        if x._committed:
            if x._sharding.num_devices != 1:
                return _apply_partitioned(primitive, args, params), None
            device = _committed_device(device, x)
    if device is None and context_mesh() is not None:  # run on the devices of set_mesh
        return _apply_partitioned(primitive, args, params), None
    avals = [x.aval for x in args]
    compiled = primitive_executable(primitive, avals, params, device)
    if any(a.dtype == dtypes.float0 for a in compiled.out_avals):
        return _apply_float0(primitive, args, params), None
    outs = compiled(*args)
    if checks_on():
        check_values(primitive.name, outs)
    return (outs if primitive.multiple_results else outs[0]), compiled


def _fast_function(primitive: Primitive, params: dict):
    def fun(*args):
        return _apply(primitive, args, params)[0]

    def cache_miss(*args):
        out, compiled = _apply(primitive, args, params)
        # partitioned calls, tokens and callbacks: Python runs them
        if compiled is None or isinstance(compiled, EffectfulModule):
            return out, None, False
        outs, tree = registry.flatten(out)
        n = len(args)
        data = FastpathData(
            compiled.executable, tree, [compiled.sharding] * n, [compiled.sharding] * len(outs),
            [o.aval for o in outs], [o._committed for o in outs], [True] * n, [None] * n, [],
        )  # fmt: skip
        return out, data, False

    fast = _jax.pjit(
        f"{primitive.name}_impl", fun, cache_miss, [], [], CacheKey(), registry, shard_arg,
        _pjit_cache,
    )  # fmt: skip
    fast._check_outputs = lambda args, kwargs, out: check_values(
        primitive.name, out if primitive.multiple_results else [out]
    )
    _fast[(primitive, *params.items())] = fast
    return fast


def apply_extended(primitive: Primitive, args, params):
    """Eager dispatch of ``primitive`` with some extended operands: the one-primitive
    executable of the logical types (compiled once, as :func:`apply_primitive` does),
    run on the physical data."""
    args = [_to_physical_operand(x) for x in args]
    device = None
    for x in args:
        data = physical_value(x)
        if data._committed:
            if data._sharding.num_devices != 1:
                return _apply_partitioned(primitive, args, params)
            device = _committed_device(device, data)
    if device is None and context_mesh() is not None:  # run on the devices of set_mesh
        return _apply_partitioned(primitive, args, params)
    avals = tuple(x.aval for x in args)
    key = (primitive, _params_key(params), avals, device, trace_context())
    call = _extended_calls.get(key)
    if call is None:
        compiled = primitive_executable(primitive, avals, params, device)
        out = abstract_eval_rules[primitive](*avals, **params)
        call = _extended_calls[key] = PhysicalCall(
            compiled, list(out) if primitive.multiple_results else [out]
        )
    outs = call(*args)
    return outs if primitive.multiple_results else outs[0]


def _committed_device(device, x):
    sharding = x._sharding
    if sharding.num_devices != 1:
        raise NotImplementedError(
            "eager operations on extended-dtype arrays sharded over several devices are "
            "not supported yet; use jit"
        )
    d = first_device(sharding)
    if device is not None and d != device:
        raise ValueError(
            "Received incompatible devices for jitted computation. Got argument on device "
            f"{d!r} and another argument on device {device!r}; move them to one device with "
            "device_put."
        )
    return d


def def_standard_impl(primitive: Primitive) -> Primitive:
    """Make eager dispatch (:func:`apply_primitive`) ``primitive``'s impl rule."""

    impl = functools.partial(apply_primitive, primitive)
    impl.__name__ = f"{primitive.name}_impl"
    primitive.def_impl(impl)
    return primitive
