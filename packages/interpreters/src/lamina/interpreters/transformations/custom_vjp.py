"""``custom_vjp`` and ``custom_gradient``: functions whose VJP is a rule the user writes.

Called eagerly, a ``custom_vjp`` function runs its Python function. Under a
transformation it is traced and bound as one ``custom_vjp_call`` equation with JAX's
params: ``call_jaxpr`` (closed-over values as ``num_consts`` leading operands),
``fwd_jaxpr_thunk`` (:class:`VJPForward`: the user's ``fwd`` on flat values),
``bwd`` (:class:`VJPBackward`: the user's ``bwd`` on flat values), ``out_trees`` and
``symbolic_zeros``.

Its JVP runs ``fwd`` on the primals (giving outputs and residuals) and produces the
output tangents with ``custom_lin``, a linear primitive of the residuals and the input
tangents whose transpose calls ``bwd``. Under ``grad`` partial evaluation stages
``custom_lin`` (its tangents are unknown) and the backward pass transposes it, so
reverse mode needs nothing more; evaluated, lowered or batched, ``custom_lin`` raises
JAX's error: forward mode cannot differentiate a ``custom_vjp`` function.
``custom_gradient`` (:mod:`.custom_derivatives`) is built on ``custom_vjp``.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from lamina.interpreters.core.errors import UnexpectedTracerError
from lamina.interpreters.core.tangents import Zero, instantiate_zeros, tangent_aval
from lamina.interpreters.core.tracing import Tracer, shaped_abstractify
from lamina.interpreters.jaxprs.dce import dce_keeping_operands, dce_rules
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.interpreters.transformations.batching import bdim_at_front
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
    merge_args,
    nondiff_indices,
    run_batched,
    same_type,
    split_args,
    to_rule_zero,
    type_tree,
    unparsable,
    value_aval,
)
from lamina.interpreters.transformations.remat_opt import remat_opt_p
from lamina.ir import ClosedJaxpr, Primitive, dtypes, mismatch_extra, spec_of, tree_util

__all__ = [
    "CustomVJPException",
    "CustomVJPPrimal",
    "custom_lin_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
]


class CustomVJPException(Exception):
    def __init__(self):
        super().__init__(
            "Detected differentiation of a custom_vjp function with respect to a "
            "closed-over value. That isn't supported because the custom VJP rule only "
            "specifies how to differentiate the custom_vjp function with respect to "
            "explicit input parameters. Try passing the closed-over value into the "
            "custom_vjp function as an argument, and adapting the custom_vjp fwd and "
            "bwd rules."
        )


@dataclasses.dataclass
class CustomVJPPrimal:
    """An argument of ``fwd`` defined with ``symbolic_zeros=True``: the primal ``value``
    and whether it is ``perturbed`` (being differentiated)."""

    value: object
    perturbed: bool


def custom_vjp_primal_tree_values(tree):
    """The values of a tree of :class:`CustomVJPPrimal` leaves."""

    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value

    return tree_util.tree_map(value, tree)


_NONDIFF_TRACER = (
    "Found a JAX Tracer object passed as an argument to a custom_vjp function in a "
    "position indicated by nondiff_argnums as non-differentiable. Tracers cannot be passed "
    "as non-differentiable arguments to custom_vjp functions; instead, nondiff_argnums "
    "should only be used for arguments that can't be or contain JAX tracers, e.g. "
    "function-valued arguments. In particular, array-valued arguments should typically "
    "not be indicated as nondiff_argnums."
)


class custom_vjp:
    """A function with a custom VJP rule, defined with :meth:`defvjp`. Forward-mode
    differentiation of it is an error, as in JAX."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._resolve = ArgResolver(fun, "custom_vjp")
        self.nondiff_argnums = nondiff_indices(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = self.bwd = None
        self.symbolic_zeros = self.optimize_remat = False

    __getattr__ = forward_def_attr

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def defvjp(self, fwd, bwd, symbolic_zeros: bool = False, optimize_remat: bool = False):
        """``fwd(*args) -> (output, residuals)``; ``bwd(*nondiff_args, residuals,
        output_cotangent) -> a tuple with a cotangent per argument (None for zero)``.
        With ``optimize_remat``, ``fwd`` is staged whole into a ``remat_opt`` equation,
        which runs the plain function instead when its residuals go unused."""
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError(
                "remat optimization for custom_vjp does not support symbolic zeros"
            )
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros, self.optimize_remat = symbolic_zeros, optimize_remat

    def __call__(self, *args, **kwargs):
        if self.fwd is None or self.bwd is None:
            name = function_name(self.fun)
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = self._resolve(args, kwargs)
        if is_eager():
            return self.fun(*args)
        name = function_name(self.fun)
        static, dyn = split_args(args, self.nondiff_argnums)
        if any(isinstance(x, Tracer) for x in tree_util.tree_leaves(static)):
            raise UnexpectedTracerError(_NONDIFF_TRACER)
        traced = TracedCall(self.fun, self.nondiff_argnums, static, dyn)
        fwd = VJPForward(self, name, static, traced)
        outs = custom_vjp_call_p.bind(
            *traced.operands,
            call_jaxpr=traced.call_jaxpr,
            fwd_jaxpr_thunk=fwd,
            bwd=VJPBackward(self, static, traced, fwd),
            num_consts=len(traced.consts),
            out_trees=fwd.out_trees,
            symbolic_zeros=self.symbolic_zeros,
        )
        return tree_util.tree_unflatten(fwd.primal_tree(), outs)


class VJPForward:
    """The user's ``fwd`` on flat values: ``fwd(*primals, perturbed=flags) ->
    (outputs, residuals)``, checked as JAX checks them."""

    def __init__(self, cv: custom_vjp, primal_name: str, static, traced: TracedCall):
        self.fwd, self.symbolic_zeros = cv.fwd, cv.symbolic_zeros
        self.optimize_remat = cv.optimize_remat
        self.primal_name, self.rule_name = primal_name, function_name(cv.fwd)
        self.nondiff, self.static, self.traced = cv.nondiff_argnums, static, traced
        self.res_tree = self.out_tree = None
        # As in JAX, the output of ``fwd`` is checked against the primal function only
        # once the call was staged into a Jaxpr (where the primal function is needed).
        self.check_primal = False

    def mark_staged(self):
        self.check_primal = True

    def out_trees(self):
        return self.primal_tree(), self.res_tree

    def primal_tree(self):
        """The output tree: that of ``fwd`` once it ran, else the primal function's."""
        return self.traced.out_tree if self.out_tree is None else self.out_tree

    def __call__(self, *primals, perturbed):
        if self.optimize_remat:
            return self._remat_opt(primals, perturbed)
        return self._run(primals, perturbed)

    def _remat_opt(self, primals, perturbed):
        """The checked ``fwd`` staged into one ``remat_opt`` equation."""
        n_res = []

        def flat_fwd(*ps):
            outs, res = self._run(ps, perturbed)
            n_res.append(len(res))
            return [*res, *outs]

        avals = [shaped_abstractify(p) for p in primals]
        closed, _ = trace_to_jaxpr(flat_fwd, avals, f"{self.rule_name} for remat_opt")
        jaxpr = closed.jaxpr
        opened = jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars])
        traced = self.traced

        def fun_jaxpr_thunk():
            k = len(traced.consts)
            call = traced.call_jaxpr.jaxpr
            return call.replace(constvars=call.invars[:k], invars=call.invars[k:]), traced.consts

        out = remat_opt_p.bind(
            *closed.consts,
            *primals,
            num_consts=len(closed.consts),
            num_res=n_res[0],
            fwd_jaxpr=ClosedJaxpr(opened, []),
            fun_jaxpr_thunk=fun_jaxpr_thunk,
        )
        return out[n_res[0] :], out[: n_res[0]]

    def _run(self, primals, perturbed):
        if self.symbolic_zeros:
            primals = [CustomVJPPrimal(p, b) for p, b in zip(primals, perturbed, strict=True)]
        dyn = tree_util.tree_unflatten(self.traced.in_tree, primals)
        pair = self.fwd(*merge_args(self.nondiff, self.static, dyn))
        where = f"Custom VJP fwd rule {self.rule_name} for function {self.primal_name}"
        first = (
            f"{where} must produce a pair (list or tuple of length two) where the first "
            "element represents the primal output (equal to "
        )
        second = (
            f"custom_vjp-decorated function {self.primal_name}) and the second element "
            "represents residuals (i.e. values stored from the forward pass for use on "
            "the backward pass), but "
        )
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(
                f"{first}those of the {second}instead of a pair the fwd rule "
                f"{self.rule_name} produced {pair}."
            )
        outs, out_tree = tree_util.tree_flatten(pair[0])
        self.out_tree = out_tree
        res, self.res_tree = tree_util.tree_flatten(pair[1])
        avals = [shaped_abstractify(x) for x in outs]
        fun_tree, fun_avals = self.traced.out_tree, self.traced.out_avals
        if self.check_primal and out_tree != fun_tree:
            raise TypeError(
                f"{first}the output of the {second}instead the fwd rule output's first "
                f"element had container/pytree structure:\n    {type_tree(out_tree, avals)}\n"
                f"while the custom_vjp-decorated function {self.primal_name} had output "
                f"container/pytree structure:\n    {type_tree(fun_tree, fun_avals)}."
            )
        if self.check_primal and not all(map(same_type, avals, fun_avals)):
            raise TypeError(
                f"{first}the output of the {second}instead the fwd rule output's first "
                f"element had shapes/dtypes of:\n    {type_tree(out_tree, avals)}\n"
                f"while the custom_vjp-decorated function {self.primal_name} had output "
                f"shapes/dtypes of:\n    {type_tree(fun_tree, fun_avals)}"
            )
        for r in res:
            shaped_abstractify(r)  # residuals must be arrays
        return outs, res


