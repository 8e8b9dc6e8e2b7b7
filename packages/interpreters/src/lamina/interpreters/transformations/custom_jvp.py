"""``custom_jvp``: functions whose JVP is a rule the user writes.

Called eagerly (the eval trace is current), a ``custom_jvp`` function just runs its
Python function, as JAX's does. Under any transformation the function is traced to a
Jaxpr and bound as one ``custom_jvp_call`` equation, with JAX's params:

- ``call_jaxpr``: the function as a ``ClosedJaxpr`` whose leading inputs are the values
  it closes over (``num_consts`` of them, passed as the equation's leading operands);
- ``jvp_jaxpr_fun``: a :class:`JVPRule`, the user's rule wrapped to take and return flat
  values: ``rule(*primals, *tangents) -> [*primal_outs, *tangent_outs]``, over every
  operand (closed-over values included);
- ``symbolic_zeros``: whether the rule sees :class:`SymbolicZero` for unperturbed inputs.

The primitive's rules: abstract evaluation and evaluation of ``call_jaxpr``, lowering
inlines it; the JVP rule calls ``jvp_jaxpr_fun``; batching batches ``call_jaxpr`` and
wraps the rule so that it runs under ``vmap`` too; transposition (needed when a rule
applies a ``custom_jvp`` function to tangents) transposes ``call_jaxpr`` like a ``jit``.
"""

from __future__ import annotations

import functools

from lamina.interpreters.core.tangents import Zero, tangent_aval
from lamina.interpreters.core.tracing import Tracer, shaped_abstractify
from lamina.interpreters.jaxprs.dce import dce_keeping_operands, dce_rules
from lamina.interpreters.transformations.ad import add_tangents
from lamina.interpreters.transformations.custom_calls import (
    ArgResolver,
    RuleFromText,
    TracedCall,
    batch_call_jaxpr,
    def_call_rules,
    forward_def_attr,
    from_rule_value,
    function_name,
    is_eager,
    move_to_front,
    nondiff_indices,
    run_batched,
    same_type,
    split_args,
    to_rule_zero,
    type_tree,
    value_aval,
    zero_if_float0,
    zero_of,
)
from lamina.ir import Primitive, spec_of, tree_util

__all__ = ["CustomJVPException", "JVPRule", "custom_jvp", "custom_jvp_call_p"]


class CustomJVPException(Exception):
    def __init__(self):
        super().__init__(
            "Detected differentiation of a custom_jvp function with respect to a "
            "closed-over value. That isn't supported because the custom JVP rule only "
            "specifies how to differentiate the custom_jvp function with respect to "
            "explicit input parameters. Try passing the closed-over value into the "
            "custom_jvp function as an argument, and adapting the custom_jvp rule."
        )


# ---------------------------------------------------------------- custom_jvp


class custom_jvp:
    """A function with a custom JVP rule, defined with :meth:`defjvp` or :meth:`defjvps`.

    ``nondiff_argnums`` (or ``nondiff_argnames``) name arguments that are not
    differentiated (functions, say): they are passed to the rule first, as is.
    """

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._resolve = ArgResolver(fun, "custom_jvp")
        self.nondiff_argnums = nondiff_indices(fun, nondiff_argnums, nondiff_argnames)
        self.jvp = None
        self.symbolic_zeros = False

    __getattr__ = forward_def_attr

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def defjvp(self, jvp, symbolic_zeros: bool = False):
        """Sets the rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out,
        tangent_out)``; returns ``jvp``, so it works as a decorator."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *tangent_fns) -> None:
        """One rule per argument: ``fn(t, primal_out, *primals)`` is the output tangent
        due to that argument's tangent ``t`` (``None``: the argument has none)."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            zeros = tree_util.tree_map(zero_of, primal_out)
            terms = [
                fn(t, primal_out, *primals) if fn else zeros
                for t, fn in zip(tangents, tangent_fns, strict=True)
            ]
            total = tree_util.tree_map(
                lambda _, *ts: functools.reduce(add_tangents, ts), primal_out, *terms
            )
            return primal_out, total

        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            name = function_name(self.fun)
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = self._resolve(args, kwargs)
        if is_eager():  # nothing to differentiate: JAX runs the function itself too
            return self.fun(*args)
        name = function_name(self.fun)
        static, dyn = split_args(args, self.nondiff_argnums)
        traced = TracedCall(self.fun, self.nondiff_argnums, static, dyn)
        rule = JVPRule(self, name, static, traced)
        outs = custom_jvp_call_p.bind(
            *traced.operands,
            call_jaxpr=traced.call_jaxpr,
            jvp_jaxpr_fun=rule,
            num_consts=len(traced.consts),
            symbolic_zeros=self.symbolic_zeros,
        )
        return tree_util.tree_unflatten(traced.out_tree, outs)


