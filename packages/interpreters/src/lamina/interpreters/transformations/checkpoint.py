"""``checkpoint`` (alias ``remat``): recompute a function's intermediates when it is
differentiated instead of saving them, as JAX's ``jax.checkpoint`` does.

``checkpoint(f)`` stages ``f`` into one ``checkpoint`` equation with JAX 0.10.2's
params: ``jaxpr`` (an open Jaxpr: ``f``'s constants are leading operands),
``prevent_cse``, ``differentiated`` and ``policy``. Evaluated, batched or lowered, it
is ``f``'s Jaxpr inlined. The work is in differentiation:

- its JVP is a ``checkpoint`` equation over the JVP of the Jaxpr;
- partial evaluation (when ``linearize``, ``vjp`` or ``grad`` split primal from tangent
  work) splits the Jaxpr under the policy (:mod:`.checkpoint_partial_eval`): the
  primal work runs now, saving only what the policy allows, and the tangent work is a
  new ``checkpoint`` equation, ``differentiated=True``, that recomputes the rest from
  the saved values;
- its transpose is a ``checkpoint`` equation running the inner backward pass, so the
  recomputation happens in the backward pass.

Lowered with ``differentiated`` and ``prevent_cse`` both true, the inputs first go
through ``stablehlo.optimization_barrier``, so XLA cannot merge the recomputation with
the forward pass's copy of the same work (what JAX does on CPU and GPU).
"""

from __future__ import annotations

import functools

from lamina.interpreters.core.errors import ConcretizationTypeError
from lamina.interpreters.core.mlir_bindings import hlo
from lamina.interpreters.core.tangents import Zero
from lamina.interpreters.core.tracing import set_current_trace, shaped_abstractify
from lamina.interpreters.jaxprs import key_reuse
from lamina.interpreters.jaxprs.calls import eval_jaxpr
from lamina.interpreters.jaxprs.dce import dce_jaxpr, dce_rules
from lamina.interpreters.jaxprs.lowering import lower_jaxpr_body
from lamina.interpreters.jaxprs.staging import describe_function, trace_to_jaxpr
from lamina.interpreters.transformations import batching
from lamina.interpreters.transformations.ad import jvp_jaxpr, split_jvp_outputs
from lamina.interpreters.transformations.checkpoint_partial_eval import split_call_eqn, split_jaxpr
from lamina.interpreters.transformations.checkpoint_policies import (
    checkpoint_name,
    checkpoint_policies,
)
from lamina.interpreters.transformations.checkpoint_policies import (
    nothing_saveable as _nothing_saveable,
)
from lamina.interpreters.transformations.reverse import (
    is_undefined_primal,
    merge_transposed_outputs,
    transpose_jaxpr,
)
from lamina.ir import (
    ClosedJaxpr,
    Jaxpr,
    Primitive,
    declare_param,
    new_jaxpr_eqn,
    transformation_boundary,
    tree_util,
)

__all__ = [
    "checkpoint",
    "checkpoint_name",
    "checkpoint_p",
    "checkpoint_policies",
    "remat",
]

checkpoint_p = Primitive("remat2")
checkpoint_p.multiple_results = True
declare_param(checkpoint_p, "jaxpr", Jaxpr)  # printed Jaxprs parse back to open ones


@key_reuse.dynamic_key_reuse_signature
def _key_reuse_signature(eqn):
    # The differentiated pass consumes only keys the forward pass consumed.
    if eqn.params["differentiated"]:
        return key_reuse.KeyReuseSignature()
    return key_reuse.jaxpr_type_signature(eqn.params["jaxpr"])


key_reuse.key_reuse_signatures[checkpoint_p] = _key_reuse_signature


# --------------------------------------------------------------------------- the API