class VJPBackward:
    """The user's ``bwd`` on flat values: ``bwd(*residuals, *output_cotangents)`` gives
    a cotangent per input leaf (``Zero`` where there is none), checked as JAX checks."""

    def __init__(self, cv: custom_vjp, static, traced: TracedCall, fwd: VJPForward):
        self.bwd, self.symbolic_zeros = cv.bwd, cv.symbolic_zeros
        self.rule_name = function_name(cv.bwd)
        self.static, self.traced, self.fwd = static, traced, fwd

    def __call__(self, *args):
        traced, res_tree = self.traced, self.fwd.res_tree
        res, cts = args[: res_tree.num_leaves], args[res_tree.num_leaves :]
        cts = [to_rule_zero(c, self.symbolic_zeros) for c in cts]
        py_res = tree_util.tree_unflatten(res_tree, res)
        py_cts = tree_util.tree_unflatten(self.fwd.primal_tree(), cts)
        cts_in = self.bwd(*self.static, py_res, py_cts)
        in_tree = traced.in_tree
        n_args = len(tree_util.treedef_children(in_tree))
        if isinstance(cts_in, list) and len(cts_in) == n_args:
            cts_in = tuple(cts_in)
        dummy = tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)
        try:
            if not isinstance(cts_in, tuple):
                raise ValueError
            per_leaf = tree_util.broadcast_prefix(cts_in, dummy, is_leaf=lambda x: x is None)
        except ValueError:
            raise TypeError(
                "Custom VJP bwd rule must produce an output with the same container "
                "(pytree) structure as the args tuple of the primal function, and in "
                "particular must produce a tuple of length equal to the number of "
                "arguments to the primal function, but got bwd output structure "
                f"{tree_util.tree_structure(cts_in)} for primal input structure {in_tree}."
            ) from None
        paths = [p for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]
        in_avals = traced.call_jaxpr.in_avals[len(traced.consts) :]
        return [_checked_ct(*z) for z in zip(paths, in_avals, per_leaf, strict=True)]