class JVPRule:
    """A user's JVP rule on flat values: ``rule(*primals, *tangents)`` over all the
    operands of a ``custom_jvp_call`` returns primal and tangent outputs, checked as
    JAX checks them. Tangents of closed-over values must be zero, except those of
    non-differentiable arguments, which are dropped (JAX stops their gradients)."""

    def __init__(self, cj: custom_jvp, primal_name: str, static, traced: TracedCall):
        self.jvp, self.symbolic_zeros = cj.jvp, cj.symbolic_zeros
        self.primal_name, self.rule_name = primal_name, function_name(cj.jvp)
        self.static, self.traced = static, traced
        static_ids = {id(x) for x in tree_util.tree_leaves(static) if isinstance(x, Tracer)}
        self.static_const = {id(c): i for i, c in enumerate(traced.consts) if id(c) in static_ids}

    def __call__(self, *args):
        traced = self.traced
        k, n = len(traced.consts), len(args) // 2
        primals, tangents = args[k:n], args[n + k :]
        for i, t in enumerate(args[n : n + k]):
            if type(t) is not Zero and id(traced.consts[i]) not in self.static_const:
                raise CustomJVPException()
        static = tree_util.tree_map(
            lambda x: args[self.static_const[id(x)]] if id(x) in self.static_const else x,
            self.static,
        )
        py_primals = tree_util.tree_unflatten(traced.in_tree, primals)
        py_tangents = tree_util.tree_unflatten(
            traced.in_tree, [to_rule_zero(t, self.symbolic_zeros) for t in tangents]
        )
        pair = self.jvp(*static, py_primals, py_tangents)
        primals_out, tangents_out = self._check(pair)
        out = [
            zero_if_float0(p, from_rule_value(t))
            for p, t in zip(primals_out, tangents_out, strict=True)
        ]
        return [*primals_out, *out]

    def _check(self, pair):
        where = f"Custom JVP rule {self.rule_name} for function {self.primal_name}"
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(
                f"{where} must produce a pair (list or tuple of length two) representing "
                f"primal and tangent outputs, but got {pair}."
            )
        primals_out, out_tree = tree_util.tree_flatten(pair[0])
        tangents_out, tangent_tree = tree_util.tree_flatten(pair[1])
        if out_tree != tangent_tree:
            raise TypeError(
                f"{where} must produce primal and tangent outputs with equal container "
                f"(pytree) structures, but got {out_tree} and {tangent_tree} respectively."
            )
        avals = [shaped_abstractify(x) for x in primals_out]
        fun_tree, fun_avals = self.traced.out_tree, self.traced.out_avals
        first = (
            f"{where} must produce a pair (list or tuple of length two) where the first "
            "element represents the primal output (equal in value to the output of the "
            f"custom_jvp-decorated function {self.primal_name}, and in particular "
        )
        if out_tree != fun_tree:
            raise TypeError(
                f"{first}of the same container/pytree structure), but instead the JVP rule "
                "output's first element had container/pytree structure:\n"
                f"    {type_tree(out_tree, avals)}\n"
                f"while the custom_jvp-decorated function {self.primal_name} had output "
                f"container/pytree structure:\n    {type_tree(fun_tree, fun_avals)}."
            )
        if not all(map(same_type, avals, fun_avals)):
            raise TypeError(
                f"{first}with leaves of the same shape/dtype), but instead the JVP rule "
                "output's first element had shapes/dtypes of:\n"
                f"    {type_tree(out_tree, avals)}\n"
                f"while the custom_jvp-decorated function {self.primal_name} had output "
                f"shapes/dtypes of:\n    {type_tree(fun_tree, fun_avals)}"
            )
        _check_tangent_types(avals, [value_aval(t) for t in tangents_out])
        return primals_out, tangents_out


def _tangent_matches(expected, got) -> bool:
    """Equal shapes and dtypes, and (over explicit mesh axes) equal splits."""
    return same_type(expected, got) and spec_of(expected) == spec_of(got)


