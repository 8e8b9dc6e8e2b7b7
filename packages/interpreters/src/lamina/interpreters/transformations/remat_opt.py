"""``remat_opt``: the forward pass of a ``custom_vjp`` function kept whole under
rematerialisation (JAX's ``jax.custom_derivatives.remat_opt_p``, made by
``defvjp(..., optimize_remat=True)``).

Its operands are ``num_consts`` constants then the function's arguments; its outputs
are ``num_res`` residuals then the function's outputs, computed by ``fwd_jaxpr``.
``fun_jaxpr_thunk()`` gives ``(jaxpr, consts)`` of the plain function: when no
residual is used, dead-code elimination replaces the equation by a call of it, so a
recomputed forward pass does not compute residuals it throws away. Evaluated or
lowered, ``fwd_jaxpr`` is inlined. Differentiating twice is not supported (as in JAX).
"""

from __future__ import annotations

import functools

from lamina.interpreters.core.tangents import Zero, instantiate_zeros
from lamina.interpreters.core.tracing import shaped_abstractify
from lamina.interpreters.jaxprs.calls import eval_jaxpr, jit_p, jit_params
from lamina.interpreters.jaxprs.dce import dce_jaxpr, dce_rules
from lamina.interpreters.jaxprs.lowering import lower_jaxpr_body
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.interpreters.transformations import batching
from lamina.interpreters.transformations.ad import jvp
from lamina.ir import ClosedJaxpr, Primitive

__all__ = ["remat_opt_p"]

remat_opt_p = Primitive("remat_opt")
remat_opt_p.multiple_results = True


def _opened(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    jaxpr = closed.jaxpr
    opened = jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars])
    return ClosedJaxpr(opened, []), list(closed.consts)


def _remat_opt_impl(*args, fwd_jaxpr, **_):
    return eval_jaxpr(fwd_jaxpr.jaxpr, fwd_jaxpr.consts, *args)


def _remat_opt_abstract_eval(*_, fwd_jaxpr, **__):
    return list(fwd_jaxpr.out_avals)


def _remat_opt_lowering(ctx, *args, fwd_jaxpr, **_):
    return lower_jaxpr_body(ctx.module_context, fwd_jaxpr.jaxpr, fwd_jaxpr.consts, list(args))


def _jvp_of(closed: ClosedJaxpr, n_diff_consts: int, n_fixed: int):
    """A flat function: ``(fixed..., diff consts, their tangents, primals, tangents)``
    to ``(outputs, output tangents)`` of ``closed``, whose leading ``n_fixed`` inputs
    are not differentiated."""
    n_in = len(closed.in_avals)

    def fun(*args):
        fixed, rest = args[:n_fixed], args[n_fixed:]
        dc, dc_dot = rest[:n_diff_consts], rest[n_diff_consts : 2 * n_diff_consts]
        prim = rest[2 * n_diff_consts :]
        n_p = (len(prim)) // 2
        primals, tangents = prim[:n_p], prim[n_p:]
        assert n_fixed + n_diff_consts + n_p == n_in

        def call(*diff):
            return eval_jaxpr(closed.jaxpr, closed.consts, *fixed, *diff)

        outs, outs_dot = jvp(call, (*dc, *primals), (*dc_dot, *tangents))
        return [*outs, *(instantiate_zeros(t) for t in outs_dot)]

    return fun


