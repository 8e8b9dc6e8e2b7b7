"""Lowering: a ClosedJaxpr becomes a StableHLO module, built with jaxlib's MLIR bindings.

The module has the shape JAX 0.10.2 gives a jitted function on one device::

    module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
      func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result"})
      func.func private @inner(...)      # one per distinct nested jit that is not inlined
    }

Each equation is lowered by its primitive's rule from ``lamina.ir.lowering_rules``
(the rule for the target platform first, then the rule for any platform; ``gpu`` stands
for both ``cuda`` and ``rocm``):
``rule(ctx, *operands, **params) -> list of ir.Value``, where ``ctx`` is a
``LoweringRuleContext``. Constvars become ``stablehlo.constant`` s at the top of their
function; a Literal operand becomes a scalar ``stablehlo.constant`` emitted just before
the equation that uses it, and rules broadcast it as they need (``ctx.broadcast_to``).

As JAX does, ``main`` first drops equations whose results nothing needs (unless they
have effects), and with ``keep_unused=False`` (JAX's default for ``jit``) also the
inputs nothing uses; ``LoweredModule.kept_var_idx`` says which inputs remain.
Nested functions are lowered as they are.

Ordered effects (``lamina.ir.ordered_effects``) are sequenced with tokens: ``main``
takes one ``!stablehlo.token`` per ordered effect of the Jaxpr (first, marked
``jax.token = true``) and returns the last token of each (first); inside, a rule reads
and replaces the current token of its effect (``ctx.get_token`` / ``ctx.set_token``),
and control-flow rules carry the tokens through their regions (``ctx.ordered_effects``).
A nested Jaxpr with ordered effects is inlined.

A module may be lowered for several platforms at once (``platforms=("cpu", "cuda")``),
as JAX does: every function then takes first a ``tensor<i32>`` platform index (marked
``jax.global_constant = "_platform_index"``; 0 for the first platform) and a primitive
whose rules differ between those platforms becomes a ``stablehlo.case`` on it, one branch
per rule (``lower_per_platform``). Python callbacks that the program
calls on the host (``host_callbacks.emit_python_callback``) are collected in the
module context and handed to the compiler with the module.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lamina.interpreters.core.config import config
from lamina.interpreters.core.gc_pause import gc_paused
from lamina.interpreters.core.mlir_bindings import func, hlo, ir
from lamina.interpreters.jaxprs import dim_values
from lamina.interpreters.jaxprs import mlir_builders as mb
from lamina.interpreters.jaxprs.dce import dce_jaxpr_consts
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.ir import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    MissingRuleError,
    Primitive,
    ShapedArray,
    Var,
    abstract_token,
    is_extended_aval,
    is_symbolic_dim,
    lowering_rules,
    ordered_effects,
    physical_aval,
    solve_dim_vars,
)

__all__ = [
    "LoweredModule",
    "LoweringRuleContext",
    "ModuleContext",
    "call_lowering",
    "get_lowering_rule",
    "lower_jaxpr",
    "lower_per_platform",
    "ordered_effects_of",
    "platform_rules",
]

# Platforms that may also use rules registered under a family name.
_PLATFORM_FAMILY = {"cuda": "gpu", "rocm": "gpu"}


def get_lowering_rule(primitive: Primitive, platform: str) -> Callable:
    """The rule for ``platform`` (or its family, ``gpu`` for ``cuda``), else the rule
    for any platform; ``MissingRuleError`` naming the primitive otherwise."""
    by_platform = lowering_rules[primitive]  # raises MissingRuleError when none at all
    for key in (platform, _PLATFORM_FAMILY.get(platform), None):
        if key in by_platform:
            return by_platform[key]
    raise MissingRuleError(
        f"Lowering rule for primitive '{primitive.name}' not implemented for platform '{platform}'"
    )


def platform_rules(primitive: Primitive, platforms: Sequence[str]) -> tuple[dict, Any]:
    """The rules of ``primitive`` registered for each of ``platforms`` (under its own name
    or its family's), in that order, and its rule for any platform (or None)."""
    by_platform = lowering_rules[primitive]  # raises MissingRuleError when none at all
    specific = {}
    for p in platforms:
        for key in (p, _PLATFORM_FAMILY.get(p)):
            if key is not None and key in by_platform:
                specific[p] = by_platform[key]
                break
    return specific, by_platform.get(None)


def lower_per_platform(
    ctx: LoweringRuleContext,
    description: str,
    rules: dict[str, Callable],
    default_rule: Callable | None,
    *args: Any,
    **params: Any,
) -> list[ir.Value]:
    """Apply the rule of each platform ``ctx`` lowers for (from ``rules``, else
    ``default_rule``). With one distinct rule it is applied in place; with several, a
    ``stablehlo.case`` on the platform index picks the rule's number, and a second
    ``case`` holds one branch per rule."""
    platforms = ctx.platforms
    if len(platforms) == 1:
        rule = rules.get(platforms[0], default_rule)
        if rule is None:
            raise MissingRuleError(
                f"Lowering rule for primitive '{description}' not implemented for platform "
                f"'{platforms[0]}'"
            )
        return _flat(rule(ctx, *args, **params))
    kept: list[Callable] = []
    rule_of: dict[str, int] = {}
    for p, rule in rules.items():
        if p in platforms:
            rule_of[p] = len(kept)
            kept.append(rule)
    rest = [p for p in platforms if p not in rule_of]
    if rest:
        if default_rule is None:
            raise MissingRuleError(
                f"Lowering rule for primitive '{description}' not implemented for platforms {rest}"
            )
        rule_of.update((p, len(kept)) for p in rest)
        kept.append(default_rule)
    if len(kept) == 1:
        return _flat(kept[0](ctx, *args, **params))
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    which = hlo.CaseOp([i32], ctx.module_context.platform_index, len(platforms))
    for region, p in zip(which.regions, platforms, strict=True):
        with ir.InsertionPoint(region.blocks.append()):
            hlo.return_([mb.constant(np.int32(rule_of[p]), ShapedArray((), np.dtype(np.int32)))])
    effects = ordered_effects_of(ctx.eqn.effects) if ctx.eqn is not None else []
    tokens_in = ctx.tokens(effects)
    n_out = len(ctx.avals_out)
    case = hlo.CaseOp(
        mb.ir_types(ctx.avals_out) + [hlo.TokenType.get()] * len(effects),
        which.result,
        len(kept),
    )
    for i, (region, rule) in enumerate(zip(case.regions, kept, strict=True)):
        inner = ctx.replace(platforms=tuple(p for p in platforms if rule_of[p] == i))
        with ir.InsertionPoint(region.blocks.append()):
            ctx.set_tokens(effects, tokens_in)
            outs = _flat(rule(inner, *args, **params))
            hlo.return_([*outs, *ctx.tokens(effects)])
    results = list(case.results)
    ctx.set_tokens(effects, results[n_out:])
    return results[:n_out]


def _flat(outs) -> list[ir.Value]:
    """A rule's results as a list of values (it may return one value or an op)."""
    if isinstance(outs, ir.Value):
        return [outs]
    if isinstance(outs, ir.OpView | ir.Operation):
        return list(outs.results)
    return list(outs)


def ordered_effects_of(effects) -> list:
    """The ordered effects among ``effects``, in a fixed order (by name)."""
    return sorted(ordered_effects.filter_in(effects), key=lambda e: (str(e), repr(e)))


@dataclass
class LoweredModule:
    """The result of ``lower_jaxpr``: the module and what a caller needs to run it."""

    module: ir.Module
    context: ir.Context
    name: str
    kept_var_idx: tuple[int, ...]
    in_avals: list  # of the kept inputs, in order
    out_avals: list
    input_output_aliases: dict[int, int] = field(default_factory=dict)  # kept arg -> result
    platform: str = "cpu"  # the first of ``platforms``
    host_callbacks: list = field(default_factory=list)  # Python functions the program calls
    ordered_effects: tuple = ()  # one token input and result each, before the others
    platforms: tuple = ("cpu",)  # several: ``main`` takes the platform index first

    def as_text(self, debug_info: bool = False) -> str:
        with self.context:
            return self.module.operation.get_asm(enable_debug_info=debug_info)

    def as_bytecode(self) -> bytes:
        with self.context:
            buf = io.BytesIO()
            self.module.operation.write_bytecode(buf)
            return buf.getvalue()

    def __str__(self):
        return self.as_text()


class ModuleContext:
    """State shared while building one module: the MLIR context and module, the symbol
    table, the private functions already emitted for nested Jaxprs, the host callbacks
    of the program and the current token of each ordered effect."""

    def __init__(self, context: ir.Context, module: ir.Module, platform: str | Sequence[str]):
        self.context = context
        self.module = module
        self.platforms = (platform,) if isinstance(platform, str) else tuple(platform)
        self.platform = self.platforms[0]
        # With several platforms: the platform index of the function being emitted.
        self.platform_index: ir.Value | None = None
        self.symbol_table = ir.SymbolTable(module.operation)
        self._functions: dict[Any, func.FuncOp] = {}
        self.host_callbacks: list[Callable] = []
        self.tokens: dict[Any, ir.Value] = {}
        # The scope of the equations being lowered (``jit(f)/outer``): the front of
        # their location names, which XLA keeps as its ops' ``op_name``.
        self.name_stack = ""
        self.locations: dict[tuple, ir.Location] = {}  # see _location
        # The dimension variables of a shape-polymorphic module: every function after
        # ``main`` takes their values first (see ``jaxprs/dim_values.py``).
        self.dim_vars: tuple[str, ...] = ()
        # In a partially manual region of an SPMD program (``shard_map`` with
        # ``axis_names``): the sharding each value gets there (rank -> HloSharding text).
        self.value_sharding: Callable[[int], str] | None = None
        # In a program over several partitions: the sharding of a host callback's
        # results (rank -> HloSharding text), where its call runs.
        self.callback_sharding: Callable[[int], str] | None = None

    @property
    def multi_platform(self) -> bool:
        return len(self.platforms) > 1

    def _index_types(self) -> list[ir.Type]:
        """The leading platform-index parameter of every function, when multi-platform."""
        if not self.multi_platform:
            return []
        return [ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))]

    def _index_attrs(self) -> list[ir.DictAttr]:
        if not self.multi_platform:
            return []
        return [ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get("_platform_index")})]

    def _leading_args(self, ftype: ir.FunctionType) -> ir.FunctionType:
        """``ftype`` with the module's leading parameters: the platform index (when
        multi-platform), then the dimension variables' values (when polymorphic)."""
        scalars = [dim_values.dim_type()] * len(self.dim_vars)
        inputs = [*self._index_types(), *scalars, *ftype.inputs]
        return ir.FunctionType.get(inputs, list(ftype.results))

    def _mark_leading_args(self, op, n_other: int) -> None:
        dims = [
            ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get(v)}) for v in self.dim_vars
        ]
        op.arg_attrs = ir.ArrayAttr.get(
            self._index_attrs() + dims + [ir.DictAttr.get({})] * n_other
        )

    def call_args(self, args: Sequence[ir.Value]) -> list[ir.Value]:
        """``args`` of a call to a function of this module, after the leading ones: the
        platform index and the dimension variables' current values."""
        index = [self.platform_index] if self.multi_platform else []
        dims = []
        if self.dim_vars:
            env = dim_values.current_env()
            dims = [env[v] for v in self.dim_vars]
        return [*index, *dims, *args]

    def add_host_callback(self, callback: Callable) -> int:
        """Register a Python function the program calls; returns its index."""
        self.host_callbacks.append(callback)
        return len(self.host_callbacks) - 1

    def lower_function(
        self,
        closed_jaxpr: ClosedJaxpr,
        name: str,
        *,
        effects: Sequence[Any] = (),
        public: bool = False,
        arg_names: Sequence[str | None] | None = None,
        result_names: Sequence[str] | None = None,
    ) -> func.FuncOp:
        """A new ``func.func`` computing ``closed_jaxpr``, added to the module (its name
        made unique by the symbol table; ``main`` and public with ``public``). It takes
        and returns first one token per effect of ``effects``, the ordered effects its
        body threads; ``arg_names`` become the inputs' locations and ``result_names``
        the results' ``jax.result_info``."""
        jaxpr = closed_jaxpr.jaxpr
        tokens = [abstract_token] * len(effects)
        ftype = mb.func_type([*tokens, *jaxpr.in_avals], [*tokens, *jaxpr.out_avals])
        n_idx = len(self._index_types())
        n_dims = len(self.dim_vars)
        ftype = self._leading_args(ftype)
        with ir.InsertionPoint(self.module.body):
            op = func.FuncOp("main" if public else name or "fn", ftype)
        op.attributes["sym_visibility"] = ir.StringAttr.get("public" if public else "private")
        self.symbol_table.insert(op)
        if n_idx or n_dims:
            self._mark_leading_args(op, len(ftype.inputs) - n_idx - n_dims)
        if result_names is not None:
            token_attrs = [ir.DictAttr.get({}) for _ in effects]
            op.result_attrs = ir.ArrayAttr.get(
                token_attrs
                + [ir.DictAttr.get({"jax.result_info": ir.StringAttr.get(n)}) for n in result_names]
            )
        locs = None
        if arg_names is not None:
            unknown = ir.Location.unknown()
            locs = [unknown] * (n_idx + n_dims + len(effects)) + [
                ir.Location.name(n) if n else unknown for n in arg_names
            ]
        block = op.add_entry_block(arg_locs=locs)
        outer_tokens, outer_index = self.tokens, self.platform_index
        try:
            with ir.InsertionPoint(block):
                args = list(block.arguments)
                if n_idx:
                    self.platform_index, args = args[0], args[1:]
                dims, args = args[:n_dims], args[n_dims:]
            with ir.InsertionPoint(block), self._dims_from(dims):
                self.tokens = dict(zip(effects, args[: len(effects)], strict=True))
                outs = lower_jaxpr_body(self, jaxpr, closed_jaxpr.consts, args[len(effects) :])
                mb.return_op([*(self.tokens[e] for e in effects), *outs])
        finally:
            self.tokens, self.platform_index = outer_tokens, outer_index
        return op

    def lower_private_function(self, closed_jaxpr: ClosedJaxpr, name: str) -> func.FuncOp:
        """``func.func private @name`` computing ``closed_jaxpr``; emitted once per
        distinct (name, Jaxpr) and reused after."""
        key = (name, closed_jaxpr, self.value_sharding, self.callback_sharding)
        try:
            return self._functions[key]
        except (KeyError, TypeError):
            pass
        jaxpr = closed_jaxpr.jaxpr
        ftype = self._leading_args(mb.func_type(jaxpr.in_avals, jaxpr.out_avals))
        n_dims = len(self.dim_vars)
        with ir.InsertionPoint(self.module.body):
            op = func.FuncOp(name or "fn", ftype)
        op.attributes["sym_visibility"] = ir.StringAttr.get("private")
        self.symbol_table.insert(op)  # renames it (inner_0, ...) if the name is taken
        if self.multi_platform or n_dims:
            self._mark_leading_args(op, len(jaxpr.invars))
        block = op.add_entry_block()
        outer_stack, self.name_stack = self.name_stack, ""  # the call op carries the scope
        outer_index = self.platform_index
        try:
            with ir.InsertionPoint(block):
                args = list(block.arguments)
                if self.multi_platform:
                    self.platform_index, args = args[0], args[1:]
                dims, args = args[:n_dims], args[n_dims:]
            with ir.InsertionPoint(block), self._dims_from(dims):
                outs = lower_jaxpr_body(self, jaxpr, closed_jaxpr.consts, args)
                mb.return_op(outs)
        finally:
            self.name_stack, self.platform_index = outer_stack, outer_index
        with contextlib.suppress(TypeError):  # unhashable params somewhere: no caching
            self._functions[key] = op
        return op

    def _dims_from(self, values):
        """The dimension environment of a function given its dimension variables'
        values (nothing for a module without them)."""
        if not self.dim_vars:
            return contextlib.nullcontext()
        return dim_values.dim_env(dict(zip(self.dim_vars, values, strict=True)))