def _checked_ct(path, aval, ct):
    want = tangent_aval(aval)
    if ct is None or want.dtype == dtypes.float0:
        return Zero(want)
    ct = from_rule_value(ct)
    got = value_aval(ct)
    # As in JAX, only the shape (and the splits over explicit axes) must agree for
    # inexact inputs.
    ok = spec_of(got) == spec_of(want) and (
        same_type(want, got)
        or (tuple(got.shape) == tuple(want.shape) and dtypes.issubdtype(aval.dtype, np.inexact))
    )
    if not ok:
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as the args tuple "
            f"of the primal function, but at output{tree_util.keystr(path)} the bwd rule "
            f"produced an output of type {got.str_short()} corresponding to an input of type "
            f"{aval.str_short()}{mismatch_extra(aval, got)}"
        )
    return ct


# ---------------------------------------------------------------- custom_vjp_call

custom_vjp_call_p = Primitive("custom_vjp_call")
def_call_rules(custom_vjp_call_p)


def _custom_vjp_call_abstract_eval(*_, call_jaxpr, fwd_jaxpr_thunk, **__):
    # Abstract evaluation means the call is being staged into a Jaxpr.
    if hasattr(fwd_jaxpr_thunk, "mark_staged"):
        fwd_jaxpr_thunk.mark_staged()
    return list(call_jaxpr.out_avals)


