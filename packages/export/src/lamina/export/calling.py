"""Calling an exported function: the ``call_exported`` primitive, whose lowering
inlines the exported module's functions into the caller's module and calls its
``main`` by the export calling convention (a platform index first when exported for
several platforms, then a token per ordered effect, then the kept array arguments;
tokens first among the results), and ``call_exported``, the function that binds it
under a ``custom_vjp`` whose backward pass calls the exported VJP.
"""

from __future__ import annotations

import functools

import numpy as np

from lamina.export.safety_checks import DisabledSafetyCheck
from lamina.export.shardy_to_gspmd import shardy_to_gspmd
from lamina.interpreters import apply_primitive, batching, custom_vjp, jit, mlir, refine_module
from lamina.ir import (
    InconclusiveDimensionOperation,
    IntOps,
    Primitive,
    ShapedArray,
    abstract_token,
    dtypes,
    is_symbolic_dim,
    solve_dim_vars,
    tree_util,
)
from lamina.lax import map as lax_map
from lamina.lax import register_lapack_targets

__all__ = ["arg_path", "call_exported", "call_exported_p"]

call_exported_p = Primitive("call_exported")
call_exported_p.multiple_results = True


def _path_str(path) -> str:
    """``args[0]``, ``kwargs['x']``: a key path into ``(args, kwargs)`` as JAX names it."""
    if not path:
        return ""
    head = "args" if getattr(path[0], "idx", None) == 0 else "kwargs"
    return head + tree_util.keystr(tuple(path[1:]))


@functools.lru_cache(maxsize=256)
def _arg_names(in_tree) -> tuple[str, ...]:
    placeholder = in_tree.unflatten([0] * in_tree.num_leaves)
    return tuple(_path_str(p) for p, _ in tree_util.tree_flatten_with_path(placeholder)[0])


def arg_path(in_tree, arg_idx: int, dim_idx: int | None = None) -> str:
    """Names the flat argument ``arg_idx`` of an export (and its dimension ``dim_idx``)."""
    names = _arg_names(in_tree)
    name = names[arg_idx] if arg_idx < len(names) else f"args[{arg_idx}]"
    return name if dim_idx is None else f"{name}.shape[{dim_idx}]"


def _abstract_eval(*avals, exported):
    if len(avals) != len(exported.in_avals):
        raise ValueError(
            f"Function {exported.fun_name} takes {len(exported.in_avals)} arguments, "
            f"got {len(avals)}"
        )
    for i, (want, got) in enumerate(zip(exported.in_avals, avals, strict=True)):
        if not isinstance(got, ShapedArray):
            raise ValueError(f"Expected ShapedArray but got: {got}")
        if len(want.shape) != len(got.shape):
            raise ValueError(
                f"Rank mismatch for {arg_path(exported.in_tree, i)}: expected "
                f"{want.shape} and called with {got.shape}"
            )
        if want.dtype != got.dtype:
            raise ValueError(
                f"Dtype mismatch for {arg_path(exported.in_tree, i)}: expected "
                f"{want.dtype} and called with {got.dtype}"
            )
        for d, (w, g) in enumerate(zip(want.shape, got.shape, strict=True)):
            if isinstance(w, int) and w != g:
                raise ValueError(
                    f"Shape mismatch for {arg_path(exported.in_tree, i, d)} "
                    "(expected same constant): "
                    f"expected {want.shape} and called with {got.shape}"
                )
    env = _dim_values(exported, avals)
    outs = [
        ShapedArray(_specialize(a.shape, env), a.dtype, weak_type=a.weak_type)
        for a in exported.out_avals
    ]
    return outs, {*exported.ordered_effects, *exported.unordered_effects}


class _SymbolicOps(IntOps):
    """Solving the export's dimension variables for a caller whose own shapes are
    symbolic: checks the bounds cannot decide are left to the module's
    ``shape_assertion``s, checked when the caller runs."""

    @staticmethod
    def ge(a, b):
        try:
            return a >= b
        except InconclusiveDimensionOperation:
            return True

    @staticmethod
    def eq(a, b):
        try:
            return a == b or not (a - b >= 1 or b - a >= 1)
        except InconclusiveDimensionOperation:
            return True