class LoweringRuleContext:
    """What a lowering rule sees besides its operands and params."""

    def __init__(
        self, module_context: ModuleContext, avals_in, avals_out, eqn=None, platforms=None
    ):
        self.module_context = module_context
        self.avals_in = list(avals_in)
        self.avals_out = list(avals_out)
        self.eqn = eqn
        # The platforms this rule lowers for: the module's, or fewer inside one branch
        # of a multi-platform ``case``.
        self.platforms = module_context.platforms if platforms is None else tuple(platforms)

    platform = property(lambda self: self.platforms[0])

    @property
    def dim_var_values(self) -> list[ir.Value]:
        """As JAX's: the platform index first when lowering for several platforms."""
        index = self.module_context.platform_index
        return [] if index is None else [index]

    @classmethod
    def for_equation(cls, module_context: ModuleContext, eqn: JaxprEqn) -> LoweringRuleContext:
        """The context of ``eqn``'s rule, for the module's platforms."""
        ctx = cls.__new__(cls)
        ctx.module_context = module_context
        ctx.avals_in = [a.aval for a in eqn.invars]
        ctx.avals_out = [v.aval for v in eqn.outvars]
        ctx.eqn = eqn
        ctx.platforms = module_context.platforms
        return ctx

    def replace(self, **changes) -> LoweringRuleContext:
        fields = {
            "avals_in": self.avals_in,
            "avals_out": self.avals_out,
            "eqn": self.eqn,
            "platforms": self.platforms,
        }
        fields.update(changes)
        return LoweringRuleContext(self.module_context, **fields)

    # Shared builders, also available as functions in mlir_builders.
    ir_type = staticmethod(mb.ir_type)
    ir_types = staticmethod(mb.ir_types)
    dtype_to_ir_type = staticmethod(mb.dtype_to_ir_type)
    constant = staticmethod(mb.constant)
    broadcast_in_dim = staticmethod(mb.broadcast_in_dim)
    reshape = staticmethod(mb.reshape)
    iota = staticmethod(mb.iota)
    convert = staticmethod(mb.convert)

    def broadcast_to(self, values: Sequence[ir.Value], shape=None) -> list[ir.Value]:
        """Broadcast each operand (scalar literals, typically) to ``shape``, by default
        the shape of the first result; operands already of that shape pass through."""
        if shape is None:
            shape = self.avals_out[0].shape
        return [
            v if a.shape == shape else mb.broadcast_to(v, a, shape)
            for v, a in zip(values, self.avals_in, strict=True)
        ]

    def get_token(self, effect) -> ir.Value:
        """The current token of the ordered ``effect``."""
        return self.module_context.tokens[effect]

    def set_token(self, effect, token: ir.Value) -> None:
        """Make ``token`` the current token of the ordered ``effect``."""
        self.module_context.tokens[effect] = token

    def tokens(self, effects) -> list[ir.Value]:
        """The current tokens of ``effects``."""
        return [self.module_context.tokens[e] for e in effects]

    def set_tokens(self, effects, tokens) -> None:
        """Make ``tokens`` the current tokens of ``effects``."""
        self.module_context.tokens.update(zip(effects, tokens, strict=True))

    def ordered_effects(self, *jaxprs) -> list:
        """The ordered effects of ``jaxprs`` (Jaxprs or ClosedJaxprs), which a rule
        emitting them in regions carries through as tokens."""
        return ordered_effects_of(set().union(*(j.effects for j in jaxprs)))

    def lower_function(self, closed_jaxpr: ClosedJaxpr, name: str) -> func.FuncOp:
        """The private ``func.func`` computing ``closed_jaxpr`` (emitted once)."""
        return self.module_context.lower_private_function(closed_jaxpr, name)

    def call(
        self,
        closed_jaxpr: ClosedJaxpr,
        args: Sequence[ir.Value],
        *,
        name: str = "",
        inline: bool = False,
    ) -> list[ir.Value]:
        """Compute ``closed_jaxpr`` on ``args``: inlined here, or as a ``func.call`` to a
        private function emitted once per distinct Jaxpr (inlined when it has ordered
        effects, so that their tokens flow through it)."""
        if inline or ordered_effects_of(closed_jaxpr.effects):
            return lower_jaxpr_body(
                self.module_context, closed_jaxpr.jaxpr, closed_jaxpr.consts, list(args)
            )
        mctx = self.module_context
        callee = mctx.lower_private_function(closed_jaxpr, name)
        call = func.CallOp(callee, mctx.call_args(args))
        return list(call.results)


