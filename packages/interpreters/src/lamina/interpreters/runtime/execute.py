"""Running compiled StableHLO on arrays: the path every computation takes.

``CompiledModule`` holds a loaded executable together with jaxlib C++ *result
handlers*, one per output, which turn the executable's output buffers into arrays
without calling back into Python. A call is ``execute_sharded`` plus
``consume_with_handlers``; both return before the computation has finished
(dispatch is asynchronous; reading a value or ``block_until_ready`` waits).

``EffectfulModule`` is the same for programs with effects (host callbacks, ordered
effects), which also pass tokens (``runtime_tokens``); ``compile_lowered`` picks one.

``execute_stablehlo(text, args)`` compiles a module once per (text, device) and runs
it: the eager path in miniature. Output types are read from the compiled program.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
from jaxlib import xla_client

from lamina.interpreters.core.config import no_execution
from lamina.interpreters.runtime import backend
from lamina.interpreters.runtime.runtime_tokens import runtime_tokens
from lamina.interpreters.runtime.sharding import first_device, sharding_for_device
from lamina.interpreters.runtime.transfer import copy_array, put_on_device
from lamina.ir import ShapedArray

__all__ = [
    "CompiledModule",
    "EffectfulModule",
    "compile_lowered",
    "execute_stablehlo",
    "tensor_type",
]

ArrayImpl = xla_client.ArrayImpl

# NumPy dtype -> MLIR element type.
_ELEMENT_TYPES = {
    np.dtype(np.bool_): "i1",
    **{np.dtype(f"int{n}"): f"i{n}" for n in (8, 16, 32, 64)},
    **{np.dtype(f"uint{n}"): f"ui{n}" for n in (8, 16, 32, 64)},
    **{np.dtype(getattr(ml_dtypes, f"int{n}")): f"i{n}" for n in (1, 2, 4)},
    **{np.dtype(getattr(ml_dtypes, f"uint{n}")): f"ui{n}" for n in (1, 2, 4)},
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>",
    np.dtype(np.complex128): "complex<f64>",
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(ml_dtypes.float4_e2m1fn): "f4E2M1FN",
    np.dtype(ml_dtypes.float6_e2m3fn): "f6E2M3FN",
    np.dtype(ml_dtypes.float6_e3m2fn): "f6E3M2FN",
    np.dtype(ml_dtypes.float8_e3m4): "f8E3M4",
    np.dtype(ml_dtypes.float8_e4m3): "f8E4M3",
    np.dtype(ml_dtypes.float8_e4m3b11fnuz): "f8E4M3B11FNUZ",
    np.dtype(ml_dtypes.float8_e4m3fn): "f8E4M3FN",
    np.dtype(ml_dtypes.float8_e4m3fnuz): "f8E4M3FNUZ",
    np.dtype(ml_dtypes.float8_e5m2): "f8E5M2",
    np.dtype(ml_dtypes.float8_e5m2fnuz): "f8E5M2FNUZ",
    np.dtype(ml_dtypes.float8_e8m0fnu): "f8E8M0FNU",
}


def tensor_type(shape: Sequence[int], dtype: Any) -> str:
    """The MLIR tensor type of an array, e.g. ``tensor<2x3xf32>`` or ``tensor<i1>``."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + _ELEMENT_TYPES[np.dtype(dtype)] + ">"


def _output_avals(executable) -> list[ShapedArray]:
    """The result types of a compiled executable, read from its program shape."""
    module = executable.hlo_modules()[0]
    shape = xla_client.XlaComputation(module.as_serialized_hlo_module_proto())
    result = shape.program_shape().result_shape()
    pieces = result.tuple_shapes() if result.is_tuple() else [result]
    return [ShapedArray(s.dimensions(), s.numpy_dtype()) for s in pieces]


