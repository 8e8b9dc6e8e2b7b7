"""``jax.interpreters.mlir``: lowering to StableHLO, as JAX's API presents it.

``register_lowering(p, rule, platform=None)`` registers ``rule(ctx, *operands,
**params) -> results`` in ``lamina.ir.lowering_rules``; ``ctx`` is lamina's
:class:`LoweringRuleContext` (``ctx.avals_in``, ``ctx.avals_out``,
``ctx.module_context``, ``ctx.platform``). ``lower_fun`` turns a function written with
primitives into such a rule; ``ir_constant``, ``aval_to_ir_type`` and the attribute
builders make the pieces a hand-written rule needs. ``lower_jaxpr_to_module`` lowers a
Jaxpr to a whole module, ``lower_jaxpr_to_fun`` to a function of the module being built
(``ctx.module_context``), and ``merge_mlir_modules`` moves one module's functions into
another.

jaxlib's MLIR bindings (``ir``, ``hlo``, ``func``, ...) load on first attribute access
(``core/mlir_bindings.py``), so lowering code can import them freely. The sharding
contexts are plain records; ``wrap_with_sharding_op`` constrains a value's layout in a
program partitioned by XLA.
Names imported ``as`` themselves are not JAX's: lamina's other layers use them.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
from jaxlib import _jax, xla_client

from lamina.interpreters.core.mlir_bindings import chlo as chlo
from lamina.interpreters.core.mlir_bindings import func as func
from lamina.interpreters.core.mlir_bindings import hlo as hlo
from lamina.interpreters.core.mlir_bindings import ir
from lamina.interpreters.core.mlir_bindings import jax_mlir_ext as jax_mlir_ext
from lamina.interpreters.core.mlir_bindings import lazy_module as lazy_module
from lamina.interpreters.core.mlir_bindings import stablehlo as stablehlo
from lamina.interpreters.jaxprs import dim_values
from lamina.interpreters.jaxprs import mlir_builders as mb
from lamina.interpreters.jaxprs.host_callbacks import emit_python_callback
from lamina.interpreters.jaxprs.lowering import (
    LoweringRuleContext,
    ModuleContext,
    call_lowering,
    lower_jaxpr,
    lower_jaxpr_body,
    ordered_effects_of,
)
from lamina.interpreters.jaxprs.lowering import lower_fun as _lower_fun
from lamina.interpreters.jaxprs.lowering import lower_per_platform as _lower_per_platform
from lamina.interpreters.jaxprs.mlir_builders import cached_attribute as cached_attribute
from lamina.interpreters.jaxprs.mlir_builders import elementwise as elementwise
from lamina.interpreters.jaxprs.mlir_builders import i64_array as i64_array
from lamina.interpreters.jaxprs.mlir_builders import operation as operation
from lamina.interpreters.jaxprs.module_merging import merge_modules
from lamina.ir import (
    AbstractToken,
    ClosedJaxpr,
    Jaxpr,
    Primitive,
    ShapedArray,
    is_symbolic_dim,
    lowerable_effects,
)

__all__ = [
    "DEVICE_TO_DEVICE_TYPE",
    "RECV_FROM_HOST_TYPE",
    "SEND_TO_HOST_TYPE",
    "AxisContext",
    "ConstantHandler",
    "LoweringParameters",
    "LoweringResult",
    "LoweringRule",
    "LoweringRuleContext",
    "MeshAxisName",
    "ModuleContext",
    "SPMDAxisContext",
    "ShapePolyLoweringState",
    "ShardingContext",
    "Token",
    "TokenSet",
    "Value",
    "aval_to_ir_type",
    "aval_to_ir_types",
    "core_call_lowering",
    "dense_int_array",
    "dense_int_elements",
    "dtype_to_ir_type",
    "emit_python_callback",
    "eval_dynamic_shape",
    "eval_dynamic_shape_as_tensor",
    "flatten_ir_types",
    "flatten_ir_values",
    "i32_attr",
    "i64_attr",
    "ir",
    "ir_attribute",
    "ir_constant",
    "ir_constants",
    "ir_tree_registry",
    "ir_type_handlers",
    "jaxpr_subcomp",
    "lower_fun",
    "lower_jaxpr_to_fun",
    "lower_jaxpr_to_module",
    "lower_per_platform",
    "lowerable_effects",
    "make_ir_context",
    "merge_mlir_modules",
    "module_to_bytecode",
    "module_to_string",
    "register_constant_handler",
    "register_lowering",
    "shape_tensor",
    "token_type",
    "unflatten_ir_values_like_types",
    "wrap_with_sharding_op",
]

# Channel kinds of send/recv ops (XLA's ChannelHandle types).
DEVICE_TO_DEVICE_TYPE = 1
SEND_TO_HOST_TYPE = 2
RECV_FROM_HOST_TYPE = 3

Value = Any  # an ir.Value
Token = Any  # the ir.Value of a token
MeshAxisName = Any
LoweringRule = Callable[..., Sequence[Any]]
ConstantHandler = Callable[[Any], Sequence[Any]]


@dataclasses.dataclass(frozen=True)
class ShardingContext:
    """Lowering for ``num_devices`` devices with sharding annotations."""

    num_devices: int
    device_assignment: tuple | None = None
    abstract_mesh: Any = None


@dataclasses.dataclass(frozen=True)
class SPMDAxisContext:
    """Lowering inside a mesh, with ``manual_axes`` of it handled by the program."""

    mesh: Any
    manual_axes: frozenset = frozenset()


AxisContext = ShardingContext | SPMDAxisContext


@dataclasses.dataclass(frozen=True)
class LoweringParameters:
    """Options of one lowering (JAX's fields; lamina reads none of them yet)."""

    override_lowering_rules: tuple | None = None
    global_constant_computation: bool = False
    for_export: bool = False
    export_ignore_forward_compatibility: bool = False
    hoist_constants_as_args: bool = False


class LoweringResult(NamedTuple):
    module: Any
    keepalive: Any
    host_callbacks: list
    shape_poly_state: Any


class ShapePolyLoweringState:
    """The symbolic dimensions of a lowering (none in lamina, no shape polymorphism), led
    by ``_platform_index`` when lowering for several platforms."""

    def __init__(self, dim_vars: Sequence[str] = (), lowering_platforms: tuple = ()):
        self.dim_vars = tuple(dim_vars)
        self.lowering_platforms = lowering_platforms
        self.has_platform_index_argument = len(lowering_platforms or ()) > 1
        if self.has_platform_index_argument:
            self.dim_vars = ("_platform_index", *self.dim_vars)
        self.uses_dim_vars = bool(self.dim_vars)


class TokenSet:
    """The current token of each ordered effect, immutable: ``update`` returns a new set."""

    def __init__(self, *args, **kwargs):
        self._tokens = dict(*args, **kwargs)

    def __len__(self):
        return len(self._tokens)

    def get(self, effect):
        return self._tokens[effect]

    def effects(self):
        return set(self._tokens)

    def items(self):
        return tuple(self._tokens.items())

    def update_tokens(self, tokens: TokenSet) -> TokenSet:
        return TokenSet({**self._tokens, **tokens._tokens})


# ------------------------------------------------------------------- registration


def register_lowering(
    prim: Primitive,
    rule: LoweringRule,
    platform: str | None = None,
    inline: bool = True,
    cacheable: bool = True,
) -> None:
    """Make ``rule`` lower ``prim`` on ``platform`` (None: any platform without a rule
    of its own). ``inline`` and ``cacheable`` are accepted for JAX's signature."""
    del inline, cacheable
    prim.def_lowering(rule, platform)


def lower_fun(fun: Callable, multiple_results: bool = True) -> Callable:
    """A lowering rule emitting ``fun(*operands, **params)``, a function written with
    primitives; it returns a sequence of results unless ``multiple_results=False``."""
    return _lower_fun(fun, multiple_results)


def lower_per_platform(ctx, description, platform_rules, default_rule, effects, *args,
                       **params):  # fmt: skip
    """Emit the rule of each platform being lowered for (``platform_rules`` by platform
    name, else ``default_rule``): in place when one rule serves them all, else as a
    ``stablehlo.case`` on the platform index. ``effects`` is accepted for JAX's
    signature (the equation's own effects are used)."""
    del effects
    return _lower_per_platform(ctx, description, platform_rules, default_rule, *args, **params)


def core_call_lowering(ctx, *args, name, backend=None, call_jaxpr):
    """The lowering of a call of ``call_jaxpr``: a ``func.call`` to a private function."""
    del backend
    return call_lowering(ctx, *args, jaxpr=call_jaxpr, name=name)


def jaxpr_subcomp(
    ctx: ModuleContext,
    jaxpr: Jaxpr,
    name_stack,
    tokens: TokenSet,
    consts_for_constvars,
    *args,
    dim_var_values=(),
    const_lowering=None,
    outer_traceback=None,
):
    """Emit ``jaxpr`` at the current insertion point on ``args``; returns its outputs
    and the tokens (ordered effects thread through ``ctx``'s tokens in lamina)."""
    del name_stack, dim_var_values, const_lowering, outer_traceback
    outs = lower_jaxpr_body(ctx, jaxpr, list(consts_for_constvars), list(args))
    return outs, tokens


# ------------------------------------------------------------------- types and values


def dtype_to_ir_type(dtype) -> ir.Type:
    """The MLIR element type of ``dtype``."""
    return mb.dtype_to_ir_type(np.dtype(dtype))


def _array_ir_types(aval) -> tuple:
    return (mb.ir_type(aval),)


def _token_ir_types(aval) -> tuple:
    return (hlo.TokenType.get(),)


ir_type_handlers: dict[type, Callable[[Any], tuple]] = {
    ShapedArray: _array_ir_types,
    AbstractToken: _token_ir_types,
}


def aval_to_ir_types(ctx, aval) -> tuple:
    """The MLIR types that carry a value of type ``aval``."""
    del ctx
    for cls in type(aval).__mro__:
        if cls in ir_type_handlers:
            return tuple(ir_type_handlers[cls](aval))
    raise TypeError(f"No ir_type_handler for aval type: {type(aval)}")


def aval_to_ir_type(ctx, aval) -> ir.Type:
    """The one MLIR type that carries a value of type ``aval``."""
    (t,) = aval_to_ir_types(ctx, aval)
    return t


def token_type() -> ir.Type:
    return hlo.TokenType.get()


_constant_handlers: dict[type, ConstantHandler] = {}


def register_constant_handler(type_: type, handler_fun: ConstantHandler) -> None:
    """Make ``ir_constant`` turn values of ``type_`` into MLIR with ``handler_fun(x)``
    (which returns a sequence of ``ir.Value``)."""
    _constant_handlers[type_] = handler_fun


def ir_constants(val, *, const_lowering=None, aval=None) -> tuple:
    """``val`` as MLIR constants (one for an array)."""
    del const_lowering
    for cls in type(val).__mro__:
        if cls in _constant_handlers:
            return tuple(_constant_handlers[cls](val))
    if aval is not None:
        return (mb.constant(np.asarray(val, aval.dtype), aval),)
    return (mb.constant(np.asarray(val)),)


def ir_constant(val, *, const_lowering=None, aval=None) -> ir.Value:
    """``val`` (a NumPy array or scalar) as one MLIR constant."""
    (value,) = ir_constants(val, const_lowering=const_lowering, aval=aval)
    return value


def shape_tensor(ctx, sizes: Sequence[int | ir.Value]) -> ir.Value:
    """A 1-D ``i32`` tensor of ``sizes`` (static sizes as a constant; symbolic sizes
    and ``ir.Value`` s in the dimension type)."""
    del ctx
    if any(is_symbolic_dim(d) for d in sizes):
        return dim_values.shape_tensor(sizes)
    if all(isinstance(d, int | np.integer) for d in sizes):
        return ir_constant(np.array(sizes, np.int32))
    i32 = ir.IntegerType.get_signless(32)
    pieces = [
        ir_constant(np.array([d], np.int32))
        if isinstance(d, int | np.integer)
        else hlo.reshape(ir.RankedTensorType.get([1], i32), d)
        for d in sizes
    ]
    return hlo.concatenate(pieces, 0)


def eval_dynamic_shape(ctx, shape) -> tuple:
    """The sizes of ``shape``: ints stay ints, symbolic dimensions become scalar values
    computed in the program."""
    del ctx
    return tuple(dim_values.eval_shape(shape))


def eval_dynamic_shape_as_tensor(ctx, shape) -> ir.Value:
    """The sizes of ``shape`` (symbolic or not) as a 1-D tensor."""
    del ctx
    return dim_values.shape_tensor(shape)


def dense_int_elements(xs) -> ir.DenseElementsAttr:
    """A 1-D ``i64`` elements attribute."""
    return ir.DenseIntElementsAttr.get(np.asarray(xs, np.int64))


def dense_int_array(xs) -> ir.DenseI64ArrayAttr:
    return ir.DenseI64ArrayAttr.get(np.asarray(xs, np.int64).tolist())


def i32_attr(i) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), i)