custom_vjp_call_p.def_abstract_eval(_custom_vjp_call_abstract_eval)


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd_jaxpr_thunk, bwd, num_consts,
                         symbolic_zeros, **_):  # fmt: skip
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise CustomVJPException()
    primals, tangents = primals[num_consts:], tangents[num_consts:]
    in_zeros = tuple(type(t) is Zero for t in tangents)
    outs, res = fwd_jaxpr_thunk(*primals, perturbed=tuple(not z for z in in_zeros))
    out_avals = tuple(tangent_aval(shaped_abstractify(o)) for o in outs)
    tangents_out = custom_lin_p.bind(
        *res,
        *[t for t in tangents if type(t) is not Zero],
        num_res=len(res),
        bwd=bwd,
        out_avals=out_avals,
        symbolic_zeros=symbolic_zeros,
        in_zeros=in_zeros,
    )
    tangents_out = [
        Zero(a) if a.dtype == dtypes.float0 else t
        for a, t in zip(out_avals, tangents_out, strict=True)
    ]
    return outs, tangents_out


def _custom_vjp_call_batching(axis_data, vals, dims, *, call_jaxpr, fwd_jaxpr_thunk, bwd,
                              **params):  # fmt: skip
    # Every operand gets the batch axis: the cotangent of an unbatched one is then
    # summed over the batch by the transpose of that broadcast, outside ``bwd``.
    vals = [bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims, strict=True)]
    dims = [0] * len(vals)
    outs = custom_vjp_call_p.bind(
        *vals,
        call_jaxpr=batch_call_jaxpr(call_jaxpr, axis_data, dims),
        fwd_jaxpr_thunk=BatchedForward(fwd_jaxpr_thunk, axis_data),
        bwd=BatchedBackward(bwd, axis_data),
        **params,
    )
    return outs, [0] * len(outs)


class BatchedForward:
    """``fwd`` under ``vmap``: operands, outputs and residuals batched at 0."""

    def __init__(self, fwd, axis_data):
        self.fwd, self.axis_data = fwd, axis_data
        self.primal_name, self.rule_name = fwd.primal_name, fwd.rule_name

    def mark_staged(self):
        self.fwd.mark_staged()

    def __call__(self, *primals, perturbed):
        n_out = []

        def flat_fwd(*xs):
            outs, res = self.fwd(*xs, perturbed=perturbed)
            n_out.append(len(outs))
            return [*outs, *res]

        outs = run_batched(flat_fwd, self.axis_data, primals, [0] * len(primals))
        return outs[: n_out[0]], outs[n_out[0] :]


class BatchedBackward:
    """``bwd`` under ``vmap``: residuals, cotangents and results batched at 0."""

    def __init__(self, bwd, axis_data):
        self.bwd, self.axis_data = bwd, axis_data
        self.rule_name = bwd.rule_name

    def __call__(self, *args):
        return run_batched(self.bwd, self.axis_data, args, [0] * len(args))


class PrunedForward:
    """``fwd`` of a ``custom_vjp_call`` whose unused outputs were eliminated: the
    outputs marked ``used`` and every residual."""

    def __init__(self, fwd, used):
        self.fwd, self.used = fwd, list(used)
        self.primal_name, self.rule_name = fwd.primal_name, fwd.rule_name

    def __call__(self, *primals, perturbed):
        outs, res = self.fwd(*primals, perturbed=perturbed)
        return [o for o, u in zip(outs, self.used, strict=True) if u], res


