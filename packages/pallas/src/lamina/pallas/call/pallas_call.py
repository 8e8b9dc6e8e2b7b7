"""``pallas_call`` and its primitive, with all the primitive's rules.

``pallas_call_p`` takes the operands and returns the outputs; its params hold the
kernel's Jaxpr (grid indices, then a reference per input, output and scratch buffer,
no results), the ``GridMapping`` and the outputs' types. Its rules: abstract
evaluation (the outputs' types), lowering (interpret mode on every platform; without
it, CPU says that only interpret mode runs there, and CUDA/ROCm lower the kernel to
Triton: :mod:`.triton_lowering`), eager evaluation through dispatch,
batching (the batch becomes a new leading grid axis, and each batched operand gets a
squeezed leading block dimension indexed by it), and JVP (the kernel differentiated:
a kernel over primal and tangent references, as JAX does).
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import (
    Tracer,
    ad,
    batching,
    def_standard_impl,
    describe_function,
    eval_jaxpr,
    lower_fun,
    shaped_abstractify,
    trace_to_jaxpr,
)
from lamina.ir import (
    AbstractRef,
    Primitive,
    RefEffect,
    ShapedArray,
    dtypes,
    internal_mutable_array_effect,
    tree_util,
)
from lamina.pallas.call.block_mapping import (
    BlockMapping,
    GridMapping,
    block_mapping,
    flatten_specs,
    index_map_jaxpr,
    specs_for,
)
from lamina.pallas.call.interpret import interpret_pallas_call
from lamina.pallas.call.triton_lowering import triton_call_lowering
from lamina.pallas.core.grid_env import grid_env
from lamina.pallas.core.specs import GridSpec, no_block_spec, squeezed

__all__ = ["pallas_call", "pallas_call_p", "register_lowering_rule"]

pallas_call_p = Primitive("pallas_call")
pallas_call_p.multiple_results = True
# Its kernel's references are its own: programs calling it need no discharging.
pallas_call_p.keeps_refs_inside = True

_I32 = ShapedArray((), np.dtype(np.int32))


# ---------------------------------------------------------------- the API


def _normalize_grid(grid) -> tuple[int, ...]:
    if grid is None:
        return ()
    if isinstance(grid, (int, np.integer)):
        grid = (grid,)
    out = []
    for g in grid:
        if not isinstance(g, (int, np.integer)):
            raise NotImplementedError("lamina.pallas supports only static grid sizes")
        out.append(int(g))
    return tuple(out)


def _out_aval(x) -> ShapedArray:
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        raise ValueError(
            f"The outputs' shapes must be given as objects with a `shape` and a `dtype` "
            f"(such as jax.ShapeDtypeStruct), got {x!r}"
        )
    return ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype))


def _scratch_aval(s) -> ShapedArray:
    inner = getattr(s, "inner_aval", None)
    if isinstance(inner, ShapedArray):
        return inner
    return ShapedArray(tuple(s.shape), dtypes.canonicalize_dtype(s.dtype))


def pallas_call(kernel, out_shape, *, grid_spec=None, grid=(), in_specs=no_block_spec,
                out_specs=no_block_spec, scratch_shapes=(), input_output_aliases=None,
                debug=False, interpret=False, name=None, compiler_params=None,
                cost_estimate=None, metadata=None):  # fmt: skip
    """A function running ``kernel`` once per point of ``grid``, on the blocks of its
    operands and outputs that the block specs choose (``jax.experimental.pallas``)."""
    if grid_spec is None:
        grid_spec = GridSpec(grid, in_specs, out_specs, scratch_shapes)
    else:
        if (
            grid not in ((), None)
            or in_specs is not no_block_spec
            or out_specs is not (no_block_spec)
        ):
            raise ValueError(
                "If `grid_spec` is specified, then `grid`, `in_specs` and `out_specs` must not be."
            )
    grid = _normalize_grid(grid_spec.grid)
    out_leaves, out_tree = tree_util.tree_flatten(out_shape)
    out_avals = tuple(_out_aval(x) for x in out_leaves)
    single_out = out_tree.num_leaves == 1 and not isinstance(out_shape, (tuple, list))
    scratch = grid_spec.scratch_shapes
    scratch_leaves = tree_util.tree_leaves(
        scratch, is_leaf=lambda s: hasattr(s, "shape") and hasattr(s, "dtype")
    )
    scratch_avals = tuple(_scratch_aval(s) for s in scratch_leaves)
    aliases = tuple(sorted(dict(input_output_aliases or {}).items()))
    kernel_name = name or getattr(kernel, "__name__", "kernel")

    traced: dict = {}  # (input tree, input types) -> (kernel Jaxpr, GridMapping)

    def trace(args, flat_args, in_tree, in_avals):
        arg_specs = specs_for(grid_spec.in_specs, len(args), "in_specs", "inputs")
        flat_in_specs = flatten_specs(arg_specs, args)
        if single_out:
            out_spec_list = [grid_spec.out_specs]
        else:
            out_spec_list = specs_for(grid_spec.out_specs, len(out_shape), "out_specs",
                                      "out_shape")  # fmt: skip
            out_spec_list = flatten_specs(out_spec_list, list(out_shape))
        bms = [
            block_mapping(s, a, grid, f"args[{k}]")
            for k, (s, a) in enumerate(zip(flat_in_specs, in_avals, strict=True))
        ]
        bms += [
            block_mapping(s, a, grid, f"outputs[{k}]")
            for k, (s, a) in enumerate(zip(out_spec_list, out_avals, strict=True))
        ]
        for i, o in aliases:
            if in_avals[i].shape != out_avals[o].shape or in_avals[i].dtype != out_avals[o].dtype:
                raise ValueError(
                    f"input_output_aliases lists input {i} of type {in_avals[i].str_short()} "
                    f"for output {o} of type {out_avals[o].str_short()}: their types differ."
                )
        gm = GridMapping(grid, tuple(bms), len(flat_args), scratch_avals)
        n_in, n_out = len(flat_args), len(out_avals)

        def body(*vals):
            indices, refs = vals[: len(grid)], vals[len(grid) :]
            in_refs = tree_util.tree_unflatten(in_tree, refs[:n_in])
            out_refs = tree_util.tree_unflatten(out_tree, refs[n_in : n_in + n_out])
            out_refs = (out_refs,) if single_out else tuple(out_refs)
            with grid_env(indices, grid):
                result = kernel(*in_refs, *out_refs, *refs[n_in + n_out :])
            if result is not None:
                raise ValueError(
                    f"The kernel function in the pallas_call {describe_function(kernel)} "
                    f"should return None. It returns a PyTree: "
                    f"{tree_util.tree_structure(result)}"
                )
            return []

        kernel_avals = [_I32] * len(grid) + [bm.ref_aval for bm in bms]
        kernel_avals += [AbstractRef(a) for a in scratch_avals]
        closed, _ = trace_to_jaxpr(body, kernel_avals, kernel_name, what="pallas_call")
        # Named for the kernel function, as the compiled lowering names its kernel.
        closed.jaxpr.debug_info = describe_function(kernel)
        return closed, gm

    def wrapped(*args):
        flat_args, in_tree = tree_util.tree_flatten(args)
        in_avals = [shaped_abstractify(x) for x in flat_args]
        key = (in_tree, tuple(in_avals))
        if key in traced:  # the same Jaxpr object each time: compiled once
            closed, gm = traced[key]
        else:
            closed, gm = trace(args, flat_args, in_tree, in_avals)
            if not any(isinstance(c, Tracer) for c in closed.consts):
                traced[key] = closed, gm
        outs = pallas_call_p.bind(
            *flat_args,
            jaxpr=closed,
            grid_mapping=gm,
            out_avals=out_avals,
            input_output_aliases=aliases,
            interpret=bool(interpret),
            debug=debug,
            name=name,
            compiler_params=compiler_params,
            cost_estimate=cost_estimate,
            metadata=metadata,
            mesh=None,
        )
        return tree_util.tree_unflatten(out_tree, outs)

    return wrapped


# ---------------------------------------------------------------- abstract evaluation


def _abstract_eval(*avals, jaxpr, out_avals, **_):
    # The kernel's reads and writes are of its own references; other effects remain.
    effects = {
        e for e in jaxpr.effects
        if not isinstance(e, RefEffect) and e is not internal_mutable_array_effect
    }  # fmt: skip
    return list(out_avals), effects


pallas_call_p.def_effectful_abstract_eval(_abstract_eval)
def_standard_impl(pallas_call_p)


# ---------------------------------------------------------------- lowering

_interpret_lowering = lower_fun(interpret_pallas_call, multiple_results=True)
# Compiled lowerings by the type of the compiler params that selects them.
_backend_rules: dict[type, tuple] = {}


def register_lowering_rule(params_cls, rule, platform: str) -> None:
    """Lower ``pallas_call``s whose ``compiler_params`` are a ``params_cls`` with
    ``rule(ctx, *args, **params)`` on ``platform`` (``jax.extend.pallas``)."""
    _backend_rules[params_cls] = (rule, platform)


def _lowering(ctx, *args, interpret, **params):
    if interpret:
        return _interpret_lowering(ctx, *args, **params)
    entry = _backend_rules.get(type(params["compiler_params"]))
    if entry is not None and entry[1] == ctx.platform:
        return entry[0](ctx, *args, interpret=interpret, **params)
    if ctx.platform == "cpu":
        raise ValueError("Only interpret mode is supported on CPU backend.")
    if ctx.platform in ("cuda", "rocm"):
        return triton_call_lowering(ctx, *args, **params)
    raise NotImplementedError(
        f"lamina.pallas has no compiled lowering for {ctx.platform}: pass interpret=True."
    )


pallas_call_p.def_lowering(_lowering)


# ---------------------------------------------------------------- batching


def _batched_mapping(bm: BlockMapping, size: int, batched: bool, grid) -> BlockMapping:
    old = bm.index_map

    def index_map(b, *indices):
        idx = eval_jaxpr(old.jaxpr, old.consts, *indices)
        return (b, *idx) if batched else tuple(idx)

    aval = bm.array_aval
    if batched:
        aval = aval.update(shape=(size, *aval.shape))
        dims = (squeezed, *bm.block_dims)
    else:
        dims = bm.block_dims
    n = len(dims)
    return BlockMapping(dims, aval, index_map_jaxpr(index_map, grid, n, bm.origin, dims),
                        bm.origin)  # fmt: skip


def _batching(axis_data, vals, dims, *, jaxpr, grid_mapping, out_avals,
              input_output_aliases, **params):  # fmt: skip
    gm = grid_mapping
    size = axis_data.size
    grid = (size, *gm.grid)
    aliased = {i for i, _ in input_output_aliases}
    new_vals, bms = [], []
    for k, (x, d, bm) in enumerate(zip(vals, dims, gm.inputs, strict=True)):
        batched = d is not batching.not_mapped or k in aliased
        new_vals.append(batching.bdim_at_front(x, d, size) if batched else x)
        bms.append(_batched_mapping(bm, size, batched, grid))
    bms += [_batched_mapping(bm, size, True, grid) for bm in gm.outputs]
    new_gm = GridMapping(grid, tuple(bms), gm.num_inputs, gm.scratch_avals)

    def body(b, *vals):
        eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *vals)
        return []

    avals = [_I32, *jaxpr.in_avals]
    new_jaxpr, _ = trace_to_jaxpr(body, avals, "batched kernel", what="pallas_call")
    new_jaxpr.jaxpr.debug_info = jaxpr.jaxpr.debug_info
    new_out_avals = tuple(a.update(shape=(size, *a.shape)) for a in out_avals)
    outs = pallas_call_p.bind(
        *new_vals, jaxpr=new_jaxpr, grid_mapping=new_gm, out_avals=new_out_avals,
        input_output_aliases=input_output_aliases, **params,
    )  # fmt: skip
    return outs, [0] * len(outs)


pallas_call_p.def_batching(_batching)


# ---------------------------------------------------------------- JVP


def _jvp(primals, tangents, *, jaxpr, grid_mapping, out_avals, input_output_aliases, **params):
    if input_output_aliases:
        raise NotImplementedError("JVP of a pallas_call with input_output_aliases")
    gm = grid_mapping
    n_grid, n_in, n_out = len(gm.grid), gm.num_inputs, gm.num_outputs
    tangents = [ad.instantiate_zeros(t) for t in tangents]
    n_scratch = len(gm.scratch_avals)

    def body(*vals):
        indices = vals[:n_grid]
        rest = list(vals[n_grid:])
        ins, in_ts = rest[:n_in], rest[n_in : 2 * n_in]
        rest = rest[2 * n_in :]
        outs, out_ts = rest[:n_out], rest[n_out : 2 * n_out]
        scr, scr_ts = rest[2 * n_out : 2 * n_out + n_scratch], rest[2 * n_out + n_scratch :]

        def kernel(*refs):
            eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *indices, *refs)
            return []

        ad.jvp(kernel, (*ins, *outs, *scr), (*in_ts, *out_ts, *scr_ts))
        return []

    ref_avals = jaxpr.in_avals[n_grid:]
    in_r, out_r, scr_r = ref_avals[:n_in], ref_avals[n_in : n_in + n_out], ref_avals[n_in + n_out :]
    tan = [AbstractRef(ad.tangent_aval(a.inner_aval)) for a in ref_avals]
    avals = [*jaxpr.in_avals[:n_grid], *in_r, *tan[:n_in], *out_r, *tan[n_in : n_in + n_out],
             *scr_r, *tan[n_in + n_out :]]  # fmt: skip
    new_jaxpr, _ = trace_to_jaxpr(body, avals, "jvp kernel", what="pallas_call")
    new_jaxpr.jaxpr.debug_info = jaxpr.jaxpr.debug_info
    bms = (*gm.inputs, *gm.inputs, *gm.outputs, *gm.outputs)
    scratch = (*gm.scratch_avals, *(ad.tangent_aval(a) for a in gm.scratch_avals))
    new_gm = GridMapping(gm.grid, bms, 2 * n_in, scratch)
    outs = pallas_call_p.bind(
        *primals, *tangents, jaxpr=new_jaxpr, grid_mapping=new_gm,
        out_avals=(*out_avals, *(ad.tangent_aval(a) for a in out_avals)),
        input_output_aliases=(), **params,
    )  # fmt: skip
    return outs[:n_out], outs[n_out:]


pallas_call_p.def_jvp(_jvp)