def _dim_values(exported, avals) -> dict:
    """The values of the export's dimension variables for arguments of types ``avals``
    (ints, or the caller's own symbolic dimensions), with JAX's errors."""
    if not any(is_symbolic_dim(d) for a in exported.in_avals for d in a.shape):
        return {}
    symbolic = any(is_symbolic_dim(d) for a in avals for d in a.shape)
    ops = _SymbolicOps if symbolic else IntOps
    return solve_dim_vars(
        exported.in_avals,
        lambda i, j: avals[i].shape[j],
        ops,
        lambda i: arg_path(exported.in_tree, i),
    )


def _specialize(shape, env) -> tuple:
    return tuple(d.evaluate(env) if is_symbolic_dim(d) else d for d in shape)


call_exported_p.def_effectful_abstract_eval(_abstract_eval)


@functools.lru_cache(maxsize=64)
def _with_float0_constants(exported, float0_shapes: tuple[tuple[int, tuple], ...]):
    """A jitted call of ``exported`` taking all but its float0 arguments (zeros of the
    given shapes by position, which cannot be put on a device), which it holds as
    constants."""
    shapes = dict(float0_shapes)

    def run(*operands):
        it = iter(operands)
        full = [
            np.zeros(shapes[i], dtypes.float0) if i in shapes else next(it)
            for i in range(len(exported.in_avals))
        ]
        return call_exported_p.bind(*full, exported=exported)

    return jit(run)


def _impl(*args, exported):
    float0_shapes = tuple(
        (i, tuple(np.shape(x)))
        for i, (x, a) in enumerate(zip(args, exported.in_avals, strict=True))
        if a.dtype == dtypes.float0
    )
    if float0_shapes:
        run = _with_float0_constants(exported, float0_shapes)
        positions = dict(float0_shapes)
        outs = run(*(x for i, x in enumerate(args) if i not in positions))
    else:
        outs = apply_primitive(call_exported_p, *args, exported=exported)
    env = _dim_values(
        exported,
        [ShapedArray(np.shape(x), a.dtype) for x, a in zip(args, exported.in_avals, strict=True)],
    )
    return [
        np.zeros(_specialize(a.shape, env), dtypes.float0) if a.dtype == dtypes.float0 else x
        for x, a in zip(outs, exported.out_avals, strict=True)
    ]


call_exported_p.def_impl(_impl)


def _callee_platform_indices(exported, platforms: tuple[str, ...]) -> list[int]:
    """For each platform the caller is lowered for, the callee's index of it."""
    indices = []
    for platform in platforms:
        if platform in exported.platforms:
            indices.append(exported.platforms.index(platform))
        elif DisabledSafetyCheck.platform() in exported.disabled_safety_checks:
            indices.append(0)
        else:
            raise ValueError(
                f"Function '{exported.fun_name}' was exported for "
                f"platforms '{exported.platforms}' but it is used "
                f"on '{platforms}'."
            )
    return indices


def _platform_index_operand(mctx, indices: list[int], index_type):
    """The callee's platform index: a constant when the caller is lowered for one
    platform, else a ``case`` on the caller's own platform index."""
    element = mlir.ir.RankedTensorType(index_type).element_type
    dtype = f"int{mlir.ir.IntegerType(element).width}"
    if len(indices) == 1:
        return mlir.ir_constant(np.array(indices[0], dtype=dtype))
    case = mlir.hlo.CaseOp([index_type], mctx.platform_index, len(indices))
    for region, i in zip(case.regions, indices, strict=True):
        with mlir.ir.InsertionPoint(region.blocks.append()):
            mlir.hlo.return_([mlir.ir_constant(np.array(i, dtype=dtype))])
    return case.result


