"""``while_loop`` and ``fori_loop``: the ``while`` primitive with all its rules.

``while_p`` takes ``cond_jaxpr`` and ``body_jaxpr`` (``ClosedJaxpr``s without
constants), ``cond_nconsts`` and ``body_nconsts``; operands are the cond constants,
the body constants and the initial carry. It lowers to ``stablehlo.while``. Its JVP is
a ``while`` over the body's JVP (the carries with nonzero tangents found by a fixed
point). Partial evaluation runs the known carries now and stages the whole loop for
the unknown ones, so forward-mode and ``linearize`` work; transposing it raises JAX's
error (reverse mode needs a trip count: ``scan`` or ``fori_loop`` with static bounds).
Under ``vmap`` a batched predicate keeps iterating while any member continues, and
members that are done keep their carry.
"""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters import (
    Tracer,
    accept_ref_cotangents,
    ad,
    batching,
    def_standard_impl,
    describe_function,
    dim_as_value,
    lower_jaxpr_body,
    set_current_trace,
    trace_to_jaxpr,
)
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import AbstractRef, ClosedJaxpr, Primitive, Var, dtypes, is_symbolic_dim, tree_util
from lamina.lax.base.primitives import (
    broadcast_in_dim,
    convert_element_type,
    lt,
    reduce_or,
    select_n,
)
from lamina.lax.control_flow import bodies
from lamina.lax.control_flow.scan import scan
from lamina.lax.state.access import get_p
from lamina.lax.state.allocation import new_ref_p

__all__ = ["fori_loop", "while_loop", "while_p"]

while_p = Primitive("while")
while_p.multiple_results = True


# ---------------------------------------------------------------- the API


def while_loop(cond_fun, body_fun, init_val):
    """``val = body_fun(val)`` while ``cond_fun(val)``; returns the final ``val``."""
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("while_loop: cond_fun and body_fun arguments should be callable.")
    init_flat, init_tree = tree_util.tree_flatten(init_val)
    avals = [bodies.abstractify(x) for x in init_flat]
    in_tree = tree_util.tree_structure((init_val,))
    cond_jaxpr, cond_consts, cond_tree = bodies.trace_function(
        cond_fun, in_tree, avals, describe_function(cond_fun)
    )
    outs = cond_jaxpr.out_avals
    if (
        cond_tree.num_leaves != 1
        or len(outs) != 1
        or outs[0].shape
        or outs[0].dtype != dtypes.bool_
    ):
        shown = ", ".join(
            f"ShapedArray({a.str_short()}{', weak_type=True' if a.weak_type else ''})" for a in outs
        )
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) [{shown}].")
    body_jaxpr, body_consts, out_tree = bodies.trace_function(
        body_fun, in_tree, avals, describe_function(body_fun)
    )
    name = bodies.param_name(body_fun)
    bodies.check_carry_types(
        "while_loop body", name, init_tree, avals, out_tree, list(body_jaxpr.out_avals)
    )
    if any(
        a.weak_type and not b.weak_type for a, b in zip(avals, body_jaxpr.out_avals, strict=True)
    ):
        avals = [
            a.update(weak_type=a.weak_type and b.weak_type)
            for a, b in zip(avals, body_jaxpr.out_avals, strict=True)
        ]
        cond_jaxpr, cond_consts, _ = bodies.trace_function(cond_fun, in_tree, avals)
        body_jaxpr, body_consts, _ = bodies.trace_function(body_fun, in_tree, avals)

        init_flat = [
            convert_element_type(x, a.dtype)
            if bodies.abstractify(x).weak_type != a.weak_type
            else x
            for x, a in zip(init_flat, avals, strict=True)
        ]
    outs = while_p.bind(
        *cond_consts,
        *body_consts,
        *init_flat,
        cond_jaxpr=cond_jaxpr,
        body_jaxpr=body_jaxpr,
        cond_nconsts=len(cond_consts),
        body_nconsts=len(body_consts),
    )
    return tree_util.tree_unflatten(init_tree, outs)