def _check_tangent_types(primal_avals, tangent_avals):
    strip = [a.update(weak_type=False) for a in primal_avals]
    expected = [tangent_aval(a) for a in strip]
    got = [a.update(weak_type=False) for a in tangent_avals]
    if all(map(_tangent_matches, expected, got)):
        return
    if len(expected) == 1:
        raise TypeError(
            "Custom JVP rule must produce primal and tangent outputs with corresponding "
            f"shapes and dtypes. Expected {expected[0].str_short()} (tangent type of "
            f"{strip[0].str_short()}) but got {got[0].str_short()}."
        )
    lines = [
        f"  primal {p.str_short()} with tangent {t.str_short()}, expecting tangent {e!r}"
        for p, e, t in zip(strip, expected, got, strict=True)
        if not _tangent_matches(e, t)
    ]
    raise TypeError(
        "Custom JVP rule must produce primal and tangent outputs with corresponding "
        "shapes and dtypes, but got:\n" + "\n".join(lines)
    )


class BatchedJVPRule:
    """A :class:`JVPRule` of unbatched operands run under ``vmap``: the rule of a
    batched ``custom_jvp_call`` (operands batched at 0 or not at all; outputs at 0)."""

    def __init__(self, rule, axis_data, dims):
        self.rule, self.axis_data, self.dims = rule, axis_data, list(dims)
        self.primal_name, self.rule_name = rule.primal_name, rule.rule_name

    def __call__(self, *args):
        return run_batched(self.rule, self.axis_data, args, self.dims * 2)


class PrunedJVPRule:
    """A :class:`JVPRule` keeping only the primal and tangent outputs marked ``used``:
    the rule of a ``custom_jvp_call`` whose unused outputs were eliminated."""

    def __init__(self, rule, used):
        self.rule, self.used = rule, list(used)
        self.primal_name, self.rule_name = rule.primal_name, rule.rule_name

    def __call__(self, *args):
        outs, n = self.rule(*args), len(self.used)
        keep = lambda xs: [x for x, u in zip(xs, self.used, strict=True) if u]  # noqa: E731
        return [*keep(outs[:n]), *keep(outs[n:])]


# ---------------------------------------------------------------- the primitive

custom_jvp_call_p = Primitive("custom_jvp_call")
def_call_rules(custom_jvp_call_p)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp_jaxpr_fun, **_):
    outs = jvp_jaxpr_fun(*primals, *tangents)
    n = len(call_jaxpr.out_avals)
    return outs[:n], outs[n:]


def _custom_jvp_call_batching(axis_data, vals, dims, *, call_jaxpr, jvp_jaxpr_fun, **params):
    vals, dims = move_to_front(vals, dims)
    outs = custom_jvp_call_p.bind(
        *vals,
        call_jaxpr=batch_call_jaxpr(call_jaxpr, axis_data, dims),
        jvp_jaxpr_fun=BatchedJVPRule(jvp_jaxpr_fun, axis_data, dims),
        **params,
    )
    return outs, [0] * len(outs)


def _custom_jvp_call_pp(params):
    shown = [("name", params["jvp_jaxpr_fun"].primal_name), ("call_jaxpr", params["call_jaxpr"])]
    shown.append(("jvp", params["jvp_jaxpr_fun"].rule_name))
    if params["num_consts"]:
        shown.append(("num_consts", params["num_consts"]))
    return [*shown, ("symbolic_zeros", params["symbolic_zeros"])]


custom_jvp_call_p.def_jvp(_custom_jvp_call_jvp)
custom_jvp_call_p.def_batching(_custom_jvp_call_batching)


def _custom_jvp_call_dce(used_outputs, eqn):
    """Unused outputs leave ``call_jaxpr`` and the rule; every operand stays, as the
    rule takes them all."""
    return dce_keeping_operands(used_outputs, eqn, _prune_jvp_rule)


def _prune_jvp_rule(params, used_outputs):
    return {"jvp_jaxpr_fun": PrunedJVPRule(params["jvp_jaxpr_fun"], used_outputs)}


dce_rules[custom_jvp_call_p] = _custom_jvp_call_dce


def _custom_jvp_call_complete(params, in_avals, out_avals):
    """The params of an equation read from text: the rule is known by name only."""
    rule = RuleFromText("custom_jvp_call", params["name"], params["jvp"])
    return {
        "call_jaxpr": params["call_jaxpr"],
        "jvp_jaxpr_fun": rule,
        "num_consts": params.get("num_consts", 0),
        "symbolic_zeros": params["symbolic_zeros"],
    }


custom_jvp_call_p.def_pp_params(_custom_jvp_call_pp, _custom_jvp_call_complete)
