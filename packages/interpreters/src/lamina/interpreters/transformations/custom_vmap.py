"""``custom_vmap``: functions whose batching is a rule the user writes.

A call traces the function to a Jaxpr and binds one ``custom_vmap_call`` equation with
JAX's params:

- ``call``: the function as a ``ClosedJaxpr`` whose leading inputs are the values it
  closes over (passed as the equation's leading operands);
- ``rule``: the batching rule, called as ``rule(axis_size, in_batched, *args)`` with
  ``args`` the unflattened operands and ``in_batched`` a list of pytrees of bools;
- ``in_tree``: the operands' tree, ``([*consts], (*args))``; ``out_tree``: the outputs'.

Evaluating and lowering the equation run ``call``. Under ``vmap`` the user's rule runs
on the operands with their batch axes first and returns ``(out, out_batched)``. The JVP
is another ``custom_vmap_call`` of the JVP of ``call`` whose rule is the JVP of the
user's rule, so a ``vmap`` of a ``jvp`` still uses the user's rule. There is no
transposition: reverse mode needs ``custom_vjp`` around the ``custom_vmap`` function.
"""

from __future__ import annotations

import functools

from lamina.interpreters.core.tangents import Zero, instantiate_zeros, tangent_aval
from lamina.interpreters.jaxprs.calls import eval_jaxpr
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.interpreters.transformations.ad import jvp_flat
from lamina.interpreters.transformations.batching import AxisData, batch_flat, moveaxis, not_mapped
from lamina.interpreters.transformations.custom_calls import (
    ArgResolver,
    TracedCall,
    forward_def_attr,
    function_name,
    unparsable,
)
from lamina.ir import Primitive, ShapedArray, dtypes, tree_util

__all__ = ["custom_vmap", "custom_vmap_p"]


class custom_vmap:
    """Wraps ``fun`` so that ``vmap`` of it runs a rule given with :meth:`def_vmap`
    instead of batching ``fun`` itself; everywhere else it behaves as ``fun``."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None
        self._resolve = ArgResolver(fun, "custom_vmap")

    __getattr__ = forward_def_attr

    def def_vmap(self, vmap_rule):
        """Set the batching rule: ``vmap_rule(axis_size, in_batched, *args)`` gets the
        arguments with their batch axes first and a list of pytrees of bools saying which
        are batched; it returns ``(out, out_batched)``, ``out_batched`` a pytree of bools
        of ``out``'s structure. Returns ``vmap_rule``."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        args = self._resolve(args, kwargs)
        if not self.vmap_rule:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {function_name(self.fun)} "
                "using def_vmap."
            )
        traced = TracedCall(self.fun, (), [], args)
        in_tree = tree_util.tree_structure((list(traced.consts), tuple(args)))
        outs = custom_vmap_p.bind(
            *traced.operands,
            call=traced.call_jaxpr,
            rule=ClosedRule(self.vmap_rule),
            in_tree=in_tree,
            out_tree=traced.out_tree,
        )
        return tree_util.tree_unflatten(traced.out_tree, outs)


# ---------------------------------------------------------------- rules in params


class ClosedRule:
    """The user's rule as the equation holds it: takes the operands as ``(consts,
    args)`` and passes ``args`` on. Prints as the user's function."""

    def __init__(self, rule):
        self.rule = rule

    def __call__(self, axis_size, in_batched, consts, args):
        consts_batched, args_batched = in_batched
        if any(tree_util.tree_leaves(consts_batched)):
            raise AssertionError(
                "a custom_vmap function closes over a value batched by an enclosing vmap; "
                "pass that value to the function as an argument instead"
            )
        return call_rule(self.rule, axis_size, args_batched, args)

    def __str__(self):
        return str(self.rule)


def call_rule(rule, axis_size, in_batched, args):
    in_batched = in_batched if type(in_batched) is list else list(in_batched)
    return rule(axis_size, in_batched, *args)


def _rule_name(rule) -> str:
    rule = getattr(rule, "rule", rule)
    return getattr(rule, "__name__", "<unnamed rule>")


def check_rule_trees(rule, out_tree, rule_out_tree, batched_tree) -> None:
    if rule_out_tree != batched_tree:
        raise ValueError(
            "structure of output value and output batching specification returned by "
            f"custom vmap rule ({_rule_name(rule)}) do not match.\n"
            f"Output values: {rule_out_tree}\n"
            f"Batching spec: {batched_tree}"
        )
    if rule_out_tree != out_tree:
        raise ValueError(
            f"structure of output returned by custom vmap rule ({_rule_name(rule)}) does "
            "not match that of original custom-vmapped function.\n"
            f"Original output: {out_tree}\n"
            f"Rule output: {rule_out_tree}"
        )


