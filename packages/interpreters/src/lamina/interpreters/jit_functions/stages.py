"""The stages of a jitted call, as JAX exposes them: ``jitted.trace(*args)`` gives a
:class:`Traced` (the Jaxpr), ``.lower()`` a :class:`Lowered` (the StableHLO module),
``.compile()`` a :class:`Compiled` (the XLA executable), which is callable. Each
describes its arguments with :class:`ArgInfo` (``args_info``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from jaxlib import _jax

from lamina.interpreters.jaxprs.lowering import ordered_effects_of
from lamina.interpreters.jaxprs.tokens import split_tokens
from lamina.interpreters.jaxprs.trace_api import ShapeDtypeStruct
from lamina.interpreters.jit_functions.fastpath import compiled_function
from lamina.interpreters.jit_functions.jit_args import _abstractify
from lamina.interpreters.jit_functions.jit_shardings import check_type_devices
from lamina.interpreters.runtime import backend
from lamina.interpreters.runtime.executables import (
    _log_compile,
    call_placement,
    check_shardable_effects,
    lower,
    make_executable,
)
from lamina.interpreters.runtime.partitioning import Partitioning
from lamina.ir import AbstractToken, tree_util

__all__ = ["ArgInfo", "Compiled", "Lowered", "Traced"]


def _structs(avals) -> list[ShapeDtypeStruct]:
    return [
        ShapeDtypeStruct(a.shape, a.dtype, getattr(a, "type_sharding", None), weak_type=a.weak_type)
        for a in avals
    ]


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """One argument of a staged call: its abstract value and whether it is donated."""

    _aval: Any
    donated: bool

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)


class _Stage:
    """What every stage tells about the traced call (``_traced`` is the Traced)."""

    in_tree = property(lambda self: self._traced._entry.in_tree)
    out_tree = property(lambda self: self._traced._entry.out_tree)
    fun_name = property(lambda self: self._traced._jitted._name)

    @property
    def out_info(self):
        return tree_util.tree_unflatten(self.out_tree, _structs(self._traced.jaxpr.out_avals))

    @property
    def in_avals(self):
        return tree_util.tree_unflatten(self.in_tree, list(self._traced.jaxpr.in_avals))

    @property
    def args_info(self):
        """The pytree ``(args, kwargs)`` of :class:`ArgInfo`, one per array argument."""
        avals = self._traced.jaxpr.in_avals
        donated = self._traced._entry.donated or (False,) * len(avals)
        infos = [ArgInfo(a, bool(d)) for a, d in zip(avals, donated, strict=True)]
        return tree_util.tree_unflatten(self.in_tree, infos)

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """The positions of the donated arguments among the flat array arguments."""
        return tuple(i for i, d in enumerate(self._traced._entry.donated) if d)


class Traced(_Stage):
    """A jitted function traced for one signature."""

    def __init__(self, jitted, entry, leaves):
        self._jitted = jitted
        self._entry = entry
        self._leaves = leaves
        self._traced = self

    jaxpr = property(lambda self: self._entry.closed)

    @property
    def out_avals(self):
        return tree_util.tree_unflatten(self.out_tree, list(self.jaxpr.out_avals))

    def lower(self, *, lowering_platforms=None, _private_parameters=None) -> Lowered:
        """The StableHLO module, for the platform of the call's device, or for
        ``lowering_platforms`` (``("cuda",)`` works without a GPU; several platforms
        give a module whose ``main`` takes the platform index first)."""
        del _private_parameters
        j, entry = self._jitted, self._entry
        closed = entry.closed
        if entry.typed_unplaced:
            check_type_devices(closed.out_avals, self._leaves)
        names = {}
        if len(entry.result_names) == len(closed.out_avals):
            names["result_names"] = entry.result_names
        arg_names = j._leaf_names(entry, self._leaves)  # the arguments' locations, as JAX's
        if len(arg_names) == len(closed.in_avals):
            names["arg_names"] = arg_names
        placement = self._placement()
        platforms = None
        if lowering_platforms:
            platforms = tuple(_canonical_platform(p) for p in lowering_platforms)
        lowered = lower(
            closed, j._name, entry.donated or None, j._keep_unused, placement, platforms, **names
        )
        return Lowered(self, lowered, placement)

    def _placement(self):
        """Where the call runs: its device, or a ``Partitioning`` over several."""
        j, entry = self._jitted, self._entry
        return call_placement(
            self._leaves, j._device, entry.in_shardings, entry.out_shardings, j._name,
            closed=entry.closed,
        )  # fmt: skip


def _canonical_platform(platform: str) -> str:
    """``gpu`` names the GPU platform present (as JAX, an error without one)."""
    return backend.get_backend("gpu").platform if platform == "gpu" else platform


def _check_dialect(dialect) -> None:
    if dialect not in (None, "stablehlo"):
        raise ValueError(f"unknown dialect: {dialect}")


class Lowered(_Stage):
    """A traced function lowered to StableHLO."""

    def __init__(self, traced: Traced, lowered, placement=None):
        self._traced = traced
        self._lowered = lowered
        self._placement = placement

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The module as text: StableHLO (the default), or XLA's HLO (``"hlo"``)."""
        if dialect == "hlo":
            return self.compiler_ir("hlo").as_hlo_text()
        _check_dialect(dialect)
        return self._lowered.as_text(debug_info=debug_info)

    @property
    def lowered_module(self):
        """The ``LoweredModule``: the module with its kept inputs, host callbacks and
        ordered effects (what ``lamina.export`` records)."""
        return self._lowered

    def compiler_ir(self, dialect: str | None = None):
        """The module: the StableHLO MLIR module, or an ``XlaComputation`` for
        ``"hlo"`` (converted by jaxlib, as JAX does)."""
        if dialect == "hlo":
            text = self._lowered.as_text(debug_info=True)
            return _jax.mlir.mlir_module_to_xla_computation(
                text, use_tuple_args=False, return_tuple=False
            )
        _check_dialect(dialect)
        return self._lowered.module

    def compile(self, compiler_options=None) -> Compiled:
        """Compile with XLA, passing it jit's ``compiler_options`` and then these
        (``{name: value}``)."""
        options = {**dict(self._traced._jitted._compiler_options), **(compiler_options or {})}
        with backend.compiler_option_overrides(options):
            return self._compile()

    def _compile(self) -> Compiled:
        if len(self._lowered.platforms) > 1:
            raise ValueError(
                "A module lowered for several platforms "
                f"{self._lowered.platforms} cannot be compiled: lower it for one"
            )
        device = self._placement
        if device is None:
            device = self._traced._jitted._device or backend.default_device()
        closed, name = self._traced.jaxpr, self._traced.fun_name
        _log_compile(name, closed.in_avals)
        split = split_tokens(closed)
        if isinstance(device, Partitioning):
            check_shardable_effects(ordered_effects_of(closed.effects))
        if split is None:
            return Compiled(
                self._traced, make_executable(self._lowered, len(closed.in_avals), device, name)
            )
        # Tokens order effects at trace time; the executable runs without them.
        lowered = lower(split.closed, name, None, self._traced._jitted._keep_unused, device)
        exe = make_executable(lowered, len(split.closed.in_avals), device, name)
        return Compiled(self._traced, _WithoutTokens(exe, split))