def i64_attr(i) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)


def ir_attribute(val) -> ir.Attribute:
    """The MLIR attribute of a Python value: bool, int (i64), float (f32), str, an
    ``ir.Attribute`` as is, or a sequence of these as an array attribute."""
    if isinstance(val, ir.Attribute):
        return val
    if isinstance(val, bool):
        return ir.BoolAttr.get(val)
    if isinstance(val, int | np.integer):
        return i64_attr(int(val))
    if isinstance(val, float | np.floating):
        return ir.FloatAttr.get(ir.F32Type.get(), float(val))
    if isinstance(val, str):
        return ir.StringAttr.get(val)
    if isinstance(val, np.ndarray):
        return ir.DenseElementsAttr.get(val)
    if isinstance(val, Sequence):
        return ir.ArrayAttr.get([ir_attribute(v) for v in val])
    raise TypeError(f"Unsupported attribute type: {type(val)}")


def flatten_ir_values(xs: Iterable) -> list:
    """``xs`` with sequences of values spliced in."""
    out = []
    for x in xs:
        if isinstance(x, ir.Value):
            out.append(x)
        else:
            out.extend(x)
    return out


def flatten_ir_types(xs: Iterable) -> list:
    """``xs`` with sequences of types spliced in."""
    out = []
    for x in xs:
        if isinstance(x, ir.Type):
            out.append(x)
        else:
            out.extend(x)
    return out