def call_lowering(ctx, *args, jaxpr, name="", inline=False, in_shardings=(),
                  out_shardings=(), **_params):  # fmt: skip
    """The lowering rule of jit-like call primitives (params ``jaxpr``, ``name``,
    ``inline``): a ``func.call @name`` or, with ``inline=True``, the body in place.
    Shardings over several devices (``in_shardings``/``out_shardings``) constrain the
    layouts of the operands and results."""
    if isinstance(jaxpr, Jaxpr):
        jaxpr = ClosedJaxpr(jaxpr, [])
    args = _constrained(args, ctx.avals_in, in_shardings)
    outs = ctx.call(jaxpr, args, name=name, inline=inline)
    return _constrained(outs, ctx.avals_out, out_shardings)


def _constrained(values, avals, shardings) -> list:
    """``values`` with a layout constraint where ``shardings`` has one over several
    devices (a ``Sharding``; anything else leaves the value as it is)."""
    if not shardings:
        return list(values)
    return [
        mb.sharding_op(v, a, s._to_xla_hlo_sharding(a.ndim))
        if getattr(s, "num_devices", 1) > 1 and hasattr(s, "_to_xla_hlo_sharding")
        else v
        for v, a, s in zip(values, avals, shardings, strict=True)
    ]


def lower_fun(fun: Callable, multiple_results: bool = False) -> Callable:
    """A lowering rule emitting ``fun(*operands, **params)`` (written with primitives and
    traced on the operands' types) in place: for primitives defined by others."""

    def rule(ctx, *args, **params):
        def flat(*xs):
            out = fun(*xs, **params)
            return list(out) if multiple_results else [out]

        closed, _ = trace_to_jaxpr(flat, ctx.avals_in, "lower_fun")
        return ctx.call(closed, args, inline=True)

    return rule