class _WithoutTokens:
    """An executable of a token-free program, called with and returning tokens."""

    def __init__(self, executable, split):
        self.compiled = executable.compiled
        self._executable, self._split = executable, split

    def run(self, args):
        return self._split.outputs(self._executable.run(self._split.inputs(args)))


class Compiled(_Stage):
    """A lowered function compiled by XLA; call it with arguments of the traced types."""

    def __init__(self, traced: Traced, executable):
        self._traced = traced
        self._executable = executable
        self._run = None  # made at the first call: jaxlib's C++ path where it can be

    @property
    def _xla(self):
        return self._executable.compiled.executable

    def as_text(self) -> str:
        """The optimized HLO of the compiled program."""
        return "\n".join(m.to_string() for m in self._xla.hlo_modules())

    def cost_analysis(self) -> dict[str, Any]:
        return dict(self._xla.cost_analysis())

    def memory_analysis(self):
        return self._xla.get_compiled_memory_stats()

    def runtime_executable(self):
        return self._xla

    @property
    def input_shardings(self):
        """The sharding of each argument, as the pytree ``(args, kwargs)``."""
        compiled = self._executable.compiled
        n = len(self._traced.jaxpr.in_avals)
        placement = getattr(compiled, "placement", None)
        if placement is not None:
            kept = getattr(self._executable, "kept", None) or range(n)
            flat = [None] * n  # unused arguments have none
            for i, s in zip(kept, placement.in_shardings, strict=True):
                flat[i] = s
        else:
            flat = [compiled.sharding] * n
        return tree_util.tree_unflatten(self.in_tree, flat)

    @property
    def output_shardings(self):
        """The sharding of each result, as the result's pytree."""
        compiled = self._executable.compiled
        n = len(self._traced.jaxpr.out_avals)
        flat = getattr(compiled, "out_shardings", None) or [compiled.sharding] * n
        return tree_util.tree_unflatten(self.out_tree, list(flat))

    def __call__(self, *args, **kwargs):
        if self._run is None:
            self._run = compiled_function(self)
        return self._run(*args, **kwargs)

    def _call(self, *args, **kwargs):
        jitted = self._traced._jitted
        dyn_args, dyn_kwargs, _ = jitted._split(args, kwargs)
        leaves, treedef = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        if treedef != self.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it "
                f"was called with. Expected {self.in_tree}, got {treedef}."
            )
        avals = [_abstractify(x) for x in leaves]
        expected = list(self._traced.jaxpr.in_avals)
        for i, (got, want) in enumerate(zip(avals, expected, strict=True)):
            if isinstance(want, AbstractToken) or isinstance(got, AbstractToken):
                if type(got) is not type(want):
                    raise TypeError(
                        f"Argument {i} of this computation is {want}, but it was called "
                        f"with {got}: pass a token (lax.create_token()) exactly there."
                    )
                continue
            if (got.shape, got.dtype) != (want.shape, want.dtype):
                raise TypeError(
                    "Argument types differ from the types for which this computation was "
                    f"compiled. At argument {i}: expected {want.str_short()}, got "
                    f"{got.str_short()}."
                )
        outs = self._executable.run(leaves)
        return tree_util.tree_unflatten(self.out_tree, outs)