class CompiledModule:
    """A StableHLO module compiled for one device, callable on arrays of that device.

    Calling it returns a list of arrays, committed to the device when any argument is.
    """

    def __init__(
        self,
        module: Any,
        device,
        *,
        name: str = "module",
        out_avals=None,
        host_callbacks: Sequence[Any] = (),
    ):
        self.name = name
        self.device = device
        self.sharding = sharding_for_device(device)
        self.host_callbacks = list(host_callbacks)  # kept alive with the executable
        self.executable = backend.compile(
            module, [device], name=name, host_callbacks=self.host_callbacks
        )
        self.out_avals = (
            list(out_avals) if out_avals is not None else _output_avals(self.executable)
        )
        self._handlers = {
            committed: [
                xla_client.array_result_handler(
                    aval, self.sharding, committed=committed, _skip_checks=True
                )
                for aval in self.out_avals
            ]
            for committed in (False, True)
        }

    def __call__(self, *args: Any) -> list:
        if no_execution.value:
            _refuse_execution(self.name)
        committed = False
        for a in args:
            if type(a) is not ArrayImpl or a._sharding is not self.sharding:
                args = self._place(args)
                committed = any(a._committed for a in args)
                break
            committed = committed or a._committed
        results = self.executable.execute_sharded(args)
        return results.consume_with_handlers(self._handlers[committed])

    def _arguments(self, args: Sequence[Any]) -> tuple[list, bool]:
        """``args`` placed on this device, and whether any is committed."""
        args = self._place(args)
        return args, any(a._committed for a in args)

    def _place(self, args: Sequence[Any]) -> list:
        """Arguments that are not yet arrays on this device, moved there."""
        placed = []
        for a in args:
            if type(a) is not ArrayImpl:
                a = put_on_device(a)
            if a._sharding != self.sharding and not _on_only(a._sharding, self.device):
                if a._committed:
                    raise ValueError(
                        f"An argument of shape {a.aval.str_short()} is committed to "
                        f"{a._sharding}, but this computation runs on {self.device!r}."
                    )
                a = copy_array(a, self.sharding, committed=False)
            placed.append(a)
        return placed


def _on_only(sharding, device) -> bool:
    """Whether ``sharding`` lays its array out on ``device`` alone (a one-device mesh's
    NamedSharding, say): its buffer is used where it is."""
    return sharding.num_devices == 1 and first_device(sharding) == device


class EffectfulModule(CompiledModule):
    """A :class:`CompiledModule` whose program has effects: it takes and returns one
    token per ordered effect (from and to ``runtime_tokens``) and calls Python on the
    host; each call records the runtime token that ``effects_barrier`` waits on."""

    def __init__(self, module: Any, device, *, ordered_effects: Sequence[Any] = (), **kw):
        super().__init__(module, device, **kw)
        self.ordered_effects = tuple(ordered_effects)

    def __call__(self, *args: Any) -> list:
        args, committed = self._arguments(args)
        tokens = [runtime_tokens.token_input(e, self.sharding) for e in self.ordered_effects]
        results = self.executable.execute_sharded([*tokens, *args], with_tokens=True)
        if tokens:
            token_outs = results.consume_with_handlers([_first] * len(tokens), strict=False)
            for effect, token in zip(self.ordered_effects, token_outs, strict=True):
                runtime_tokens.set_token_result(effect, token)
        runtime_tokens.set_output_token(self.device, results.consume_token())
        return results.consume_with_handlers(self._handlers[committed])


def _first(pieces):
    return pieces[0]


def compile_lowered(lowered, device, *, name: str, out_avals=None) -> CompiledModule:
    """A ``LoweredModule`` compiled for ``device``: an :class:`EffectfulModule` when it
    calls back into Python or has ordered effects, else a :class:`CompiledModule`."""
    if lowered.host_callbacks or lowered.ordered_effects:
        return EffectfulModule(
            lowered.module,
            device,
            name=name,
            out_avals=out_avals,
            host_callbacks=lowered.host_callbacks,
            ordered_effects=lowered.ordered_effects,
        )
    # The module itself: XLA takes it without printing and parsing it again (text
    # costs about 20 ms on a 3-layer MLP's gradient, bytecode about 1.5 ms on any module).
    return CompiledModule(lowered.module, device, name=name, out_avals=out_avals)


_cache: dict[tuple[str, Any], CompiledModule] = {}
_MODULE_NAME = re.compile(r"module\s+@([\w.$-]+)")
_cache_lock = threading.Lock()