def _check_results(eqn: JaxprEqn, outs: list[ir.Value]) -> None:
    outvars = eqn.outvars
    if len(outs) != len(outvars):
        name = eqn.primitive.name
        raise ValueError(
            f"lowering rule for primitive '{name}' returned {len(outs)} values, "
            f"expected {len(outvars)}"
        )
    ir_type = mb.ir_type
    for value, var in zip(outs, outvars, strict=True):
        expected = ir_type(var.aval)
        if value.type != expected:
            name = eqn.primitive.name
            raise TypeError(
                f"lowering rule for primitive '{name}' produced {value.type}, "
                f"expected {expected} (for {var.aval.str_short()})"
            )


def lower_jaxpr_body(
    mctx: ModuleContext, jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[ir.Value]
) -> list[ir.Value]:
    """Emit ``jaxpr`` at the current insertion point with its invars bound to ``args``;
    returns the values of its outvars."""
    env: dict[Var, ir.Value] = {}
    for var, value in zip(jaxpr.constvars, consts, strict=True):
        if is_extended_aval(var.aval):  # a key array: its physical data
            env[var] = mb.constant(np.asarray(value._base_array), physical_aval(var.aval))
        else:
            env[var] = mb.constant(np.asarray(value), var.aval)
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    outer_stack = mctx.name_stack
    scope_names: dict[int, tuple[Any, str]] = {}  # id of a name stack -> (it, its text)
    # Per primitive: its one rule when lowering for one platform, else its rules.
    rules_of: dict[Primitive, Any] = {}
    one_platform = len(mctx.platforms) == 1
    checks = config.jax_enable_checks
    constant, ir_type, rule_context = mb.constant, mb.ir_type, LoweringRuleContext.for_equation
    try:
        for eqn in jaxpr.eqns:
            operands = [
                constant(a.val, a.aval) if type(a) is Literal else env[a] for a in eqn.invars
            ]
            prim = eqn.primitive
            found = rules_of.get(prim)
            if found is None:
                found = rules_of[prim] = _rules_for(prim, mctx.platforms, one_platform, checks)
            rule, by_platform, check = found
            ctx = rule_context(mctx, eqn)
            scopes = getattr(eqn.source_info, "name_stack", None)
            known = scope_names.get(id(scopes))
            if known is None or known[0] is not scopes:
                known = (scopes, _scope(outer_stack, str(scopes) if scopes else ""))
                scope_names[id(scopes)] = known
            mctx.name_stack = known[1]
            with _location(mctx, known[1], eqn):
                if rule is None:
                    outs = lower_per_platform(ctx, prim.name, *by_platform, *operands, **eqn.params)
                else:
                    outs = rule(ctx, *operands, **eqn.params)
                    if type(outs) is not list:
                        outs = _flat(outs)
            mctx.name_stack = outer_stack
            outvars = eqn.outvars
            if len(outs) != len(outvars):
                _check_results(eqn, outs)  # raises
            if check:
                for value, var in zip(outs, outvars, strict=True):
                    if value.type != ir_type(var.aval):
                        _check_results(eqn, outs)  # raises
            if mctx.value_sharding is not None:
                outs = [_annotate_sharding(mctx, v) for v in outs]
            for var, value in zip(outvars, outs, strict=True):
                if type(var) is not DropVar:
                    env[var] = value
    finally:
        mctx.name_stack = outer_stack
    return [constant(a.val, a.aval) if type(a) is Literal else env[a] for a in jaxpr.outvars]


