"""``cond`` and ``switch``: the ``cond`` primitive, choosing one of several Jaxprs by an
int32 index, with all its rules.

``cond_p`` takes ``branches`` (a tuple of ``ClosedJaxpr`` without constants, each from
the operands to the outputs) and operands ``index, *ops``. It lowers to
``stablehlo.case``. Its JVP is a ``cond`` of the branches' JVPs; partial evaluation
runs a ``cond`` of the branches' known parts now (each also returning the residuals
of every branch: its own, zeros for the others') and stages a ``cond`` of the unknown
parts; its transpose is a ``cond`` of the transposed branches. Under ``vmap`` a batched
index turns the ``cond`` into every branch followed by ``select_n``. The cond of
``platform_dependent`` also has ``branches_platforms`` (the platforms of each branch,
None for the default): lowered, it keeps only the branches of the platforms lowered for. Dead-code
elimination drops the outputs nothing reads and the operands no branch then needs.
"""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters import (
    RefCotangent,
    Tracer,
    UndefinedPrimal,
    accept_ref_cotangents,
    ad,
    backward_pass,
    batching,
    def_standard_impl,
    describe_function,
    is_undefined_primal,
    lower_jaxpr_body,
    partial_eval,
    set_current_trace,
    trace_to_jaxpr,
)
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import (
    ClosedJaxpr,
    Primitive,
    ShapedArray,
    Var,
    dtypes,
    mismatch_extra,
    tree_util,
    vma_of,
)
from lamina.lax.base.primitives import broadcast_in_dim, clamp, convert_element_type, ne, select_n
from lamina.lax.control_flow import bodies

__all__ = ["cond", "cond_p", "switch"]

cond_p = Primitive("cond")
cond_p.multiple_results = True


# ---------------------------------------------------------------- the API


def _trace_branches(funs, ops):
    flat_ops, in_tree = tree_util.tree_flatten(ops)
    avals = [bodies.abstractify(x) for x in flat_ops]
    traced = [bodies.trace_function(f, in_tree, avals) for f in funs]
    return flat_ops, avals, traced


def _common_consts(traced):
    """Each branch taking every branch's constants (each value once, in branch order),
    then the operands, as JAX's ``cond`` does."""
    slot, avals = {}, []
    for jaxpr, cs, _ in traced:
        for c, v in zip(cs, jaxpr.jaxpr.invars, strict=False):
            if id(c) not in slot:
                slot[id(c)] = len(avals)
                avals.append(v.aval)
    branches = []
    for jaxpr, cs, _ in traced:
        invars = [Var(a) for a in avals]
        for c, v in zip(cs, jaxpr.jaxpr.invars, strict=False):
            invars[slot[id(c)]] = v
        invars += jaxpr.jaxpr.invars[len(cs) :]
        branches.append(ClosedJaxpr(jaxpr.jaxpr.replace(invars=invars), []))
    consts = list({id(c): c for _, cs, _ in traced for c in cs}.values())
    return branches, consts


def _check_branch_outputs(names, funs, traced):
    first_tree = traced[0][2]
    for name, (jaxpr, _, tree) in zip(names[1:], traced[1:], strict=True):
        if tree != first_tree:
            raise TypeError(
                f"{_what(names)[:-2]} outputs must have the same pytree structure, but they "
                f"differ:\n\n{_branch_names(names, funs)}\n\n"
                f"{names[0]} output is {_tree_kind(first_tree)} but {name} output is "
                f"{_tree_kind(tree)}, so their Python types differ.\n\n"
                f"Revise {_revise(names)} so that they have the same pytree structure."
            )
        for a, b in zip(traced[0][0].out_avals, jaxpr.out_avals, strict=True):
            if not bodies.same_type(a, b):
                raise TypeError(
                    f"{_what(names)} must have equal output types but they differ.\n\n"
                    f"{_branch_names(names, funs)}\n\n"
                    f"The output of {names[0]} has type {a.str_short()} but the "
                    f"corresponding output of {name} has type {b.str_short()}"
                    f"{mismatch_extra(a, b)}.\n\n{_vma_hint(names, name, a, b)}"
                    f"Revise {_revise(names)} so that all output types match."
                )