class PrunedBackward:
    """``bwd`` taking the cotangents of the used outputs only: the others are zeros."""

    def __init__(self, bwd, used, out_avals, symbolic_zeros):
        self.bwd, self.used, self.symbolic_zeros = bwd, list(used), symbolic_zeros
        self.out_avals = [tangent_aval(a) for a in out_avals]
        self.rule_name = bwd.rule_name

    def __call__(self, *args):
        n_res = len(args) - sum(self.used)
        res, given = list(args[:n_res]), iter(args[n_res:])
        cts = [
            next(given) if u else Zero(a) for a, u in zip(self.out_avals, self.used, strict=True)
        ]
        if not self.symbolic_zeros:
            cts = [instantiate_zeros(c) for c in cts]
        return self.bwd(*res, *cts)


def _custom_vjp_call_dce(used_outputs, eqn):
    """Unused outputs leave ``call_jaxpr`` and ``fwd``; ``bwd`` gets zero cotangents for
    them. Every operand stays, as the rules take them all."""
    return dce_keeping_operands(used_outputs, eqn, _prune_vjp_rules)


def _prune_vjp_rules(params, used_outputs):
    return {
        "fwd_jaxpr_thunk": PrunedForward(params["fwd_jaxpr_thunk"], used_outputs),
        "bwd": PrunedBackward(
            params["bwd"], used_outputs, params["call_jaxpr"].out_avals, params["symbolic_zeros"]
        ),
    }


def _custom_vjp_call_pp(params):
    fwd = params["fwd_jaxpr_thunk"]
    shown = [("name", fwd.primal_name), ("bwd", params["bwd"].rule_name)]
    shown += [("call_jaxpr", params["call_jaxpr"]), ("fwd", fwd.rule_name)]
    if params["num_consts"]:
        shown.append(("num_consts", params["num_consts"]))
    return [*shown, ("symbolic_zeros", params["symbolic_zeros"])]


custom_vjp_call_p.def_jvp(_custom_vjp_call_jvp)
custom_vjp_call_p.def_batching(_custom_vjp_call_batching)
dce_rules[custom_vjp_call_p] = _custom_vjp_call_dce


def _custom_vjp_call_complete(params, in_avals, out_avals):
    """The params of an equation read from text: the rules are known by name only."""
    fwd = RuleFromText("custom_vjp_call", params["name"], params["fwd"])
    return {
        "call_jaxpr": params["call_jaxpr"],
        "fwd_jaxpr_thunk": fwd,
        "bwd": RuleFromText("custom_vjp_call", params["name"], params["bwd"]),
        "num_consts": params.get("num_consts", 0),
        "out_trees": fwd,  # a function too
        "symbolic_zeros": params["symbolic_zeros"],
    }


custom_vjp_call_p.def_pp_params(_custom_vjp_call_pp, _custom_vjp_call_complete)


# ---------------------------------------------------------------- custom_lin

custom_lin_p = Primitive("custom_lin")
custom_lin_p.multiple_results = True


def _custom_lin_abstract_eval(*_, out_avals, **__):
    return list(out_avals)


def raise_custom_vjp_error_on_jvp(*_, **__):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_transpose(cts, *args, num_res, bwd, symbolic_zeros, in_zeros, **_):
    if not symbolic_zeros:
        cts = [instantiate_zeros(c) for c in cts]
    cts_in = bwd(*args[:num_res], *cts)
    return [None] * num_res + [c for c, z in zip(cts_in, in_zeros, strict=True) if not z]


def _custom_lin_pp(params):
    shown = {k: v for k, v in params.items() if k != "out_avals"}
    shown["bwd"] = params["bwd"].rule_name
    shown["in_zeros"] = list(params["in_zeros"])
    return shown


custom_lin_p.def_abstract_eval(_custom_lin_abstract_eval)
custom_lin_p.def_impl(raise_custom_vjp_error_on_jvp)
custom_lin_p.def_lowering(raise_custom_vjp_error_on_jvp)
custom_lin_p.def_batching(raise_custom_vjp_error_on_jvp)
custom_lin_p.def_jvp(raise_custom_vjp_error_on_jvp)
custom_lin_p.def_transpose(_custom_lin_transpose)
custom_lin_p.def_pp_params(_custom_lin_pp, unparsable)