def unflatten_ir_values_like_types(xs: Iterable, ys: Sequence) -> list:
    """``xs`` regrouped as ``ys`` groups types: a value per lone type, a tuple per
    sequence of types."""
    it = iter(xs)
    out = []
    for y in ys:
        if isinstance(y, ir.Type):
            out.append(next(it))
        else:
            out.append(tuple(next(it) for _ in y))
    if next(it, None) is not None:
        raise ValueError("more values than types")
    return out


# ------------------------------------------------------------------- modules


def make_ir_context() -> ir.Context:
    """A fresh MLIR context with the dialects lamina lowers to loaded."""
    return mb.make_context()


def module_to_string(module: ir.Module, enable_debug_info=None) -> str:
    """The text of ``module`` (with locations when ``enable_debug_info``)."""
    return module.operation.get_asm(enable_debug_info=bool(enable_debug_info))


def module_to_bytecode(module: ir.Module) -> bytes:
    buf = io.BytesIO()
    module.operation.write_bytecode(buf)
    return buf.getvalue()


def merge_mlir_modules(
    dst_module: ir.Module,
    sym_name: str,
    src_module: ir.Module,
    dst_symtab: ir.SymbolTable | None = None,
) -> str:
    """Moves the functions of ``src_module`` into ``dst_module``, private, its ``main``
    renamed ``sym_name`` (made unique) and others renamed where ``dst_module`` has their
    names; returns the new name of ``main``. Both must share one MLIR context."""
    return merge_modules(dst_module, sym_name, src_module, dst_symtab)