def _vma_hint(names, name, a, b) -> str:
    """JAX's suggestion where the branches' varying manual axes differ (the axes it
    names are those of the output it points at, as JAX 0.10.2 prints them)."""
    for target, x, y in ((names[0], b, a), (name, a, b)):
        if vma_of(y) - vma_of(x):
            return bodies.pvary_hint(vma_of(x) - vma_of(y), f" to the output of {target}")
    return ""


def _what(names):
    return "cond branches" if names[0] == "true_fun" else "switch branches"


def _revise(names):
    return " and/or ".join(names) if len(names) == 2 else "the branches"


def _branch_names(names, funs):
    return "\n".join(f"{n} is {describe_function(f)}" for n, f in zip(names, funs, strict=True))


def _tree_kind(tree) -> str:
    if tree.num_leaves == 1 and str(tree) in ("PyTreeDef(*)", "*"):
        return "a pytree leaf"
    text = str(tree).removeprefix("PyTreeDef(")
    for opener, name in (("(", "tuple"), ("[", "list"), ("{", "dict"), ("None", "NoneType")):
        if text.startswith(opener):
            return f"a <class '{name}'>"
    return "a pytree node"


def _first_branch_avals(branches):
    """The output avals: the first branch's, weak types included (the branches agree
    but for weak types), as JAX's rule has them."""
    return list(branches[0].out_avals)


def _bind_cond(index, branches, consts, flat_ops, out_tree):
    outs = cond_p.bind(index, *consts, *flat_ops, branches=tuple(branches))
    return tree_util.tree_unflatten(out_tree, outs)


class _NoOperand:
    def __repr__(self):
        return "<object>"


_NO_OPERAND = _NoOperand()