def _lowering(ctx, *args, exported):
    mctx = ctx.module_context
    indices = _callee_platform_indices(exported, tuple(mctx.platforms))
    partitions = mlir.ir.IntegerAttr(mctx.module.operation.attributes["mhlo.num_partitions"])
    if exported.nr_devices != 1 and exported.nr_devices != partitions.value:
        raise ValueError(
            f"Function {exported.fun_name} was exported for "
            f"{exported.nr_devices} devices and is called in a context with "
            f"{partitions.value} devices, which is not allowed."
        )
    sharded = exported.nr_devices > 1
    if "cpu" in exported.platforms:
        register_lapack_targets()  # the module may call jaxlib's LAPACK kernels
    effects = list(exported.ordered_effects)
    kept = [i for i in range(len(args)) if i in exported.module_kept_var_idx]
    if exported.uses_global_constants and not _is_symbolic(ctx.avals_in):
        # The caller's shapes are static: the module is refined to them first.
        module_bytes = _refined(
            exported,
            (len(exported.platforms) > 1, *(ctx.avals_in[i] for i in kept)),
            tuple(ctx.avals_out),
        )
        submodule = mlir.ir.Module.parse(module_bytes, context=mctx.context)
    else:
        # As JAX does: the caller's values are converted to the module's (dynamic)
        # types, and the whole caller is refined when it runs.
        submodule = mlir.stablehlo.deserialize_portable_artifact(
            mctx.context, exported.mlir_module_serialized
        )
    with mctx.context, mlir.ir.Location.unknown():
        shardy_to_gspmd(submodule)
    main = mlir.ir.SymbolTable(submodule.operation)["main"]
    callee_type = mlir.ir.FunctionType(mlir.ir.TypeAttr(main.attributes["function_type"]).value)
    name = mlir.merge_mlir_modules(
        mctx.module, f"call_exported_{exported.fun_name}", submodule, mctx.symbol_table
    )
    operands = []
    if len(exported.platforms) > 1:
        operands.append(_platform_index_operand(mctx, indices, callee_type.inputs[0]))
    operands += ctx.tokens(effects)
    inputs = callee_type.inputs[len(operands) :]
    if sharded:  # the arguments laid out as the module expects
        in_hlo = _hlo_shardings(
            exported.in_shardings_hlo, exported._in_named_shardings, ctx.avals_in
        )
        args = [
            a if s is None else mlir.wrap_with_sharding_op(ctx, a, aval, s)
            for a, aval, s in zip(args, ctx.avals_in, in_hlo, strict=True)
        ]
    operands += [_convert(args[i], t) for i, t in zip(kept, inputs, strict=True)]
    call = mlir.func.CallOp(
        list(callee_type.results), mlir.ir.FlatSymbolRefAttr.get(name), operands
    )
    results = list(call.results)
    ctx.set_tokens(effects, results[: len(effects)])
    outs = [
        _convert(r, mlir.aval_to_ir_type(None, a))
        for r, a in zip(results[len(effects) :], ctx.avals_out, strict=True)
    ]
    if sharded:  # the results laid out as the module gives them
        out_hlo = _hlo_shardings(
            exported.out_shardings_hlo, exported._out_named_shardings, ctx.avals_out
        )
        outs = [
            r if s is None else mlir.wrap_with_sharding_op(ctx, r, aval, s)
            for r, aval, s in zip(outs, ctx.avals_out, out_hlo, strict=True)
        ]
    return outs


def _hlo_shardings(hlo, named, avals) -> list:
    """The ``HloSharding`` of each argument or result (None where unspecified): the
    export's, else made from its named sharding."""
    return [
        h if h is not None or s is None else s._to_xla_hlo_sharding(a.ndim)
        for h, s, a in zip(hlo, named, avals, strict=True)
    ]


def _without(shape: tuple, axis) -> tuple:
    """``shape`` less its batch axis (``axis`` may be ``not_mapped``)."""
    return shape if axis is batching.not_mapped else shape[:axis] + shape[axis + 1 :]


def _is_symbolic(avals) -> bool:
    return any(is_symbolic_dim(d) for a in avals for d in getattr(a, "shape", ()))


def _convert(value, ir_type):
    return value if value.type == ir_type else mlir.hlo.convert(ir_type, value)


