"""Running a StableHLO module partitioned over several devices by XLA's SPMD partitioner.

The module carries GSPMD ``mhlo.sharding`` attributes on its inputs and on the outputs
whose layout was asked for; the others XLA chooses (it may propagate shardings to them),
and the compiled program reports its choice, which becomes that output's sharding.
Inputs are placed by their shardings before the call; outputs are committed arrays.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from jaxlib import xla_client

from lamina.interpreters.core.config import no_execution
from lamina.interpreters.runtime import backend
from lamina.interpreters.runtime.partitioning import Partitioning, replicated
from lamina.interpreters.runtime.runtime_tokens import runtime_tokens
from lamina.interpreters.runtime.transfer import place
from lamina.ir import ShapedArray

__all__ = ["PartitionedModule", "compile_options_for"]

ArrayImpl = xla_client.ArrayImpl


def compile_options_for(placement: Partitioning, n_out: int, n_tokens: int = 0
                        ) -> xla_client.CompileOptions:  # fmt: skip
    """SPMD compile options over the placement's devices, with GSPMD annotations and
    XLA free to choose the layout of outputs asked for nothing (not of the
    ``n_tokens`` leading token outputs)."""
    options = backend.compile_options(placement.devices)
    build = options.executable_build_options
    build.use_shardy_partitioner = False
    outs = placement.out_shardings or (None,) * n_out
    build.allow_spmd_sharding_propagation_to_output = [False] * n_tokens + [o is None for o in outs]
    build.allow_spmd_sharding_propagation_to_parameters = [False]
    return options


def _output_sharding(hlo, placement: Partitioning, ndim: int):
    """A sharding object for an output XLA laid out by ``hlo``: one of the call's own
    shardings when it says the same (so a ``NamedSharding`` stays one), else what a
    sharding of the call makes of ``hlo`` (``_from_hlo_sharding``), else a
    ``GSPMDSharding``."""
    known = [*placement.in_shardings, *(placement.out_shardings or ()), placement.inner]
    # the shardings the call was given first, the GSPMD ones made up for it last
    known.sort(key=lambda s: type(s) is xla_client.GSPMDSharding)
    for s in known:
        if s is not None and _hlo_or_none(s, ndim) == hlo:
            return s
    for s in known:
        if s is None:
            continue
        convert = getattr(s, "_from_hlo_sharding", None)
        made = convert(hlo, ndim) if convert is not None else _same_mesh(s, hlo, ndim)
        if made is not None:
            return made
    return xla_client.GSPMDSharding(placement.devices, hlo)


def _same_mesh(sharding, hlo, ndim: int):
    """A sharding over the same mesh as ``sharding`` (one with a ``mesh``, a ``spec``
    and ``update(spec=...)``) that lays ``ndim``-dimensional arrays out by ``hlo``, found
    by trying the ways of spreading the mesh's axes over the dimensions; None if none
    does (or there are too many ways to try)."""
    mesh, spec = getattr(sharding, "mesh", None), getattr(sharding, "spec", None)
    if mesh is None or spec is None or not hasattr(sharding, "update"):
        return None
    names = [n for n, size in zip(mesh.axis_names, mesh.axis_sizes, strict=True) if size > 1]
    if (ndim + 1) ** len(names) > 512:
        return None
    for places in itertools.product(range(ndim + 1), repeat=len(names)):
        for order in itertools.permutations(names):
            dims: list[list[str]] = [[] for _ in range(ndim)]
            for name in order:
                place = places[names.index(name)]
                if place < ndim:
                    dims[place].append(name)
            entries = [None if not d else d[0] if len(d) == 1 else tuple(d) for d in dims]
            while entries and entries[-1] is None:
                entries.pop()
            candidate = sharding.update(spec=type(spec)(*entries))
            if _hlo_or_none(candidate, ndim) == hlo:
                return candidate
    return None


def _hlo_or_none(sharding, ndim: int):
    """``sharding``'s ``HloSharding`` for ``ndim`` dimensions, or None where it has none
    (a spec naming more dimensions)."""
    try:
        return sharding._to_xla_hlo_sharding(ndim)
    except ValueError:
        return None


class PartitionedModule:
    """A module compiled for a :class:`Partitioning`; calling it returns committed
    arrays laid out by the output shardings (``self.out_shardings``)."""

    def __init__(self, module: Any, placement: Partitioning, *, name: str, out_avals,
                 host_callbacks=(), ordered_effects=()):  # fmt: skip
        self.name = name
        self.placement = placement
        self.in_shardings = placement.in_shardings
        self.out_avals = list(out_avals)
        self.calls_host = bool(host_callbacks) or bool(ordered_effects)
        # Ordered effects: one token in and out per effect, on every device.
        self.ordered_effects = tuple(ordered_effects)
        self.token_sharding = replicated(placement.devices)
        options = compile_options_for(placement, len(self.out_avals), len(ordered_effects))
        self.executable = backend.compile(
            module, placement.devices, options, name=name, host_callbacks=host_callbacks
        )
        given = placement.out_shardings or (None,) * len(self.out_avals)
        chosen = None
        if any(s is None for s in given):
            chosen = [
                xla_client.HloSharding.from_proto(op)
                for op in self.executable.get_output_shardings()[len(self.ordered_effects) :]
            ]
        self.out_shardings = [
            s if s is not None else _output_sharding(chosen[j], placement, a.ndim)
            for j, (s, a) in enumerate(zip(given, self.out_avals, strict=True))
        ]
        self._handlers = [
            xla_client.array_result_handler(a, s, committed=True, _skip_checks=True)
            for a, s in zip(self.out_avals, self.out_shardings, strict=True)
        ]

    def __call__(self, *args: Any) -> list:
        if no_execution.value:
            raise RuntimeError(
                f"JAX tried to execute function {self.name}, but the no_execution config "
                "option is set"
            )
        args = [self._place(a, s) for a, s in zip(args, self.in_shardings, strict=True)]
        if self.calls_host:  # effects_barrier waits for its callbacks
            tokens = [runtime_tokens.token_input(e, self.token_sharding)
                      for e in self.ordered_effects]  # fmt: skip
            results = self.executable.execute_sharded([*tokens, *args], with_tokens=True)
            if tokens:
                outs = results.consume_with_handlers(
                    [self._token_handler] * len(tokens), strict=False
                )
                for effect, token in zip(self.ordered_effects, outs, strict=True):
                    runtime_tokens.set_token_result(effect, token)
            runtime_tokens.set_output_token(self.placement.devices[0], results.consume_token())
            return results.consume_with_handlers(self._handlers)
        results = self.executable.execute_sharded(args)
        return results.consume_with_handlers(self._handlers)

    def _token_handler(self, pieces):
        aval = ShapedArray((0,), np.dtype(np.bool_))
        return ArrayImpl(aval, self.token_sharding, list(pieces), committed=True)

    @staticmethod
    def _place(x, sharding):
        if type(x) is ArrayImpl:
            return place(x, sharding, committed=x._committed)
        return place(x, sharding)