def _operands(operands, operand):
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(
            "if `operand` is passed, positional `operands` should not be passed, but got "
            f"operand={operand}, operands={operands}"
        )
    return (operand,)


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as one
    ``cond`` equation (both branches traced; only one runs)."""
    operands = _operands(operands, operand)
    if not callable(true_fun) or not callable(false_fun):
        raise TypeError("true_fun and false_fun arguments should be callable.")
    pred_aval = bodies.abstractify(pred)
    if pred_aval.shape:
        raise TypeError(
            f"Pred must be a scalar, got {pred if isinstance(pred, Tracer) else np.asarray(pred)}"
            f" of shape {pred_aval.shape}."
        )
    if pred_aval.dtype != dtypes.bool_ and not dtypes.issubdtype(pred_aval.dtype, np.number):
        raise TypeError(f"Pred type must be either boolean or number, got {pred_aval.dtype}.")
    funs = (true_fun, false_fun)
    flat_ops, _, traced = _trace_branches(funs, operands)
    _check_branch_outputs(["true_fun", "false_fun"], funs, traced)
    branches, consts = _common_consts(traced)

    if pred_aval.dtype != dtypes.bool_:
        pred = ne(pred, np.zeros((), pred_aval.dtype))
    index = convert_element_type(pred, np.int32)
    return _bind_cond(index, branches[::-1], consts, flat_ops, traced[0][2])


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """``branches[clamp(0, index, len(branches) - 1)](*operands)`` as one ``cond``."""
    operands = _operands(operands, operand)
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if not all(callable(b) for b in branches):
        raise TypeError("branches argument should be a sequence of callables.")
    index_aval = bodies.abstractify(index)
    if index_aval.shape:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {index_aval.shape}.")
    if not dtypes.issubdtype(index_aval.dtype, np.integer):
        raise TypeError(
            f"Index type must be an integer, got {index} of type {index_aval.dtype.name}."
        )

    index = convert_element_type(index, np.int32)
    index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    if len(branches) == 1:
        return branches[0](*operands)
    flat_ops, _, traced = _trace_branches(branches, operands)
    for i in range(1, len(branches)):  # each against the first, as JAX names them
        pair = [branches[0], branches[i]]
        _check_branch_outputs(["branch 0", f"branch{i}"], pair, [traced[0], traced[i]])
    jaxprs, consts = _common_consts(traced)
    return _bind_cond(index, jaxprs, consts, flat_ops, traced[0][2])


def cond_of_platforms(index, branches, operands, branches_platforms):
    """``branches[index](*operands)`` as the ``cond`` of ``platform_dependent``, whose
    ``index`` is a ``platform_index`` and ``branches_platforms`` the platforms of each
    branch (None for the default)."""
    flat_ops, _, traced = _trace_branches(branches, operands)
    names = [f"branch {i}" for i in range(len(branches))]
    _check_branch_outputs(names, branches, traced)
    jaxprs, consts = _common_consts(traced)
    outs = cond_p.bind(
        index, *consts, *flat_ops, branches=tuple(jaxprs), branches_platforms=branches_platforms
    )
    return tree_util.tree_unflatten(traced[0][2], outs)


# ---------------------------------------------------------------- rules


def _cond_abstract_eval(index, *ops, branches, **_):
    if index.shape or index.dtype != np.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    for b in branches:
        if len(b.in_avals) != len(ops):
            raise TypeError(f"cond branch takes {len(b.in_avals)} operands, got {len(ops)}")
    return _first_branch_avals(branches)


def _cond_lowering(ctx, index, *ops, branches, branches_platforms=None):
    if branches_platforms is not None:
        index, branches = _kept_branches(ctx, index, branches, branches_platforms)
    elif len(branches) == 1:
        b = branches[0]
        return lower_jaxpr_body(ctx.module_context, b.jaxpr, b.consts, list(ops))
    # Tokens of ordered effects enter each branch and leave after the results.
    effects = ctx.ordered_effects(*branches)
    tokens_in = ctx.tokens(effects)
    types = ctx.ir_types(ctx.avals_out) + [hlo.TokenType.get()] * len(effects)
    case = hlo.CaseOp(types, index, len(branches))
    for region, b in zip(case.regions, branches, strict=True):
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            ctx.set_tokens(effects, tokens_in)
            outs = lower_jaxpr_body(ctx.module_context, b.jaxpr, b.consts, list(ops))
            outs = [
                ctx.convert(v, a, want) if a.dtype != want.dtype else v
                for v, a, want in zip(outs, b.out_avals, ctx.avals_out, strict=True)
            ]
            hlo.return_([*outs, *ctx.tokens(effects)])
    results = list(case.results)
    ctx.set_tokens(effects, results[len(ctx.avals_out) :])
    return results[: len(ctx.avals_out)]


def _kept_branches(ctx, index, branches, branches_platforms):
    """For a ``platform_dependent`` cond: the branches of the platforms lowered for (in
    their order) and the index into them, mapped from ``index`` by a ``case``."""
    kept, new_index = [], {}
    for p in ctx.platforms:
        for i, ps in enumerate(branches_platforms):
            if ps is None or p in ps:
                if i not in new_index:
                    new_index[i] = len(kept)
                    kept.append(branches[i])
                break
    i32 = ShapedArray((), np.dtype(np.int32))
    case = hlo.CaseOp([ctx.ir_type(i32)], index, len(branches))
    for i, region in enumerate(case.regions):
        with ir.InsertionPoint(region.blocks.append()):
            hlo.return_([ctx.constant(np.int32(new_index.get(i, 0)), i32)])
    return case.result, kept


def _cond_jvp(primals, tangents, *, branches, **params):
    index, ops = primals[0], primals[1:]
    op_tangents = tangents[1:]
    nonzero = [type(t) is not ad.Zero for t in op_tangents]
    out_nz = [False] * len(branches[0].out_avals)
    for b in branches:
        out_nz = list(map(operator.or_, out_nz, bodies.jvp_out_nonzero(b, nonzero)))
    jvps = [bodies.jvp_jaxpr_forced(b, nonzero, out_nz)[0] for b in branches]
    nz_tangents = [t for t in op_tangents if type(t) is not ad.Zero]
    outs = cond_p.bind(index, *ops, *nz_tangents, branches=tuple(jvps), **params)
    n = len(branches[0].out_avals)
    primals_out, it = outs[:n], iter(outs[n:])
    tangents_out = [
        next(it) if nz else ad.Zero(ad.tangent_aval(a))
        for nz, a in zip(out_nz, branches[0].out_avals, strict=True)
    ]
    return primals_out, tangents_out


def _cond_partial_eval(trace, args, *, branches, **params):
    index, ops = args[0], args[1:]
    if trace.is_unknown(index):
        return trace.staging.process_primitive(cond_p, args, dict(branches=branches, **params))
    unknown = [trace.is_unknown(x) for x in ops]
    n_out = len(branches[0].out_avals)
    out_uk = [False] * n_out
    for b in branches:
        out_uk = list(map(operator.or_, out_uk, bodies.out_unknown_of(b, unknown)))
    splits = [bodies.partial_eval_forced(b, unknown, out_uk) for b in branches]
    all_res = [a for s in splits for a in s[3]]
    knowns, stageds = [], []
    offset = 0
    for known, staged, _, res_avals in splits:
        known = _with_other_residuals(known, all_res, offset, len(res_avals), n_out - sum(out_uk))
        stageds.append(_taking_all_residuals(staged, all_res, offset, len(res_avals)))
        knowns.append(known)
        offset += len(res_avals)
    known_ops = [x for x, u in zip(ops, unknown, strict=True) if not u]
    with set_current_trace(trace.parent):
        known_res = cond_p.bind(index, *known_ops, branches=tuple(knowns), **params)
    n_known = n_out - sum(out_uk)
    known_outs, residuals = known_res[:n_known], known_res[n_known:]
    unknown_ops = [x for x, u in zip(ops, unknown, strict=True) if u]
    unknown_outs = trace.staging.process_primitive(
        cond_p, [index, *residuals, *unknown_ops], dict(branches=tuple(stageds), **params)
    )
    k_it, u_it = iter(known_outs), iter(unknown_outs)
    return [next(u_it) if u else next(k_it) for u in out_uk]


def _with_other_residuals(known, all_res, offset, count, n_known):
    """``known`` returning zeros for the other branches' residuals around its own."""

    def run(*args):
        outs = bodies.jaxpr_fun(known)(*args)
        mine = iter(outs[n_known:])
        res = [
            next(mine) if offset <= i < offset + count else ad.zeros_like_aval(a)
            for i, a in enumerate(all_res)
        ]
        return [*outs[:n_known], *res]

    closed, _ = trace_to_jaxpr(run, list(known.in_avals), "known")
    return closed