@functools.lru_cache(maxsize=64)
def _refined(exported, args: tuple, out_avals: tuple) -> bytes:
    """The module of a polymorphic ``exported`` refined to static argument types
    (``args``: whether a platform index comes first, then the kept arguments' types)
    and results ``out_avals``."""
    context = mlir.make_ir_context()
    module = mlir.stablehlo.deserialize_portable_artifact(context, exported.mlir_module_serialized)
    with context:
        data = mlir.module_to_bytecode(module)
    with_index, *kept = args
    head = [ShapedArray((), np.int32)] if with_index else []
    tokens = [abstract_token] * len(exported.ordered_effects)
    return refine_module(data, [*head, *tokens, *kept], [*tokens, *out_avals])


call_exported_p.def_lowering(_lowering)


def _batching(axis_data, args, dims, *, exported):
    """Under ``vmap``, the module runs once per element of the batch, in a loop (JAX has
    no batching rule for it); unbatched arguments are passed to every iteration. float0
    arguments and results (cotangents of integer values) hold no data: they stay out of
    the loop, as zeros made on the host."""
    if exported.ordered_effects:
        raise NotImplementedError(
            "Batching rule for 'call_exported' not implemented for ordered effects"
        )
    elements = [  # the type of each argument for one element of the batch
        ShapedArray(_without(np.shape(x), d), a.dtype)
        for x, d, a in zip(args, dims, exported.in_avals, strict=True)
    ]
    float0_in = {i: e.shape for i, e in enumerate(elements) if e.dtype == dtypes.float0}
    batched = [i for i, d in enumerate(dims) if d is not batching.not_mapped and i not in float0_in]

    run = functools.partial(call_exported_p.bind, exported=exported)
    if float0_in:
        run = _with_float0_constants(exported, tuple(float0_in.items()))

    def one(xs):
        full = list(args)
        for i, x in zip(batched, xs, strict=True):
            full[i] = x
        outs = run(*(x for i, x in enumerate(full) if i not in float0_in))
        return [
            o for o, a in zip(outs, exported.out_avals, strict=True) if a.dtype != dtypes.float0
        ]

    xs = [batching.moveaxis(args[i], dims[i], 0) for i in batched]
    data = iter(lax_map(one, xs))
    env = _dim_values(exported, elements)
    outs = [
        np.zeros((axis_data.size, *_specialize(a.shape, env)), dtypes.float0)
        if a.dtype == dtypes.float0
        else next(data)
        for a in exported.out_avals
    ]
    return outs, [0] * len(outs)


call_exported_p.def_batching(_batching)


def _zeros_for_float0(ct, aval):
    """A float0 cotangent (of the caller's shape) where the VJP expects one (integer
    results)."""
    if aval.dtype != dtypes.float0:
        return ct
    shape = np.shape(ct)
    return np.zeros(shape, dtypes.float0) if not _is_symbolic([ct]) else ct


def call_exported(exported):
    """A function of ``exported``'s arguments (its pytree ``(args, kwargs)``) that runs
    the exported module; reverse-mode differentiable through ``exported.vjp()``."""

    @custom_vjp
    def f_flat(*args_flat):
        return call_exported_p.bind(*args_flat, exported=exported)

    def f_flat_vjp_fwd(*args_flat):
        return f_flat(*args_flat), args_flat

    def f_flat_vjp_bwd(args_flat, cts):
        exp_vjp = exported.vjp()
        expected = exp_vjp.in_avals[len(args_flat) :]
        cts = [_zeros_for_float0(c, a) for c, a in zip(cts, expected, strict=True)]
        return tuple(call_exported(exp_vjp)(*args_flat, *cts))

    f_flat.defvjp(f_flat_vjp_fwd, f_flat_vjp_bwd)

    def f_imported(*args, **kwargs):
        args_flat, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != exported.in_tree:
            got = in_tree.unflatten([0] * in_tree.num_leaves)
            want = exported.in_tree.unflatten([0] * exported.in_tree.num_leaves)
            lines = "\n".join(
                f"   - {_path_str(path)} is a {thing1} in the invocation and a "
                f"{thing2} when exported, so {why}.\n"
                for path, thing1, thing2, why in tree_util.equality_errors(got, want)
            )
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure "
                f"as when the function '{exported.fun_name}' was exported, but they "
                "have the following structural differences:\n" + lines
            )
        return exported.out_tree.unflatten(list(f_flat(*args_flat)))

    return f_imported
