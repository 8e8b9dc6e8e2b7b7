"""``linear_call``: a call of a function linear in some of its arguments, with a
user-given transpose (JAX's ``jax.custom_derivatives.linear_call``).

``linear_call(fun, fun_transpose, residual_args, linear_args)`` is
``fun(residual_args, linear_args)``; it binds ``linear_call_p`` with JAX 0.10.2's
params: ``callee`` (``fun``'s Jaxpr, its constants as leading operands),
``num_callee_consts``, ``num_res`` and ``transpose_thunk`` (a function giving the
transpose's Jaxpr and constants, traced on first use). Evaluated or lowered, the callee
is inlined. Its JVP is the same call on the linear tangents (the residuals must not be
differentiated); its transpose is a ``linear_call`` of ``fun_transpose`` on the
cotangents, whose own transpose is ``fun`` again. It has no batching rule (as in JAX).
"""

from __future__ import annotations

import functools

from lamina.interpreters.core.tangents import Zero, instantiate_zeros, tangent_aval
from lamina.interpreters.core.tracing import shaped_abstractify
from lamina.interpreters.jaxprs.calls import eval_jaxpr
from lamina.interpreters.jaxprs.lowering import lower_jaxpr_body
from lamina.interpreters.jaxprs.staging import describe_function, trace_to_jaxpr
from lamina.interpreters.transformations.reverse import is_undefined_primal
from lamina.ir import ClosedJaxpr, Primitive, tree_util

__all__ = ["linear_call", "linear_call_p"]

linear_call_p = Primitive("linear_call")
linear_call_p.multiple_results = True


def _trace_open(fun, in_tree, in_avals, debug):
    """``fun``'s Jaxpr (its constants turned into leading inputs), the constants and
    the output tree."""
    out_tree_box = []

    def flat_fun(*flat):
        out, out_tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, flat)))
        out_tree_box.append(out_tree)
        return out

    closed, _ = trace_to_jaxpr(flat_fun, in_avals, debug)
    jaxpr = closed.jaxpr
    opened = jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars])
    return ClosedJaxpr(opened, []), list(closed.consts), out_tree_box[0]


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """``fun(residual_args, linear_args)``, where ``fun`` is linear in
    ``linear_args``; its transpose (with respect to ``linear_args``) is
    ``fun_transpose(residual_args, cotangents)``."""
    res_flat, res_tree = tree_util.tree_flatten(residual_args)
    lin_flat, lin_tree = tree_util.tree_flatten(linear_args)
    in_tree = tree_util.treedef_tuple((res_tree, lin_tree))
    res_avals = [shaped_abstractify(x) for x in res_flat]
    lin_avals = [shaped_abstractify(x) for x in lin_flat]
    callee, consts, out_tree = _trace_open(
        fun, in_tree, [*res_avals, *lin_avals], f"{describe_function(fun)} for linear_call fun"
    )

    @functools.cache
    def transpose_thunk():
        t_tree = tree_util.treedef_tuple((res_tree, out_tree))
        debug = f"{describe_function(fun_transpose)} for linear_call fun_transpose"
        t_jaxpr, t_consts, t_out_tree = _trace_open(
            fun_transpose, t_tree, [*res_avals, *callee.out_avals], debug
        )
        if t_out_tree != lin_tree:
            raise TypeError(
                "transpose output pytree structure must match that of linear inputs, "
                f"got output structure {t_out_tree} and input structure {lin_tree}."
            )
        return t_jaxpr, t_consts

    out = linear_call_p.bind(
        *consts,
        *res_flat,
        *lin_flat,
        callee=callee,
        transpose_thunk=transpose_thunk,
        num_callee_consts=len(consts),
        num_res=len(res_flat),
    )
    return tree_util.tree_unflatten(out_tree, out)


def _linear_call_impl(*args, callee, **_):
    return eval_jaxpr(callee.jaxpr, callee.consts, *args)


def _linear_call_abstract_eval(*_, callee, **__):
    return list(callee.out_avals)


def _linear_call_lowering(ctx, *args, callee, **_):
    return lower_jaxpr_body(ctx.module_context, callee.jaxpr, [], list(args))


def _linear_call_jvp(primals, tangents, *, callee, num_callee_consts, num_res, **params):
    n_nonlinear = num_callee_consts + num_res
    if any(type(t) is not Zero for t in tangents[:n_nonlinear]):
        raise AssertionError(
            "linear_call: cannot differentiate with respect to the residual arguments "
            "(or the constants of fun); only the linear arguments may carry tangents"
        )
    params = dict(params, callee=callee, num_callee_consts=num_callee_consts, num_res=num_res)
    primals_out = linear_call_p.bind(*primals, **params)
    lin_tangents = tangents[n_nonlinear:]
    if all(type(t) is Zero for t in lin_tangents):
        return primals_out, [Zero(tangent_aval(a)) for a in callee.out_avals]
    nonlinear = list(primals[:n_nonlinear])
    tangents_out = linear_call_p.bind(
        *nonlinear, *[instantiate_zeros(t) for t in lin_tangents], **params
    )
    return primals_out, tangents_out


def _linear_call_transpose(cts, *args, callee, transpose_thunk, num_callee_consts, num_res):
    consts, res = args[:num_callee_consts], args[num_callee_consts : num_callee_consts + num_res]
    if any(is_undefined_primal(a) for a in (*consts, *res)):
        raise AssertionError("linear_call: the residual arguments must be known to transpose")
    t_jaxpr, t_consts = transpose_thunk()

    def back_thunk():
        return callee, list(consts)

    lin_cts = linear_call_p.bind(
        *t_consts,
        *res,
        *[instantiate_zeros(c) for c in cts],
        callee=t_jaxpr,
        transpose_thunk=back_thunk,
        num_callee_consts=len(t_consts),
        num_res=len(res),
    )
    return [None] * (num_callee_consts + num_res) + list(lin_cts)


linear_call_p.def_impl(_linear_call_impl)
linear_call_p.def_abstract_eval(_linear_call_abstract_eval)
linear_call_p.def_lowering(_linear_call_lowering)
linear_call_p.def_jvp(_linear_call_jvp)
linear_call_p.def_transpose(_linear_call_transpose)