def _taking_all_residuals(staged, all_res, offset, count):
    before, after = all_res[:offset], all_res[offset + count :]
    jaxpr = staged.jaxpr
    invars = (
        [Var(a) for a in before]
        + jaxpr.invars[:count]
        + [Var(a) for a in after]
        + jaxpr.invars[count:]
    )
    return ClosedJaxpr(jaxpr.replace(invars=invars), staged.consts)


cond_p.def_partial_eval(_cond_partial_eval)


def _cond_dce(used_outputs, eqn):
    branches = eqn.params["branches"]
    if eqn.effects or any(b.jaxpr.effects for b in branches):
        return [True] * len(eqn.invars), eqn
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    used_ops = [False] * (len(eqn.invars) - 1)
    for b in branches:
        used_ops = map(operator.or_, used_ops, partial_eval.dce_jaxpr(b.jaxpr, used_outputs)[1])
    used_ops = list(used_ops)
    inners = [partial_eval.dce_jaxpr(b.jaxpr, used_outputs, used_ops)[0] for b in branches]
    used_inputs = [True, *used_ops]
    if all(a is b.jaxpr for a, b in zip(inners, branches, strict=True)):
        return used_inputs, eqn
    new_branches = tuple(ClosedJaxpr(a, b.consts) for a, b in zip(inners, branches, strict=True))
    new_eqn = eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params=dict(eqn.params, branches=new_branches),
    )
    return used_inputs, new_eqn


partial_eval.dce_rules[cond_p] = _cond_dce