def _rules_for(primitive: Primitive, platforms: tuple, one_platform: bool, checks: bool):
    """What ``lower_jaxpr_body`` applies to ``primitive``: (its rule, None) with one
    platform (when it has a rule), else (None, the arguments of ``lower_per_platform``
    after the name); then whether to check the types of the rule's results: always for
    rules from outside lamina (``register_lowering``), and for lamina's own (which its
    tests check) with ``jax_enable_checks``."""
    rules, default_rule = platform_rules(primitive, platforms)
    check = checks or not all(
        (getattr(r, "__module__", None) or "").startswith("lamina.")
        for r in (*rules.values(), default_rule)
        if r is not None
    )
    if one_platform:
        rule = rules.get(platforms[0], default_rule)
        if rule is not None:
            return rule, None, check
    return None, (rules, default_rule), check


def _annotate_sharding(mctx: ModuleContext, value: ir.Value) -> ir.Value:
    """``value`` marked with the sharding of values in the current partially manual
    region (``@Sharding``, its dimensions left to XLA); tokens as they are."""
    if not isinstance(value.type, ir.RankedTensorType):  # a token
        return value
    rank = value.type.rank
    dims = ",".join(str(d) for d in range(rank))
    op = hlo.CustomCallOp.build_generic(
        results=[value.type],
        operands=[value],
        attributes={
            "call_target_name": ir.StringAttr.get("Sharding"),
            "backend_config": ir.StringAttr.get(f"unspecified_dims=[{dims}]" if dims else ""),
            "mhlo.sharding": ir.StringAttr.get(mctx.value_sharding(rank)),
        },
    )
    return op.result