# ------------------------------------------------------------------- Jaxprs


# Pytrees of MLIR values and types: lists and tuples are nodes, None is a leaf.
ir_tree_registry = _jax.pytree.PyTreeRegistry(
    enable_none=False,
    enable_tuple=True,
    enable_namedtuple=False,
    enable_list=True,
    enable_dict=False,
)


def _closed(jaxpr) -> ClosedJaxpr:
    return jaxpr if isinstance(jaxpr, ClosedJaxpr) else ClosedJaxpr(jaxpr, [])


def _check_const_args(num_const_args: int) -> None:
    if num_const_args:
        raise NotImplementedError(
            "lamina embeds a Jaxpr's constants in its module: num_const_args must be 0"
        )


def lower_jaxpr_to_fun(
    ctx: ModuleContext,
    name: str,
    jaxpr: ClosedJaxpr,
    effects: Sequence[Any],
    *,
    num_const_args: int = 0,
    main_function: bool = False,
    in_avals: Sequence[Any] = (),
    arg_names: Sequence[str | None] | None = None,
    result_names: Sequence[str] | None = None,
    **unused: Any,
) -> func.FuncOp:
    """Adds a ``func.func`` computing ``jaxpr`` to ``ctx``'s module and returns it:
    private and named ``name`` (made unique), or the public ``main`` with
    ``main_function``. It takes and returns a token per effect of ``effects`` first.
    Sharding, layout, memory-kind and aliasing arguments are accepted for JAX's
    signature and ignored (lamina lowers one-device programs)."""
    del in_avals, unused
    _check_const_args(num_const_args)
    return ctx.lower_function(
        _closed(jaxpr),
        name,
        effects=list(effects),
        public=main_function,
        arg_names=arg_names,
        result_names=result_names,
    )