@transformation_boundary
def checkpoint(fun, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """``fun`` made to recompute its intermediate values when differentiated, rather
    than save them from the forward pass.

    ``policy(primitive, *input_avals, **params) -> bool`` (see ``checkpoint_policies``)
    says which intermediates may be saved anyway; by default only ``fun``'s inputs
    are. ``prevent_cse`` keeps XLA from merging the recomputation with the forward
    computation (an ``optimization_barrier``). Arguments at ``static_argnums`` are
    passed to ``fun`` as Python values, not traced.
    """
    static = _check_static_argnums(static_argnums)

    @functools.wraps(fun)
    def fun_remat(*args, **kwargs):
        call_fun, dyn_args = _bind_static_args(fun, static, args)
        flat_args, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
        in_avals = [_abstractify_arg(x) for x in flat_args]
        out_tree_box = []

        def flat_fun(*flat):
            a, kw = tree_util.tree_unflatten(in_tree, flat)
            out_flat, out_tree = tree_util.tree_flatten(call_fun(*a, **kw))
            out_tree_box.append(out_tree)
            return out_flat

        debug = f"{describe_function(fun)} for checkpoint"
        try:
            closed, _ = trace_to_jaxpr(flat_fun, in_avals, debug)
        except ConcretizationTypeError as err:
            err.args = (f"{err.args[0]}\n\n{_STATIC_ARGNUMS_HINT}",)
            raise
        jaxpr, consts = _open_jaxpr(closed)
        outs = checkpoint_p.bind(
            *consts,
            *flat_args,
            jaxpr=jaxpr,
            prevent_cse=prevent_cse,
            differentiated=False,
            policy=policy,
        )
        return tree_util.tree_unflatten(out_tree_box[0], outs)

    return fun_remat


remat = checkpoint

_STATIC_ARGNUMS_HINT = (
    "Consider using the `static_argnums` parameter for `jax.remat` or "
    "`jax.checkpoint`. See the `jax.checkpoint` docstring and its example involving "
    "`static_argnums`:\n"
    "https://jax.readthedocs.io/en/latest/_autosummary/jax.checkpoint.html\n"
)


def _check_static_argnums(static_argnums) -> tuple[int, ...]:
    if type(static_argnums) is int:
        return (static_argnums,)
    if type(static_argnums) is tuple and all(type(d) is int for d in static_argnums):
        return static_argnums
    raise TypeError(
        "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must be an "
        f"int, tuple of ints or, bool, but got value {static_argnums}"
    )


def _bind_static_args(fun, static_argnums, args):
    """``fun`` with the static arguments closed over, and the dynamic arguments."""
    if not all(-len(args) <= d < len(args) for d in static_argnums):
        raise ValueError(
            "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only "
            "take integer values greater than or equal to `-len(args)` and less than "
            f"`len(args)`, but got {static_argnums}"
        )
    if not static_argnums:
        return fun, args
    static = frozenset(d % len(args) for d in static_argnums)
    dyn_args = tuple(x for i, x in enumerate(args) if i not in static)

    def with_static(*dyn, **kwargs):
        it = iter(dyn)
        full = [args[i] if i in static else next(it) for i in range(len(args))]
        return fun(*full, **kwargs)

    return with_static, dyn_args


def _abstractify_arg(x):
    try:
        return shaped_abstractify(x)
    except TypeError:
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type") from None


def _open_jaxpr(closed: ClosedJaxpr) -> tuple[Jaxpr, list]:
    """The Jaxpr with its constvars turned into leading invars, and their values."""
    jaxpr = closed.jaxpr
    if not jaxpr.constvars:
        return jaxpr, []
    opened = jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars])
    return opened, list(closed.consts)


def _bind_closed(closed: ClosedJaxpr, args, **params):
    jaxpr, consts = _open_jaxpr(closed)
    return checkpoint_p.bind(*consts, *args, jaxpr=jaxpr, **params)


# --------------------------------------------------------------------------- rules


def _checkpoint_abstract_eval(*in_avals, jaxpr: Jaxpr, **_):
    if len(in_avals) != len(jaxpr.invars):
        raise TypeError(
            f"checkpoint got {len(in_avals)} operands for a Jaxpr of {len(jaxpr.invars)} inputs"
        )
    return [v.aval for v in jaxpr.outvars]


def _checkpoint_impl(*args, jaxpr: Jaxpr, **_):
    return eval_jaxpr(jaxpr, [], *args)


def _checkpoint_lowering(ctx, *args, jaxpr, prevent_cse, differentiated, policy):
    operands = list(args)
    if differentiated and prevent_cse and operands:
        operands = list(hlo.OptimizationBarrierOp(operands).results)
    return lower_jaxpr_body(ctx.module_context, jaxpr, [], operands)


def _checkpoint_jvp(primals, tangents, *, jaxpr, **params):
    nonzero = [type(t) is not Zero for t in tangents]
    closed, out_nonzero = jvp_jaxpr(ClosedJaxpr(jaxpr, []), nonzero, "checkpoint")
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    outs = _bind_closed(closed, [*primals, *nz_tangents], **params)
    return split_jvp_outputs(outs, jaxpr.out_avals, out_nonzero)