def _scope(outer: str, inner: str) -> str:
    return f"{outer}/{inner}" if outer and inner else outer or inner


def _location(mctx: ModuleContext, scope: str, eqn: JaxprEqn) -> ir.Location:
    """``scope/op`` (``op`` the primitive's name, ``jit(g)`` for a call of ``g``) at the
    user's line that staged ``eqn``, as JAX names its ops' locations (made once per
    module for each name and line)."""
    op = eqn.primitive.name
    if op == "jit":
        op = f"jit({eqn.params.get('name', '')})"
    frames = getattr(eqn.source_info, "traceback", None)
    frame = frames[0] if frames else None
    if frame is None:
        key = (scope, op)
    else:  # lamina's frames name their code object, which stands for file and function
        code = getattr(frame, "code", None)  # alive while the module is built: its id holds
        where = (frame.file_name, frame.function_name) if code is None else id(code)
        key = (scope, op, where, frame.start_line)
    loc = mctx.locations.get(key)
    if loc is None:
        if frame is None:
            loc = ir.Location.name(_scope(scope, op))
        else:
            where = ir.Location.file(frame.file_name, frame.start_line, frame.start_column)
            where = ir.Location.name(frame.function_name, childLoc=where)
            loc = ir.Location.name(_scope(scope, op), childLoc=where)
        mctx.locations[key] = loc
    return loc


def _dce(jaxpr: Jaxpr, keep_unused: bool) -> tuple[Jaxpr, tuple[int, ...]]:
    """Drop equations nothing needs (keeping effectful ones, pruning inside those with a
    DCE rule) and, unless ``keep_unused``, the invars nothing uses. Returns the new Jaxpr
    and the kept invar indices."""
    new, _, used = dce_jaxpr_consts(jaxpr, [True] * len(jaxpr.outvars), keep_unused)
    kept = tuple(i for i, u in enumerate(used) if u)
    return new.replace(constvars=jaxpr.constvars), kept