class JVPOfRule:
    """The batching rule of the JVP of a ``custom_vmap_call``: operands ``(primals,
    tangents)``. The user's rule batches the inputs whose primal and tangent are both
    batched; an input batched in only one of them is batched by ``vmap`` of the JVP of
    the user's rule."""

    def __init__(self, rule, out_tree):
        self.rule, self.out_tree = rule, out_tree

    def __call__(self, axis_size, in_batched, primals, tangents):
        ps_batched, ts_batched = in_batched
        flat_pb = tree_util.tree_leaves(ps_batched)
        flat_tb = tree_util.tree_leaves(ts_batched)
        mutual = tree_util.tree_map(lambda p, t: p and t, ps_batched, ts_batched)
        flat_ps, p_tree = tree_util.tree_flatten(primals)
        flat_ts = tree_util.tree_leaves(tangents)
        n = len(flat_ps)
        in_dims = [0 if p and not t else not_mapped for p, t in zip(flat_pb, flat_tb, strict=True)]
        in_dims += [0 if t and not p else not_mapped for p, t in zip(flat_pb, flat_tb, strict=True)]
        mutual_out = []

        def to_jvp(*flat):
            xs = tree_util.tree_unflatten(p_tree, flat)
            out, out_batched = call_rule(self.rule, axis_size, mutual, xs)
            check_rule_trees(
                self.rule,
                self.out_tree,
                tree_util.tree_structure(out),
                tree_util.tree_structure(out_batched),
            )
            mutual_out[:] = tree_util.tree_leaves(out_batched)
            return tree_util.tree_leaves(out)

        def flat_jvp(*vals):
            ts = [_tangent_in(t) for t in vals[n:]]
            outs_p, outs_t = jvp_flat(to_jvp, vals[:n], ts)
            return [*outs_p, *(instantiate_zeros(t) for t in outs_t)]

        outs, out_dims = batch_flat(
            flat_jvp, AxisData(None, axis_size), [*flat_ps, *flat_ts], in_dims
        )
        outs = [_to_front(o, d) for o, d in zip(outs, out_dims, strict=True)]
        extra = [d is not not_mapped for d in out_dims]
        m = len(outs) // 2
        out_ps = tree_util.tree_unflatten(self.out_tree, outs[:m])
        out_ts = tree_util.tree_unflatten(self.out_tree, outs[m:])
        batched_ps = [b or e for b, e in zip(mutual_out, extra[:m], strict=True)]
        batched_ts = [b or e for b, e in zip(mutual_out, extra[m:], strict=True)]
        return (out_ps, out_ts), (
            tree_util.tree_unflatten(self.out_tree, batched_ps),
            tree_util.tree_unflatten(self.out_tree, batched_ts),
        )

    def __str__(self):  # as JAX's Jaxprs print the rule of a JVP
        return f"<function custom_vmap_jvp.<locals>.jvp_of_rule_rule at {id(self):#x}>"


def _to_front(x, dim):
    return x if dim is not_mapped else moveaxis(x, dim, 0)


def _tangent_in(t):
    """A float0 tangent (of an integer input) is a zero inside the JVP."""
    if getattr(t, "dtype", None) == dtypes.float0:
        return Zero(ShapedArray(tuple(t.shape), dtypes.float0))
    return t


# ---------------------------------------------------------------- the primitive

custom_vmap_p = Primitive("custom_vmap_call")
custom_vmap_p.multiple_results = True
custom_vmap_p.effectful = True


def _impl(*args, call, **_):
    return eval_jaxpr(call.jaxpr, call.consts, *args)


def _abstract_eval(*avals, call, **_):
    return list(call.out_avals), call.effects


def _lowering(ctx, *args, call, **_):
    return ctx.call(call, args, inline=True)


def _batching(axis_data, vals, dims, *, call, rule, in_tree, out_tree):
    vals = [_to_front(v, d) for v, d in zip(vals, dims, strict=True)]
    args = tree_util.tree_unflatten(in_tree, vals)
    in_batched = tree_util.tree_unflatten(in_tree, [d is not not_mapped for d in dims])
    out, out_batched = call_rule(rule, axis_data.size, in_batched, args)
    flat_out, tree = tree_util.tree_flatten(out)
    flat_batched, batched_tree = tree_util.tree_flatten(out_batched)
    check_rule_trees(rule, out_tree, tree, batched_tree)
    return flat_out, [0 if b else not_mapped for b in flat_batched]


def _jvp_call(call):
    """The JVP of ``call`` from every primal and tangent to every primal and tangent."""
    n = len(call.in_avals)
    t_avals = [tangent_aval(a) for a in call.in_avals]

    def jvp_of_call(*args):
        ts = [_tangent_in(t) for t in args[n:]]
        outs_p, outs_t = jvp_flat(
            lambda *xs: eval_jaxpr(call.jaxpr, call.consts, *xs), args[:n], ts
        )
        return [*outs_p, *(instantiate_zeros(t) for t in outs_t)]

    closed, _ = trace_to_jaxpr(jvp_of_call, [*call.in_avals, *t_avals], "custom_vmap jvp")
    return closed


def _jvp(primals, tangents, *, call, rule, in_tree, out_tree):
    tangents = [instantiate_zeros(t) for t in tangents]
    outs = custom_vmap_p.bind(
        *primals,
        *tangents,
        call=_jvp_call(call),
        rule=JVPOfRule(rule, out_tree),
        in_tree=_pair(in_tree),
        out_tree=_pair(out_tree),
    )
    m = len(outs) // 2
    return outs[:m], outs[m:]


def _pair(tree):
    """The tree of a pair of values of structure ``tree``."""
    return tree_util.treedef_tuple((tree, tree))


custom_vmap_p.def_impl(_impl)
custom_vmap_p.def_abstract_eval(_abstract_eval)
custom_vmap_p.def_lowering(_lowering)
custom_vmap_p.def_batching(_batching)
custom_vmap_p.def_jvp(_jvp)
custom_vmap_p.def_pp_params(lambda params: params, unparsable)