def _refuse_execution(name: str):
    """JAX's error for an execution under ``jax_no_execution``."""
    if name.startswith("jit_"):  # a primitive's module, named as JAX's jit(add)
        name = f"jit({name[4:]})"
    raise RuntimeError(
        f"JAX tried to execute function {name}, but the no_execution config option is set"
    )


def execute_stablehlo(text: str, args: Sequence[Any] = ()) -> list:
    """Compile (once per text and device) and run a StableHLO module on ``args``
    (arrays, or host values, which are put on the device first). It runs on the device
    of the committed arguments, else on the default device. Returns its outputs as
    arrays; the computation may still be running when this returns."""
    device = None  # the default device
    for a in args:
        if type(a) is ArrayImpl and a._committed:
            device = first_device(a._sharding)
            break
    compiled = _cache.get((text, device))
    if compiled is None:
        with _cache_lock:
            compiled = _cache.get((text, device))
            if compiled is None:
                target = backend.default_device() if device is None else device
                found = _MODULE_NAME.search(text)
                name = found.group(1) if found else "module"
                compiled = _cache[(text, device)] = CompiledModule(text, target, name=name)
    return compiled(*args)


def clear_cache() -> None:
    _cache.clear()


# --------------------------------------------------------------------- iteration


_CHUNK = 100


def _unstack_text(aval: ShapedArray, count: int) -> str:
    """A module taking (x, start) and returning rows start .. start+count-1 of x."""
    rest = aval.shape[1:]
    row = tensor_type(rest, aval.dtype)
    one_row = tensor_type((1, *rest), aval.dtype)
    full = tensor_type(aval.shape, aval.dtype)
    zeros = ", ".join(["%zero"] * len(rest))
    sizes = ", ".join(str(d) for d in (1, *rest))
    body = ["    %zero = stablehlo.constant dense<0> : tensor<i32>"]
    for j in range(count):
        starts = ", ".join([f"%i{j}", zeros]) if rest else f"%i{j}"
        kinds = ", ".join(["tensor<i32>"] * (len(rest) + 1))
        body += [
            f"    %c{j} = stablehlo.constant dense<{j}> : tensor<i32>",
            f"    %i{j} = stablehlo.add %start, %c{j} : tensor<i32>",
            f'    %s{j} = "stablehlo.dynamic_slice"(%x, {starts}) '
            f"{{slice_sizes = array<i64: {sizes}>}} : ({full}, {kinds}) -> {one_row}",
            f"    %r{j} = stablehlo.reshape %s{j} : ({one_row}) -> {row}",
        ]
    results = ", ".join(f"%r{j}" for j in range(count))
    return "\n".join(
        [
            "module @unstack attributes {mhlo.num_partitions = 1 : i32, "
            "mhlo.num_replicas = 1 : i32} {",
            f"  func.func public @main(%x: {full}, %start: tensor<i32>) -> "
            f"({', '.join([row] * count)}) {{",
            *body,
            f"    return {results} : {', '.join([row] * count)}",
            "  }",
            "}",
        ]
    )


def unstack(x) -> list:
    """The rows of a one-device array, as arrays on its device (computed there)."""
    x._check_if_deleted()
    if x.sharding.num_devices != 1:  # as JAX does: through the host, to the default device
        return [put_on_device(row) for row in x._value]
    device = x._sharding._device
    rows = []
    for start in range(0, x.shape[0], _CHUNK):
        count = min(_CHUNK, x.shape[0] - start)
        text = _unstack_text(x.aval, count)
        key = (text, device)
        compiled = _cache.get(key)
        if compiled is None:
            avals = [x.aval.update(shape=x.shape[1:])] * count
            compiled = _cache[key] = CompiledModule(text, device, name="unstack", out_avals=avals)
        offset = _jax_scalar(start, compiled.sharding)
        rows += compiled(x, offset)
    return rows


def _jax_scalar(value: int, sharding):
    """An int32 scalar on ``sharding``'s device, uncommitted."""
    aval = ShapedArray((), np.int32)
    return xla_client.batched_device_put(
        aval, sharding, [np.int32(value)], [sharding._device], False
    )