def _aliases(in_avals, donated: Sequence[bool], out_avals) -> tuple[dict[int, int], list]:
    """Pair donated inputs with results of the same type: each result, in order, takes
    the first donated input of its shape and dtype not yet taken."""
    waiting: dict[Any, list[int]] = {}
    for i, (aval, d) in enumerate(zip(in_avals, donated, strict=True)):
        if d and isinstance(aval, ShapedArray):
            waiting.setdefault((aval.shape, aval.dtype), []).append(i)
    aliases = {}
    for j, aval in enumerate(out_avals):
        if isinstance(aval, ShapedArray):
            queue = waiting.get((aval.shape, aval.dtype))
            if queue:
                aliases[queue.pop(0)] = j
    unused = [in_avals[i] for q in waiting.values() for i in q]
    return aliases, unused


def _add_sharding(attrs: dict, hlo) -> None:
    """Add ``mhlo.sharding`` (the GSPMD text of ``hlo``) to an argument's or result's
    attributes."""
    if hlo is not None:
        attrs["mhlo.sharding"] = ir.StringAttr.get(str(hlo))


def _default_result_names(n: int) -> list[str]:
    return ["result"] if n == 1 else [f"result[{i}]" for i in range(n)]


def _solve_dim_vars(in_avals, args) -> dict:
    """The dimension variables' values, computed from the sizes of ``main``'s
    arguments, with the ``shape_assertion`` checks of the shapes and constraints."""
    scalar = dim_values.dim_type()
    sizes: dict = {}
    with dim_values.named_ops():
        # As JAX: the sizes of every symbolic dimension first, then the checks.
        for i, a in enumerate(in_avals):
            for j, d in enumerate(a.shape):
                if is_symbolic_dim(d):
                    with dim_values.op_location("dimension_size"):
                        v = hlo.get_dimension_size(args[i], j)
                        v = v if v.type == scalar else hlo.convert(scalar, v)
                    sizes[i, j] = dim_values.HloOps.wrap(v)
        env = solve_dim_vars(in_avals, lambda i, j: sizes[i, j], dim_values.HloOps)
    return {v: dim_values.HloOps.value_of(x) for v, x in env.items()}


def _call_wrapped_main(mctx, main, closed, ordered, args, arg_names, result_names) -> list:
    """As JAX's exported modules: a polymorphic ``main`` computes the dimension
    variables (with their checks) and calls ``_wrapped_jax_export_main``, which takes
    their values first (global constants) and computes the function; returns the
    call's results (tokens first)."""
    inner = mctx.lower_function(
        closed,
        "_wrapped_jax_export_main",
        effects=ordered,
        arg_names=arg_names,
        result_names=result_names,
    )
    leading = list(ir.ArrayAttr(inner.arg_attrs))[: len(inner.type.inputs) - len(args)]
    n_idx = len(mctx._index_types())
    if "arg_attrs" in main.attributes:  # token, donation and sharding attributes stay
        inner.arg_attrs = ir.ArrayAttr.get(leading + list(ir.ArrayAttr(main.arg_attrs))[n_idx:])
    inner.result_attrs = main.result_attrs
    name = ir.FlatSymbolRefAttr.get(ir.StringAttr(inner.attributes["sym_name"]).value)
    call = func.CallOp(list(inner.type.results), name, mctx.call_args(args))
    return list(call.results)


def _on_first_device(rank: int) -> str:
    return "{maximal device=0}"