def _checkpoint_transpose(cts, *args, jaxpr, **params):
    undefined = [is_undefined_primal(a) for a in args]
    ct_nonzero = [type(c) is not Zero for c in cts]
    closed, out_nonzero = transpose_jaxpr(
        ClosedJaxpr(jaxpr, []), undefined, ct_nonzero, "checkpoint"
    )
    res = [a for a, u in zip(args, undefined, strict=True) if not u]
    nz_cts = [c for c in cts if type(c) is not Zero]
    outs = _bind_closed(closed, [*res, *nz_cts], **params)
    return merge_transposed_outputs(outs, args, out_nonzero)


def _checkpoint_batching(axis_data, vals, dims, *, jaxpr, **params):
    closed, out_dims = batching.batch_jaxpr(ClosedJaxpr(jaxpr, []), axis_data, dims)
    return _bind_closed(closed, vals, **params), out_dims


checkpoint_p.def_abstract_eval(_checkpoint_abstract_eval)
checkpoint_p.def_impl(_checkpoint_impl)
checkpoint_p.def_lowering(_checkpoint_lowering)
checkpoint_p.def_jvp(_checkpoint_jvp)
checkpoint_p.def_transpose(_checkpoint_transpose)


def _checkpoint_dce(used_outputs, eqn):
    """Unused outputs leave the inner Jaxpr, and with them the inputs only they need."""
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    jaxpr, used_inputs = dce_jaxpr(eqn.params["jaxpr"], used_outputs)
    if jaxpr is eqn.params["jaxpr"]:
        return used_inputs, eqn
    new_eqn = eqn.replace(
        invars=[a for a, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params=dict(eqn.params, jaxpr=jaxpr),
    )
    return used_inputs, new_eqn


dce_rules[checkpoint_p] = _checkpoint_dce
batching.batching_rules[checkpoint_p] = _checkpoint_batching


# --------------------------------------------------------------------------- partial eval


def _checkpoint_partial_eval(trace, args, *, jaxpr, prevent_cse, differentiated, policy):
    """Known work runs now in the parent trace, keeping the residuals the policy
    allows; the unknown work is staged as a ``checkpoint`` equation that recomputes
    the rest."""
    in_unknown = [trace.is_unknown(x) for x in args]
    split = split_jaxpr(jaxpr, in_unknown, policy or _nothing_saveable)
    known_args = [x for x, u in zip(args, in_unknown, strict=True) if not u]
    with set_current_trace(trace.parent):
        known_results = eval_jaxpr(split.known, [], *known_args)
    n_known = len(known_results) - split.num_res
    known_outs, computed = iter(known_results[:n_known]), iter(known_results[n_known:])
    residuals = [next(computed) if i is None else args[i] for i in split.residual_inputs]
    unknown_outs = iter(())
    if any(split.out_unknown):
        unknown_args = [x for x, u in zip(args, in_unknown, strict=True) if u]
        used = [x for x, u in zip(unknown_args, split.unknown_inputs_used, strict=True) if u]
        params = dict(
            jaxpr=split.unknown, prevent_cse=prevent_cse, differentiated=True, policy=policy
        )
        unknown_outs = iter(
            trace.staging.process_primitive(checkpoint_p, [*residuals, *used], params)
        )
    return [next(unknown_outs) if u else next(known_outs) for u in split.out_unknown]


checkpoint_p.def_partial_eval(_checkpoint_partial_eval)


def _split_checkpoint(eqn, in_unknown, policy):
    """A ``checkpoint`` equation met inside another one's partial evaluation: split
    under the enclosing policy (as JAX does); its unknown half is differentiated."""
    split, k_in, k_out, u_in, saved = split_call_eqn(eqn, in_unknown, policy, eqn.params["jaxpr"])
    known_eqn = new_jaxpr_eqn(
        k_in, k_out, checkpoint_p, dict(eqn.params, jaxpr=split.known), source_info=eqn.source_info
    )
    if not any(split.out_unknown):
        return known_eqn, None, saved
    u_out = [v for v, u in zip(eqn.outvars, split.out_unknown, strict=True) if u]
    params = dict(eqn.params, jaxpr=split.unknown, differentiated=True)
    unknown_eqn = new_jaxpr_eqn(u_in, u_out, checkpoint_p, params, source_info=eqn.source_info)
    return known_eqn, unknown_eqn, saved


checkpoint_p.def_remat_split(_split_checkpoint)