def _remat_opt_jvp(primals, tangents, *, num_consts, num_res, fwd_jaxpr, fun_jaxpr_thunk):
    consts, args = list(primals[:num_consts]), list(primals[num_consts:])
    consts_dot, args_dot = tangents[:num_consts], tangents[num_consts:]
    fixed = [c for c, t in zip(consts, consts_dot, strict=True) if type(t) is Zero]
    diff = [c for c, t in zip(consts, consts_dot, strict=True) if type(t) is not Zero]
    diff_dot = [t for t in consts_dot if type(t) is not Zero]
    order = [type(t) is Zero for t in consts_dot]
    # The fwd Jaxpr with its constants reordered: fixed ones, then differentiated ones.
    inv = fwd_jaxpr.jaxpr.invars
    c_vars = inv[:num_consts]
    reordered = [v for v, z in zip(c_vars, order, strict=True) if z]
    reordered += [v for v, z in zip(c_vars, order, strict=True) if not z]
    fwd = ClosedJaxpr(
        fwd_jaxpr.jaxpr.replace(invars=[*reordered, *inv[num_consts:]]), fwd_jaxpr.consts
    )
    args_dot = [instantiate_zeros(t) for t in args_dot]
    operands = [*fixed, *diff, *diff_dot, *args, *args_dot]
    in_avals = [shaped_abstractify(x) for x in operands]
    jvp_closed, _ = trace_to_jaxpr(_jvp_of(fwd, len(diff), len(fixed)), in_avals, "remat_opt")
    # Outputs come as (res, outs, res_dot, outs_dot); put them as (res, res_dot, outs, outs_dot).
    j = jvp_closed.jaxpr
    n_out = len(fwd_jaxpr.out_avals)
    o = j.outvars
    outvars = [*o[:num_res], *o[n_out : n_out + num_res], *o[num_res:n_out], *o[n_out + num_res :]]
    opened, extra = _opened(ClosedJaxpr(j.replace(outvars=outvars), jvp_closed.consts))
    n_args = len(args)

    @functools.cache
    def fun_jvp_thunk():
        fun_jaxpr, fun_consts = fun_jaxpr_thunk()
        fun_closed = ClosedJaxpr(fun_jaxpr, fun_consts)
        avals = [shaped_abstractify(x) for x in [*args, *args_dot]]
        closed, _ = trace_to_jaxpr(_jvp_of(fun_closed, 0, 0), avals, "remat_opt")
        return closed.jaxpr, list(closed.consts)

    outs = remat_opt_p.bind(
        *extra,
        *operands,
        num_consts=len(extra) + len(operands) - 2 * n_args,
        num_res=2 * num_res,
        fwd_jaxpr=opened,
        fun_jaxpr_thunk=fun_jvp_thunk,
    )
    res, res_dot = outs[:num_res], outs[num_res : 2 * num_res]
    rest = outs[2 * num_res :]
    n_prim = n_out - num_res
    return [*res, *rest[:n_prim]], [*res_dot, *rest[n_prim:]]


def _remat_opt_transpose(cts, *args, **params):
    raise NotImplementedError("remat optimization for custom_vjp does not support higher-order AD")


def _remat_opt_batching(axis_data, vals, dims, *, num_consts, num_res, fwd_jaxpr, fun_jaxpr_thunk):
    vals = [
        batching.moveaxis(x, d, 0) if d is not batching.not_mapped else x
        for x, d in zip(vals, dims, strict=True)
    ]
    in_dims = [batching.not_mapped if d is batching.not_mapped else 0 for d in dims]
    batched, out_dims = batching.batch_jaxpr(fwd_jaxpr, axis_data, in_dims)
    opened, extra = _opened(batched)
    arg_dims = in_dims[num_consts:]

    @functools.cache
    def batched_fun_thunk():
        fun_jaxpr, fun_consts = fun_jaxpr_thunk()
        closed, _ = batching.batch_jaxpr(ClosedJaxpr(fun_jaxpr, fun_consts), axis_data, arg_dims)
        return closed.jaxpr, list(closed.consts)

    outs = remat_opt_p.bind(
        *extra,
        *vals,
        num_consts=num_consts + len(extra),
        num_res=num_res,
        fwd_jaxpr=opened,
        fun_jaxpr_thunk=batched_fun_thunk,
    )
    return outs, out_dims


def _remat_opt_dce(used_outputs, eqn):
    params = eqn.params
    num_consts, num_res = params["num_consts"], params["num_res"]
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    outvars = [v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u]
    if any(used_outputs[:num_res]):
        instantiate = [False] * num_consts + [True] * (len(eqn.invars) - num_consts)
        fwd = params["fwd_jaxpr"]
        inner, used_in = dce_jaxpr(fwd.jaxpr, used_outputs, instantiate=instantiate)
        new_params = dict(
            params,
            num_consts=sum(used_in[:num_consts]),
            num_res=sum(used_outputs[:num_res]),
            fwd_jaxpr=ClosedJaxpr(inner, fwd.consts),
        )
        invars = [a for a, u in zip(eqn.invars, used_in, strict=True) if u]
        return used_in, eqn.replace(invars=invars, outvars=outvars, params=new_params)
    fun_jaxpr, fun_consts = params["fun_jaxpr_thunk"]()
    inner, used_in = dce_jaxpr(fun_jaxpr, used_outputs[num_res:])
    closed = ClosedJaxpr(inner, fun_consts)
    invars = [a for a, u in zip(eqn.invars[num_consts:], used_in, strict=True) if u]
    new_eqn = eqn.replace(
        primitive=jit_p, invars=invars, outvars=outvars, params=jit_params(closed, "remat_opt")
    )
    return [False] * num_consts + list(used_in), new_eqn


remat_opt_p.def_impl(_remat_opt_impl)
remat_opt_p.def_abstract_eval(_remat_opt_abstract_eval)
remat_opt_p.def_lowering(_remat_opt_lowering)
remat_opt_p.def_jvp(_remat_opt_jvp)
remat_opt_p.def_transpose(_remat_opt_transpose)
remat_opt_p.def_batching(_remat_opt_batching)
dce_rules[remat_opt_p] = _remat_opt_dce