def _static_int(x):
    if isinstance(x, Tracer):
        try:
            value = x.to_concrete_value()
        except Exception:
            return None
        return None if value is None else int(np.asarray(value))
    if isinstance(x, (int, np.integer)) or (
        hasattr(x, "shape") and not x.shape and dtypes.issubdtype(np.asarray(x).dtype, np.integer)
    ):
        return int(np.asarray(x))
    return None


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``: a ``scan`` when
    the bounds are concrete (so it can be reverse-differentiated), else a ``while``."""
    # A symbolic bound (shape polymorphism) is a value computed in the program.
    lower, upper = (dim_as_value(v) if is_symbolic_dim(v) else v for v in (lower, upper))
    lo, hi = _static_int(lower), _static_int(upper)
    lower_dtype = bodies.abstractify(lower).dtype
    upper_dtype = bodies.abstractify(upper).dtype
    dtype = np.result_type(lower_dtype, upper_dtype) if lower_dtype != upper_dtype else lower_dtype
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(
            f"lower and upper arguments to fori_loop must have integer dtype, got {dtype}"
        )
    dtype = dtypes.canonicalize_dtype(dtype)
    if lo is not None and hi is not None:
        if unroll is None:
            unroll = 1

        def scanned(loop_carry, _):
            i, x = loop_carry
            return (i + np.array(1, dtype), body_fun(i, x)), None

        length = max(hi - lo, 0)
        (_, result), _ = scan(
            scanned, (np.array(lo, dtype), init_val), None, length=length, unroll=unroll
        )
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(
            "Can only use `unroll` in `fori_loop` if the loop bounds are statically known."
        )

    def cond(loop_carry):
        i, upper_, _ = loop_carry

        return lt(i, upper_)

    def body(loop_carry):
        i, upper_, x = loop_carry
        return (i + np.array(1, dtype), upper_, body_fun(i, x))

    if lower_dtype != dtype or not isinstance(lower, Tracer):
        lower = convert_element_type(lower, dtype)
    if upper_dtype != dtype:
        upper = convert_element_type(upper, dtype)
    _, _, result = while_loop(cond, body, (lower, upper, init_val))
    return result


# ---------------------------------------------------------------- rules


def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    return list(body_jaxpr.out_avals)


def _while_lowering(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # Tokens of ordered effects are carried after the loop state.
    if ctx.ordered_effects(cond_jaxpr):
        return _lower_with_effectful_cond(ctx, args, cond_jaxpr, body_jaxpr, cond_nconsts,
                                          body_nconsts)  # fmt: skip
    effects = ctx.ordered_effects(body_jaxpr)
    n = len(args)
    types = ctx.ir_types(ctx.avals_in) + [hlo.TokenType.get()] * len(effects)
    loop = hlo.WhileOp(types, [*args, *ctx.tokens(effects)])
    nc, nb = cond_nconsts, body_nconsts
    cond_block = loop.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        vals = list(cond_block.arguments)
        (pred,) = lower_jaxpr_body(ctx.module_context, cond_jaxpr.jaxpr, cond_jaxpr.consts,
                                   vals[:nc] + vals[nc + nb : n])  # fmt: skip
        hlo.return_([pred])
    body_block = loop.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        vals = list(body_block.arguments)
        ctx.set_tokens(effects, vals[n:])
        outs = lower_jaxpr_body(ctx.module_context, body_jaxpr.jaxpr, body_jaxpr.consts,
                                vals[nc:n])  # fmt: skip
        hlo.return_([*vals[: nc + nb], *outs, *ctx.tokens(effects)])
    results = list(loop.results)
    ctx.set_tokens(effects, results[n:])
    return results[nc + nb : n]


def _lower_with_effectful_cond(ctx, args, cond_jaxpr, body_jaxpr, nc, nb):
    """A condition with ordered effects cannot hand its tokens on from the while's
    condition region, so (as JAX does) the predicate is computed before the loop and
    again at the end of each body, and carried first; the condition region only reads
    it."""
    effects = ctx.ordered_effects(cond_jaxpr, body_jaxpr)
    mctx, n = ctx.module_context, len(args)

    def predicate(consts, carry):
        (pred,) = lower_jaxpr_body(mctx, cond_jaxpr.jaxpr, cond_jaxpr.consts, [*consts, *carry])
        return pred

    pred = predicate(args[:nc], args[nc + nb :])
    types = [pred.type, *ctx.ir_types(ctx.avals_in), *[hlo.TokenType.get()] * len(effects)]
    loop = hlo.WhileOp(types, [pred, *args, *ctx.tokens(effects)])
    cond_block = loop.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        hlo.return_([cond_block.arguments[0]])
    body_block = loop.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        vals = list(body_block.arguments)[1:]
        ctx.set_tokens(effects, vals[n:])
        outs = lower_jaxpr_body(mctx, body_jaxpr.jaxpr, body_jaxpr.consts, vals[nc:n])
        pred = predicate(vals[:nc], outs)
        hlo.return_([pred, *vals[: nc + nb], *outs, *ctx.tokens(effects)])
    results = list(loop.results)[1:]
    ctx.set_tokens(effects, results[n:])
    return results[nc + nb : n]


def _bind_while(cond_consts, body_consts, carry, cond_jaxpr, body_jaxpr):
    return while_p.bind(
        *cond_consts, *body_consts, *carry,
        cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
        cond_nconsts=len(cond_consts), body_nconsts=len(body_consts),
    )  # fmt: skip


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    cc, bc, carry = primals[:nc], primals[nc : nc + nb], primals[nc + nb :]
    bc_t, carry_t = tangents[nc : nc + nb], tangents[nc + nb :]
    bc_nz = [type(t) is not ad.Zero for t in bc_t]
    carry_nz = [type(t) is not ad.Zero for t in carry_t]
    while True:
        out_nz = bodies.jvp_out_nonzero(body_jaxpr, bc_nz + carry_nz)
        new = list(map(operator.or_, carry_nz, out_nz))
        if new == carry_nz:
            break
        carry_nz = new
    # A tangent reference among the body's constants is written by the body's JVP.
    ref_nz = any(
        nz and type(a) is AbstractRef
        for a, nz in zip(body_jaxpr.in_avals[: len(bc)], bc_nz, strict=True)
    )
    if not any(carry_nz) and not ref_nz:
        outs = _bind_while(cc, bc, carry, cond_jaxpr, body_jaxpr)
        return outs, [ad.Zero(ad.tangent_aval(a)) for a in body_jaxpr.out_avals]
    jvp, _ = bodies.jvp_jaxpr_forced(body_jaxpr, bc_nz + carry_nz, carry_nz)
    n_bc, n_carry = len(bc), len(carry)
    n_bct, n_ct = sum(bc_nz), sum(carry_nz)
    in_order = (
        list(range(n_bc)) + list(range(n_bc + n_carry, n_bc + n_carry + n_bct))
        + list(range(n_bc, n_bc + n_carry))
        + list(range(n_bc + n_carry + n_bct, n_bc + n_carry + n_bct + n_ct))
    )  # fmt: skip
    j = jvp.jaxpr
    jvp = ClosedJaxpr(j.replace(invars=[j.invars[i] for i in in_order]), jvp.consts)
    t_avals = [
        ad.tangent_aval(a) for a, nz in zip(body_jaxpr.out_avals, carry_nz, strict=True) if nz
    ]
    cond_aug = bodies.with_leading_inputs(cond_jaxpr, [], t_avals)
    carry_tangents = [
        ad.instantiate_zeros(t) for t, nz in zip(carry_t, carry_nz, strict=True) if nz
    ]
    outs = _bind_while(
        cc, [*bc, *[t for t in bc_t if type(t) is not ad.Zero]],
        [*carry, *carry_tangents], cond_aug, jvp,
    )  # fmt: skip
    primals_out, it = outs[:n_carry], iter(outs[n_carry:])
    tangents_out = [
        next(it) if nz else ad.Zero(ad.tangent_aval(a))
        for nz, a in zip(carry_nz, body_jaxpr.out_avals, strict=True)
    ]
    return primals_out, tangents_out


def _while_partial_eval(trace, args, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                  cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)  # fmt: skip
    nc, nb = cond_nconsts, body_nconsts
    uk = [trace.is_unknown(x) for x in args]
    cc_uk, bc_uk, carry_uk = uk[:nc], uk[nc : nc + nb], uk[nc + nb :]
    while True:
        out_uk = bodies.out_unknown_of(body_jaxpr, bc_uk + carry_uk)
        new = list(map(operator.or_, carry_uk, out_uk))
        if new == carry_uk:
            break
        carry_uk = new
    cond_uk = any(cc_uk) or any(bodies.out_unknown_of(cond_jaxpr, cc_uk + carry_uk))
    if cond_uk or all(carry_uk):
        return trace.staging.process_primitive(while_p, args, params)
    # Known carries: a loop of the body's known part, run now.
    known_body, _, _, _ = bodies.partial_eval_forced(body_jaxpr, bc_uk + carry_uk, carry_uk)
    n_known = carry_uk.count(False)
    kj = known_body.jaxpr
    known_body = ClosedJaxpr(kj.replace(outvars=kj.outvars[:n_known]), known_body.consts)
    cond_known = _drop_inputs(cond_jaxpr, cc_uk + carry_uk)
    cc, bc, carry = args[:nc], args[nc : nc + nb], args[nc + nb :]
    # The staged loop runs the whole loop again: on copies of the known references
    # made from their values before the known loop writes them.
    known_refs = [
        i for i, (x, u) in enumerate(zip(args, uk, strict=True))
        if not u and type(bodies.abstractify(x)) is AbstractRef
    ]  # fmt: skip
    with set_current_trace(trace.parent):
        initial = [get_p.bind(args[i], indexer=None) for i in known_refs]
        k_outs = _bind_while(
            cc, [x for x, u in zip(bc, bc_uk, strict=True) if not u],
            [x for x, u in zip(carry, carry_uk, strict=True) if not u],
            cond_known, known_body,
        )  # fmt: skip
    staged_args = list(args)
    for i, value in zip(known_refs, initial, strict=True):
        aval = bodies.abstractify(args[i])
        staged_args[i] = trace.staging.process_primitive(
            new_ref_p, [value], dict(memory_space=aval.memory_space, kind=aval.kind)
        )
    u_outs = trace.staging.process_primitive(while_p, staged_args, params)
    k_it = iter(k_outs)
    return [uo if u else next(k_it) for uo, u in zip(u_outs, carry_uk, strict=True)]


def _drop_inputs(closed, drop):
    j = closed.jaxpr
    return ClosedJaxpr(
        j.replace(invars=[v for v, d in zip(j.invars, drop, strict=True) if not d]), closed.consts
    )


while_p.def_partial_eval(_while_partial_eval)


def _while_transpose(cts, *args, **params):
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
        "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
        "static start/stop."
    )


def _while_batching(axis_data, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nm = batching.not_mapped
    nc, nb = cond_nconsts, body_nconsts
    cc_d, bc_d, carry_d = dims[:nc], dims[nc : nc + nb], dims[nc + nb :]
    cc_b = [d is not nm for d in cc_d]
    bc_b = [d is not nm for d in bc_d]
    carry_b = [d is not nm for d in carry_d]
    n = len(carry_b)

    def dims_of(flags):
        return [0 if b else nm for b in flags]

    while True:
        _, out_d = bodies.batch_jaxpr_forced(
            body_jaxpr, axis_data, dims_of(bc_b + carry_b), [None] * n
        )
        new = [a or d is not nm for a, d in zip(carry_b, out_d, strict=True)]
        _, pred_d = bodies.batch_jaxpr_forced(cond_jaxpr, axis_data, dims_of(cc_b + new), [None])
        if pred_d[0] is not nm:
            new = [True] * n
        if new == carry_b:
            break
        carry_b = new
    pred_batched = pred_d[0] is not nm
    cc, bc, carry = vals[:nc], vals[nc : nc + nb], vals[nc + nb :]
    cc = [batching.moveaxis(x, d, 0) if d is not nm else x for x, d in zip(cc, cc_d, strict=True)]
    bc = [batching.moveaxis(x, d, 0) if d is not nm else x for x, d in zip(bc, bc_d, strict=True)]
    carry = [
        batching.matchaxis(axis_data, d, 0, x) if b else x
        for x, d, b in zip(carry, carry_d, carry_b, strict=True)
    ]
    body_b, _ = bodies.batch_jaxpr_forced(
        body_jaxpr, axis_data, dims_of(bc_b + carry_b), dims_of(carry_b)
    )
    cond_b, _ = bodies.batch_jaxpr_forced(cond_jaxpr, axis_data, dims_of(cc_b + carry_b), [None])
    if not pred_batched:
        outs = _bind_while(cc, bc, carry, cond_b, body_b)
        return outs, dims_of(carry_b)

    n_cc = len(cc)

    def any_true(pred):
        return reduce_or(pred, (0,))

    def new_cond(*xs):
        (pred,) = bodies.jaxpr_fun(cond_b)(*xs)
        return [any_true(pred)]

    def new_body(*xs):
        ccs, bcs, cs = xs[:n_cc], xs[n_cc : n_cc + len(bc)], xs[n_cc + len(bc) :]
        (pred,) = bodies.jaxpr_fun(cond_b)(*ccs, *cs)
        stepped = bodies.jaxpr_fun(body_b)(*bcs, *cs)
        outs = []
        for new, old in zip(stepped, cs, strict=True):
            which = broadcast_in_dim(pred, new.shape, (0,)) if len(new.shape) > 1 else pred
            outs.append(select_n(which, old, new))
        return outs

    carry_avals = [bodies.abstractify(x) for x in carry]
    cc_avals = [bodies.abstractify(x) for x in cc]
    all_consts = [*cc, *bc]
    cond2, _ = trace_to_jaxpr(new_cond, cc_avals + carry_avals, "while cond")
    body2, _ = trace_to_jaxpr(
        new_body, [bodies.abstractify(x) for x in all_consts] + carry_avals, "while body"
    )
    outs = _bind_while(cc, all_consts, carry, cond2, body2)
    return outs, [0] * n


while_p.def_abstract_eval(_while_abstract_eval)
while_p.def_lowering(_while_lowering)
def_standard_impl(while_p)
while_p.def_jvp(_while_jvp)
while_p.def_transpose(_while_transpose)
accept_ref_cotangents(while_p)  # its transpose gives JAX's error for any operands
batching.batching_rules[while_p] = _while_batching
del Var


# ---------------------------------------------------------------- discharge


def _while_discharge(in_avals, out_avals, *args, cond_jaxpr, body_jaxpr, cond_nconsts,
                     body_nconsts):  # fmt: skip
    """References among the constants (of the condition or the body, one reference
    possibly in both) become leading carries of a loop of the discharged functions."""
    nc, nb = cond_nconsts, body_nconsts
    cond_consts, body_consts, carry = args[:nc], args[nc : nc + nb], args[nc + nb :]
    # The distinct references, by the identity of the array each holds now.
    held: list = []
    where: dict[int, int] = {}
    for i in range(nc + nb):
        if bodies.is_ref(in_avals[i]):
            key = id(args[i])
            if key not in where:
                where[key] = len(held)
                held.append(i)
    n_refs = len(held)

    def slot(i):
        return where[id(args[i])]

    cond_run = bodies.discharged_fun(cond_jaxpr)
    body_run = bodies.discharged_fun(body_jaxpr)
    n_carry = len(carry)

    def with_refs(consts, first, refs):
        return [refs[slot(first + k)] if bodies.is_ref(in_avals[first + k]) else c
                for k, c in enumerate(consts)]  # fmt: skip

    def new_cond(*flat):
        consts, refs, c = flat[:nc], flat[nc : nc + n_refs], flat[nc + n_refs :]
        outs = cond_run(*with_refs(consts, 0, refs), *c)
        return outs[:1]

    def new_body(*flat):
        consts, refs, c = flat[:nb], flat[nb : nb + n_refs], flat[nb + n_refs :]
        outs = body_run(*with_refs(consts, nc, refs), *c)
        finals = list(refs)
        ref_positions = [k for k in range(nb) if bodies.is_ref(in_avals[nc + k])]
        for k, final in zip(ref_positions, outs[n_carry:], strict=True):
            finals[slot(nc + k)] = final
        return [*finals, *outs[:n_carry]]

    value_avals = [bodies.value_type(in_avals[i]) for i in held]
    carry_avals = [bodies.value_type(a) for a in in_avals[nc + nb :]]
    # A reference constant stays an operand (its array, unused) so positions hold.
    const_avals = [bodies.value_type(a) for a in in_avals[: nc + nb]]
    cond_avals = [*const_avals[:nc], *value_avals, *carry_avals]
    body_avals = [*const_avals[nc:], *value_avals, *carry_avals]
    new_cond_jaxpr, cc = bodies.retrace(new_cond, cond_avals, "discharged while cond")
    new_body_jaxpr, bc = bodies.retrace(new_body, body_avals, "discharged while body")
    outs = while_p.bind(
        *cc, *cond_consts, *bc, *body_consts, *[args[i] for i in held], *carry,
        cond_jaxpr=new_cond_jaxpr, body_jaxpr=new_body_jaxpr,
        cond_nconsts=len(cc) + nc, body_nconsts=len(bc) + nb,
    )  # fmt: skip
    finals = outs[:n_refs]
    new_values = [finals[slot(i)] if bodies.is_ref(a) else None for i, a in enumerate(in_avals)]
    return new_values, outs[n_refs:]


while_p.def_discharge(_while_discharge)