def lower_jaxpr_to_module(
    module_name: str,
    jaxpr: ClosedJaxpr,
    *,
    num_const_args: int = 0,
    in_avals: Sequence[Any] = (),
    ordered_effects: Sequence[Any] = (),
    platforms: Sequence[str] = ("cpu",),
    backend: Any = None,
    axis_context: Any = None,
    donated_args: Sequence[bool] | None = None,
    arg_names: Sequence[str] | None = None,
    result_names: Sequence[str] | None = None,
    num_partitions: int = 1,
    lowering_parameters: LoweringParameters | None = None,
    **unused: Any,
) -> LoweringResult:
    """A StableHLO module named ``module_name`` whose public ``main`` computes
    ``jaxpr``, every input kept; ordered effects of the Jaxpr become leading token
    arguments and results. ``donated_args`` alias inputs to results of their type.
    Returns a ``LoweringResult`` whose ``host_callbacks`` are the Python functions the
    program calls. With several ``platforms`` every function takes the platform index
    first (see ``lower_per_platform``); sharding, layout and memory-kind arguments are
    accepted and ignored."""
    del in_avals, backend, axis_context, lowering_parameters, unused
    _check_const_args(num_const_args)
    platforms = tuple(platforms)
    closed = _closed(jaxpr)
    wanted = ordered_effects_of(ordered_effects)
    if wanted != ordered_effects_of(closed.effects):
        raise ValueError(
            f"ordered_effects {wanted} differ from the Jaxpr's ordered effects "
            f"{ordered_effects_of(closed.effects)}"
        )
    lowered = lower_jaxpr(
        closed,
        module_name=module_name,
        platforms=platforms,
        num_partitions=num_partitions,
        arg_names=arg_names,
        result_names=result_names,
        donated_args=donated_args,
        keep_unused=True,
    )
    return LoweringResult(
        module=lowered.module,
        keepalive=[lowered.context],
        host_callbacks=lowered.host_callbacks,
        shape_poly_state=ShapePolyLoweringState((), platforms),
    )


def wrap_with_sharding_op(ctx, x, aval_out, sharding, unspecified_dims=None) -> ir.Value:
    """``x`` constrained to the layout ``sharding`` (an ``HloSharding`` or an
    ``OpSharding``) by XLA's ``@Sharding`` custom call."""
    del ctx
    if isinstance(sharding, xla_client.OpSharding):
        sharding = xla_client.HloSharding.from_proto(sharding)
    return mb.sharding_op(x, aval_out, sharding, tuple(unspecified_dims or ()))


# Built with the sharding layer (issue 17).
_NOT_BUILT = {"Mesh": 17}


def __getattr__(name: str):
    if name in _NOT_BUILT:
        raise AttributeError(
            f"lamina.interpreters.mlir.{name} is not built yet (issue {_NOT_BUILT[name]})"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