def _cond_transpose(cts, index, *ops, branches, **params):
    # A tangent reference operand comes as its RefCotangent: each transposed branch
    # takes the cotangent reference and adds into it in place.
    undefined = [is_undefined_primal(x) for x in ops]
    is_ref_ct = [type(x) is RefCotangent for x in ops]
    res = [
        x.instantiate() if r else x for x, u, r in zip(ops, undefined, is_ref_ct, strict=True)
        if not u
    ]  # fmt: skip
    res_avals = [bodies.abstractify(x) for x in res]
    ct_avals = [ad.tangent_aval(a) for a in branches[0].out_avals]
    transposed = []
    for b in branches:

        def run(*args, b=b):
            res_it, cts_in = iter(args[: len(res)]), args[len(res) :]
            primals = [
                UndefinedPrimal(x.aval) if u else RefCotangent(x.aval, next(res_it)) if r
                else next(res_it)
                for x, u, r in zip(ops, undefined, is_ref_ct, strict=True)
            ]  # fmt: skip
            outs = backward_pass(b.jaxpr, b.consts, primals, list(cts_in))
            outs = [o for o, u in zip(outs, undefined, strict=True) if u]
            return [ad.instantiate_zeros(o) if type(o) is ad.Zero else o for o in outs]

        closed, _ = trace_to_jaxpr(run, res_avals + ct_avals, "transpose")
        transposed.append(closed)
    cts = [ad.instantiate_zeros(c) for c in cts]
    outs = iter(cond_p.bind(index, *res, *cts, branches=tuple(transposed), **params))
    return [None] + [next(outs) if u else None for u in undefined]


def _cond_batching(axis_data, vals, dims, *, branches, **params):
    index, ops = vals[0], vals[1:]
    index_dim, op_dims = dims[0], dims[1:]
    if index_dim is not batching.not_mapped:
        index = batching.moveaxis(index, index_dim, 0)
        outs = []
        for b in branches:
            bj, _ = bodies.batch_jaxpr_forced(b, axis_data, op_dims, [0] * len(b.out_avals))
            outs.append(bodies.jaxpr_fun(bj)(*ops))
        results = []
        for cases in zip(*outs, strict=True):
            shape = cases[0].shape if hasattr(cases[0], "shape") else ()
            which = broadcast_in_dim(index, shape, (0,)) if len(shape) > 1 else index
            results.append(select_n(which, *cases))
        return results, [0] * len(results)
    n_out = len(branches[0].out_avals)
    batched = [bodies.batch_jaxpr_forced(b, axis_data, op_dims, [0] * n_out)[0] for b in branches]
    outs = cond_p.bind(index, *ops, branches=tuple(batched), **params)
    return outs, [0] * n_out


cond_p.def_abstract_eval(_cond_abstract_eval)
cond_p.def_lowering(_cond_lowering)
def_standard_impl(cond_p)
cond_p.def_jvp(_cond_jvp)
cond_p.def_transpose(_cond_transpose)
accept_ref_cotangents(cond_p)
batching.batching_rules[cond_p] = _cond_batching


# ---------------------------------------------------------------- discharge


def _cond_discharge(in_avals, out_avals, index, *ops, branches, **params):
    """Each branch discharged, returning the final arrays of the references too."""
    op_avals = [bodies.value_type(a) for a in in_avals[1:]]
    new_branches, consts = [], []
    for branch in branches:
        jaxpr, c = bodies.retrace(bodies.discharged_fun(branch), op_avals, "discharged branch")
        new_branches.append(jaxpr)
        consts.append(c)
    # Branch constants become leading operands of every branch.
    all_avals = [bodies.abstractify(c) for cs in consts for c in cs]
    padded, offset = [], 0
    for jaxpr, cs in zip(new_branches, consts, strict=True):
        before = all_avals[:offset]
        after = all_avals[offset + len(cs) :]
        inner = jaxpr.jaxpr
        moved = jaxpr.replace(
            jaxpr=inner.replace(
                invars=[
                    *[Var(a) for a in before],
                    *inner.invars[: len(cs)],
                    *[Var(a) for a in after],
                    *inner.invars[len(cs) :],
                ]
            )
        )
        padded.append(moved)
        offset += len(cs)
    flat_consts = [c for cs in consts for c in cs]
    outs = cond_p.bind(index, *flat_consts, *ops, branches=tuple(padded), **params)
    n = len(out_avals)
    finals = iter(outs[n:])
    new_values = [None] + [next(finals) if bodies.is_ref(a) else None for a in in_avals[1:]]
    return new_values, outs[:n]


cond_p.def_discharge(_cond_discharge)
