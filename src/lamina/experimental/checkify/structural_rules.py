"""Rules for the primitives that hold Jaxprs (``jit``, ``cond``, ``scan``, ``while``,
``checkpoint``, custom derivatives) and for ``check`` itself.

A Jaxpr inside such a primitive is checkified into one that takes the error's leaves as
extra inputs and returns the updated leaves as extra outputs. Loop carries and branch
outputs must keep one type, so the error first gains a never-failing entry for every
kind of failure the body can record.
"""

from __future__ import annotations

from lamina import lax
from lamina.experimental.checkify.check_primitive import check_p
from lamina.experimental.checkify.error_value import update_error
from lamina.experimental.checkify.failures import ErrorEffect
from lamina.experimental.checkify.interpreter import (
    avals_of,
    checkify_jaxpr,
    error_checks,
    split_error,
    trace_checked,
    trace_plain,
)
from lamina.interpreters import calls as interpreter_calls
from lamina.interpreters import (
    checkpoint_p,
    custom_jvp_call_p,
    custom_vjp_call_p,
    eval_jaxpr,
    jit_p,
    stop_gradient,
)
from lamina.ir import ClosedJaxpr, Jaxpr, ShapedArray, new_jaxpr_eqn
from lamina.ir.tree_util import tree_flatten, tree_unflatten

__all__ = ["strip_checks"]


def _leaves(error):
    return tree_flatten(error)


def _jit_rule(error, enabled_errors, *args, jaxpr, **params):
    err_vals, err_tree = _leaves(error)
    n = len(err_vals)

    def fun(*flat):
        return checkify_jaxpr(jaxpr, enabled_errors, tree_unflatten(err_tree, flat[:n]), *flat[n:])

    checked, out_tree, _ = trace_checked(fun, avals_of([*err_vals, *args]))
    n_out = out_tree.num_leaves - len(jaxpr.out_avals)
    unspecified = interpreter_calls.UNSPECIFIED
    params = dict(
        params,
        in_shardings=(unspecified,) * n + tuple(params["in_shardings"]),
        out_shardings=(unspecified,) * n_out + tuple(params["out_shardings"]),
        in_layouts=(None,) * n + tuple(params["in_layouts"]),
        out_layouts=(None,) * n_out + tuple(params["out_layouts"]),
        donated_invars=(False,) * n + tuple(params["donated_invars"]),
    )
    name = params.pop("name")
    outs = interpreter_calls.call_jaxpr(checked, *err_vals, *args, name=name, **params)
    return split_error(out_tree, outs)


def _body_effects(fun, error, in_avals):
    """The kinds of failure ``fun(error, *args)`` can record, traced for ``in_avals``."""
    err_vals, err_tree = _leaves(error)
    n = len(err_vals)

    def flat(*args):
        return fun(tree_unflatten(err_tree, args[:n]), *args[n:])

    return trace_checked(flat, [*avals_of(err_vals), *in_avals])[2]


def _cond_rule(error, enabled_errors, index, *ops, branches):
    in_avals = avals_of(ops)
    effects = set()
    for branch in branches:
        effects |= _body_effects(
            lambda e, *xs, b=branch: checkify_jaxpr(b, enabled_errors, e, *xs), error, in_avals
        )
    error = error._add_placeholder_effects(effects)
    err_vals, err_tree = _leaves(error)
    n = len(err_vals)
    checked, trees = [], []
    for branch in branches:

        def fun(*flat, b=branch):
            return checkify_jaxpr(b, enabled_errors, tree_unflatten(err_tree, flat[:n]), *flat[n:])

        jaxpr, tree, _ = trace_checked(fun, avals_of([*err_vals, *ops]))
        checked.append(jaxpr)
        trees.append(tree)
    outs = lax.cond_p.bind(index, *err_vals, *ops, branches=tuple(checked))
    out_error, out_vals = split_error(trees[0], outs)
    metadata = {}
    for tree in trees:
        metadata.update(split_error(tree, outs)[0]._metadata)
    return out_error._with_metadata(metadata), out_vals


def _unmapped(aval):
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)


def _scan_rule(error, enabled_errors, *args, jaxpr, num_consts, num_carry, linear, **params):
    consts, carry, xs = (
        args[:num_consts],
        args[num_consts : num_consts + num_carry],
        args[num_consts + num_carry :],
    )
    x_avals = [_unmapped(a) for a in avals_of(xs)]
    const_avals, carry_avals = avals_of(consts), avals_of(carry)

    def body(e, *vals):
        return checkify_jaxpr(jaxpr, enabled_errors, e, *vals)

    effects = _body_effects(body, error, [*const_avals, *carry_avals, *x_avals])
    error = error._add_placeholder_effects(effects)
    err_vals, err_tree = _leaves(error)
    n = len(err_vals)

    def fun(*flat):  # consts, error, carry, xs
        e = tree_unflatten(err_tree, flat[num_consts : num_consts + n])
        return body(e, *flat[:num_consts], *flat[num_consts + n :])

    in_avals = [*const_avals, *avals_of(err_vals), *carry_avals, *x_avals]
    checked, out_tree, _ = trace_checked(fun, in_avals)
    linear = tuple(linear)
    linear = linear[:num_consts] + (False,) * n + linear[num_consts:]
    outs = lax.scan_p.bind(
        *consts, *err_vals, *carry, *xs,
        jaxpr=checked, num_consts=num_consts, num_carry=num_carry + n, linear=linear, **params,
    )  # fmt: skip
    return split_error(out_tree, outs)