def lower_jaxpr(
    closed_jaxpr: ClosedJaxpr,
    *,
    module_name: str = "jit_f",
    platform: str = "cpu",
    platforms: Sequence[str] | None = None,
    num_replicas: int = 1,
    num_partitions: int = 1,
    arg_names: Sequence[str] | None = None,
    result_names: Sequence[str] | None = None,
    donated_args: Sequence[bool] | None = None,
    keep_unused: bool = False,
    name_stack: str = "",
    arg_shardings: Sequence[Any] | None = None,
    result_shardings: Sequence[Any] | None = None,
) -> LoweredModule:
    """Lower ``closed_jaxpr`` to a StableHLO module whose ``@main`` computes it.

    ``arg_names`` label the inputs (as locations, seen with ``as_text(debug_info=True)``);
    ``result_names`` become the ``jax.result_info`` of the results (default
    ``result`` / ``result[i]``); ``donated_args`` (one bool per invar) alias donated
    inputs to results of the same type (``tf.aliasing_output``), warning about donated
    buffers that no result can use. Each operation's location is named
    ``name_stack/<scopes>/<primitive>`` (``jit(f)/layer1/sin``), which XLA keeps as
    its ``op_name``. ``arg_shardings`` / ``result_shardings`` (one ``HloSharding`` or
    None per invar / outvar) become the ``mhlo.sharding`` attributes that XLA's SPMD
    partitioner reads; a None leaves that layout to XLA. ``platforms`` (several) lowers
    for each of them at once, ``main`` taking the platform index first; by default the
    module is for ``platform`` alone.
    """
    jaxpr = closed_jaxpr.jaxpr
    n_in = len(jaxpr.invars)
    for what, seq in (("arg_names", arg_names), ("donated_args", donated_args)):
        if seq is not None and len(seq) != n_in:
            raise ValueError(f"{what} has {len(seq)} entries for {n_in} inputs")
    if result_names is not None and len(result_names) != len(jaxpr.outvars):
        raise ValueError(
            f"result_names has {len(result_names)} entries for {len(jaxpr.outvars)} results"
        )
    # A polymorphic program reads its dimension variables from every argument's shape.
    keep_unused = keep_unused or bool(dim_values.dim_vars_of(jaxpr.in_avals))
    jaxpr, kept = _dce(jaxpr, keep_unused)
    in_avals = jaxpr.in_avals
    out_avals = [a.aval for a in jaxpr.outvars]
    donated = [bool(donated_args[i]) for i in kept] if donated_args else [False] * len(kept)
    aliases, unusable = _aliases(in_avals, donated, out_avals)
    if unusable:
        shown = ", ".join(a.str_short() for a in unusable)
        warnings.warn(
            f"Some donated buffers were not usable: {shown}.\n"
            "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
            stacklevel=2,
        )
    names = list(result_names) if result_names is not None else None
    names = names or _default_result_names(len(out_avals))
    ordered = ordered_effects_of(jaxpr.effects)
    n_tok = len(ordered)

    context = mb.lowering_context()
    with gc_paused(), context, ir.Location.unknown():
        module = ir.Module.create()
        attrs = module.operation.attributes
        attrs["sym_name"] = ir.StringAttr.get(module_name)
        i32 = ir.IntegerType.get_signless(32)
        attrs["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, num_partitions)
        attrs["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, num_replicas)
        platforms = tuple(platforms) if platforms else (platform,)
        mctx = ModuleContext(context, module, platforms)
        mctx.name_stack = name_stack
        index_types = mctx._index_types()
        n_idx = len(index_types)
        dim_vars = dim_values.dim_vars_of(in_avals)
        if dim_vars:
            attrs["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(True)
        if num_partitions > 1:  # callbacks run once, on the first device
            mctx.callback_sharding = _on_first_device
        with ir.InsertionPoint(module.body):
            tokens = [abstract_token] * n_tok
            ftype = mb.func_type([*tokens, *in_avals], [*tokens, *out_avals])
            ftype = ir.FunctionType.get([*index_types, *ftype.inputs], ftype.results)
            main = func.FuncOp("main", ftype)
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        mctx.symbol_table.insert(main)
        token_attr = {"jax.token": ir.BoolAttr.get(True)}
        arg_attrs = [token_attr] * n_tok + [
            {"tf.aliasing_output": ir.IntegerAttr.get(i32, aliases[i] + n_tok)}
            if i in aliases
            else {}
            for i in range(len(kept))
        ]
        if arg_shardings is not None:
            for j, i in enumerate(kept):
                _add_sharding(arg_attrs[n_tok + j], arg_shardings[i])
        if any(arg_attrs) or n_idx:
            main.arg_attrs = ir.ArrayAttr.get(
                mctx._index_attrs() + [ir.DictAttr.get(d) for d in arg_attrs]
            )
        result_attrs = [{"jax.result_info": ir.StringAttr.get(n)} for n in names]
        if result_shardings is not None:
            for attrs_j, hlo in zip(result_attrs, result_shardings, strict=True):
                _add_sharding(attrs_j, hlo)
        main.result_attrs = ir.ArrayAttr.get(
            [ir.DictAttr.get(token_attr) for _ in range(n_tok)]
            + [ir.DictAttr.get(d) for d in result_attrs]
        )
        locs = None
        if arg_names is not None and not dim_vars:  # else the wrapped main's are named
            unknown = [ir.Location.unknown()] * (n_idx + n_tok)
            locs = unknown + [ir.Location.name(arg_names[i]) for i in kept]
        block = main.add_entry_block(arg_locs=locs)
        with ir.InsertionPoint(block):
            args = list(block.arguments)
            if n_idx:
                mctx.platform_index, args = args[0], args[1:]
            mctx.tokens = dict(zip(ordered, args[:n_tok], strict=True))
            if dim_vars:
                env = _solve_dim_vars(in_avals, args[n_tok:])
                mctx.dim_vars = dim_vars
                with dim_values.dim_env(env):
                    results = _call_wrapped_main(
                        mctx, main, ClosedJaxpr(jaxpr, closed_jaxpr.consts), ordered, args,
                        None if arg_names is None else [arg_names[i] for i in kept], names,
                    )  # fmt: skip
            else:
                outs = lower_jaxpr_body(mctx, jaxpr, closed_jaxpr.consts, args[n_tok:])
                results = [*(mctx.tokens[e] for e in ordered), *outs]
            mb.return_op(results)
    return LoweredModule(
        module=module,
        context=context,
        name=module_name,
        kept_var_idx=kept,
        in_avals=in_avals,
        out_avals=out_avals,
        input_output_aliases=aliases,
        platform=platforms[0],
        host_callbacks=mctx.host_callbacks,
        ordered_effects=tuple(ordered),
        platforms=platforms,
    )