def _while_rule(error, enabled_errors, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    if cond_jaxpr.out_avals[0].shape:
        raise ValueError(
            "Checkify does not support batched while-loops (checkify-of-vmap-of-while). \n"
            "Hint: if possible, move the vmap to the outer level to get "
            "vmap-of-checkify-of-while."
        )
    c_consts = args[:cond_nconsts]
    b_consts = args[cond_nconsts : cond_nconsts + body_nconsts]
    carry = args[cond_nconsts + body_nconsts :]
    nc, nb = cond_nconsts, body_nconsts
    # The first evaluation of the condition happens before the loop.
    error, _ = checkify_jaxpr(cond_jaxpr, enabled_errors, error, *c_consts, *carry)

    def body(e, *vals):  # cond consts, body consts, carry: one step, then the next test
        e, out = checkify_jaxpr(body_jaxpr, enabled_errors, e, *vals[nc:])
        e, _ = checkify_jaxpr(cond_jaxpr, enabled_errors, e, *vals[:nc], *out)
        return e, out

    consts_avals = avals_of([*c_consts, *b_consts])
    effects = _body_effects(body, error, [*consts_avals, *avals_of(carry)])
    error = error._add_placeholder_effects(effects)
    err_vals, err_tree = _leaves(error)
    n = len(err_vals)

    def body_fun(*flat):  # cond consts, body consts, error, carry
        e = tree_unflatten(err_tree, flat[nc + nb : nc + nb + n])
        return body(e, *flat[: nc + nb], *flat[nc + nb + n :])

    plain_cond = strip_checks(cond_jaxpr.jaxpr)  # its checks run in the body

    def cond_fun(*flat):  # cond consts, error, carry
        return eval_jaxpr(plain_cond, cond_jaxpr.consts, *flat[:nc], *flat[nc + n :])

    err_avals, carry_avals = avals_of(err_vals), avals_of(carry)
    checked_body, out_tree, _ = trace_checked(body_fun, [*consts_avals, *err_avals, *carry_avals])
    from_cond = trace_plain(cond_fun, [*avals_of(c_consts), *err_avals, *carry_avals])
    outs = lax.while_p.bind(
        *c_consts, *c_consts, *b_consts, *err_vals, *carry,
        cond_jaxpr=from_cond, body_jaxpr=checked_body, cond_nconsts=nc, body_nconsts=nc + nb,
    )  # fmt: skip
    return split_error(out_tree, outs)


def _opened(closed: ClosedJaxpr):
    """``closed`` as a Jaxpr without constants (they become leading inputs)."""
    jaxpr = closed.jaxpr
    return jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars]), list(
        closed.consts
    )


def _checkpoint_rule(error, enabled_errors, *args, jaxpr, **params):
    err_vals, err_tree = _leaves(error)
    n = len(err_vals)
    closed = ClosedJaxpr(jaxpr, [])

    def fun(*flat):
        return checkify_jaxpr(closed, enabled_errors, tree_unflatten(err_tree, flat[:n]), *flat[n:])

    checked, out_tree, _ = trace_checked(fun, avals_of([*err_vals, *args]))
    opened, consts = _opened(checked)
    outs = checkpoint_p.bind(*consts, *err_vals, *args, jaxpr=opened, **params)
    return split_error(out_tree, outs)


def strip_checks(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` without its ``check`` equations, in nested Jaxprs too."""
    eqns = []
    for eqn in jaxpr.eqns:
        if eqn.primitive is check_p:
            continue
        params = {k: _strip_param(v) for k, v in eqn.params.items()}
        effects = eqn.effects - _check_effects(eqn.effects)
        eqns.append(
            new_jaxpr_eqn(eqn.invars, eqn.outvars, eqn.primitive, params, effects, eqn.source_info)
        )
    return jaxpr.replace(eqns=eqns, effects=jaxpr.effects - _check_effects(jaxpr.effects))


def _check_effects(effects):
    return frozenset(e for e in effects if isinstance(e, ErrorEffect))


def _strip_param(value):
    if isinstance(value, ClosedJaxpr):
        return ClosedJaxpr(strip_checks(value.jaxpr), value.consts)
    if isinstance(value, Jaxpr):
        return strip_checks(value)
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value)
    ):
        return tuple(_strip_param(v) for v in value)
    return value


def _custom_rule(primitive):
    """The call runs with its custom derivative kept (its checks removed); the checks
    run on a copy of the function applied to values with no derivative."""

    def rule(error, enabled_errors, *args, call_jaxpr, **params):
        stripped = ClosedJaxpr(strip_checks(call_jaxpr.jaxpr), call_jaxpr.consts)
        outs = primitive.bind(*args, call_jaxpr=stripped, **params)
        error, _ = checkify_jaxpr(call_jaxpr, enabled_errors, error, *map(stop_gradient, args))
        return error, outs

    return rule


def _check_discharge_rule(error, enabled_errors, *leaves, err_tree, debug):
    new = tree_unflatten(err_tree, leaves)
    for effect, pred in new._pred.items():
        if effect.error_type in enabled_errors:
            error = update_error(error, pred, new._code[effect], {}, new._payload[effect], effect)
    return error._with_metadata({**new._metadata, **error._metadata}), []


error_checks[jit_p] = _jit_rule
error_checks[lax.cond_p] = _cond_rule
error_checks[lax.scan_p] = _scan_rule
error_checks[lax.while_p] = _while_rule
error_checks[checkpoint_p] = _checkpoint_rule
error_checks[custom_jvp_call_p] = _custom_rule(custom_jvp_call_p)
error_checks[custom_vjp_call_p] = _custom_rule(custom_vjp_call_p)
error_checks[check_p] = _check_discharge_rule
