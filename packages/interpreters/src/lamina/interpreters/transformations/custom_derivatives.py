"""Custom derivatives, JAX's ``jax.custom_derivatives``: ``custom_jvp``
(:mod:`.custom_jvp`), ``custom_vjp`` (:mod:`.custom_vjp`), ``custom_gradient`` (a
``custom_vjp`` whose function returns its own VJP), and ``closure_convert``, which turns
the values a function closes over into arguments so that a custom rule can
differentiate with respect to them.
"""

from __future__ import annotations

from lamina.interpreters.core.tangents import tangent_aval
from lamina.interpreters.core.tracing import Tracer, shaped_abstractify
from lamina.interpreters.jaxprs.calls import eval_jaxpr
from lamina.interpreters.jaxprs.staging import DynamicJaxprTracer, describe_function, trace_to_jaxpr
from lamina.interpreters.transformations.ad import JVPTracer
from lamina.interpreters.transformations.batching import BatchTracer
from lamina.interpreters.transformations.custom_calls import (
    SymbolicZero,
    function_name,
    zero_from_primal,
)
from lamina.interpreters.transformations.custom_jvp import (
    CustomJVPException,
    custom_jvp,
    custom_jvp_call_p,
)
from lamina.interpreters.transformations.custom_vjp import (
    CustomVJPException,
    CustomVJPPrimal,
    custom_lin_p,
    custom_vjp,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
)
from lamina.ir import dtypes, transformation_boundary, tree_util

__all__ = [
    "CustomJVPException",
    "CustomVJPException",
    "CustomVJPPrimal",
    "SymbolicZero",
    "closure_convert",
    "custom_gradient",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_lin_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]


@transformation_boundary
def closure_convert(fun, *example_args):
    """``(converted_fun, hoisted_consts)``: ``converted_fun(*args, *hoisted_consts)``
    equals ``fun(*args)`` for arguments of the types of ``example_args``, and
    ``hoisted_consts`` are the values ``fun`` closes over that an enclosing
    transformation may be differentiating (tracers). Pass them through a
    ``custom_vjp`` function as arguments to get their cotangents from its ``bwd``."""
    flat, in_tree = tree_util.tree_flatten(example_args)
    box = {}

    def flat_fun(*xs):
        out_flat, box["out_tree"] = tree_util.tree_flatten(
            fun(*tree_util.tree_unflatten(in_tree, xs))
        )
        return out_flat

    in_avals = [shaped_abstractify(x) for x in flat]
    closed, _ = trace_to_jaxpr(flat_fun, in_avals, describe_function(fun))
    out_tree, consts = box["out_tree"], closed.consts
    hoist = [_maybe_perturbed(c) for c in consts]
    kept = [c for c, h in zip(consts, hoist, strict=True) if not h]
    hoisted = [c for c, h in zip(consts, hoist, strict=True) if h]

    def converted_fun(*args_and_consts):
        n_args = len(args_and_consts) - len(hoisted)
        args, hoisted_in = args_and_consts[:n_args], iter(args_and_consts[n_args:])
        kept_in = iter(kept)
        all_consts = [next(hoisted_in) if h else next(kept_in) for h in hoist]
        args_flat, args_tree = tree_util.tree_flatten(tuple(args))
        if args_tree != in_tree:
            raise TypeError(
                "The inputs to the closure produced by closure_convert must have the same "
                "Pytree structure as the example arguments passed when closure_convert was "
                f"called. Expected {in_tree}, but got {args_tree}"
            )
        outs = eval_jaxpr(closed.jaxpr, all_consts, *args_flat)
        return tree_util.tree_unflatten(out_tree, outs)

    return converted_fun, hoisted


def _maybe_perturbed(x) -> bool:
    """Whether ``x`` may carry a tangent (JAX's heuristic): tracers being differentiated,
    or staged values of a differentiable type, looking through batching."""
    if not isinstance(x, Tracer):
        return False
    if isinstance(x, JVPTracer):
        return True
    if isinstance(x, BatchTracer):
        return _maybe_perturbed(x.val)
    if isinstance(x, DynamicJaxprTracer):
        return tangent_aval(x.aval).dtype != dtypes.float0
    return True


# ---------------------------------------------------------------- custom_gradient


@transformation_boundary
def custom_gradient(fun):
    """``fun(*args) -> (output, vjp_fn)`` as a function with the custom VJP ``vjp_fn``
    (TensorFlow's ``tf.custom_gradient``). ``vjp_fn(output_cotangent)`` returns a tuple
    with a cotangent per argument (or, for one argument, that cotangent); the values
    it closes over become residuals."""

    @custom_vjp
    def wrapped_fun(*args, **kwargs):
        ans, _ = fun(*args, **kwargs)
        return ans

    def fwd(*args, **kwargs):
        ans, rule = fun(*args, **kwargs)
        ans_flat, out_tree = tree_util.tree_flatten((ans,))
        box = {}

        def flat_rule(*cts):
            out = rule(*tree_util.tree_unflatten(out_tree, cts))
            flat, box["in_tree"] = tree_util.tree_flatten(out)
            return flat

        ct_avals = [tangent_aval(shaped_abstractify(x)) for x in ans_flat]
        closed, _ = trace_to_jaxpr(flat_rule, ct_avals, function_name(rule))
        return ans, _Residuals(closed.jaxpr, box["in_tree"], out_tree, closed.consts)

    def bwd(res, cts):
        cts_flat, out_tree = tree_util.tree_flatten((cts,))
        if out_tree != res.out_tree:
            raise TypeError(f"{res.out_tree}\n!=\n{out_tree}")
        cts_out = tree_util.tree_unflatten(
            res.in_tree, eval_jaxpr(res.jaxpr, res.consts, *cts_flat)
        )
        return (cts_out,) if tree_util.treedef_is_leaf(res.in_tree) else cts_out

    wrapped_fun.defvjp(fwd, bwd)
    return wrapped_fun


@tree_util.register_pytree_node_class
class _Residuals:
    """What ``custom_gradient``'s ``vjp_fn`` needs: its Jaxpr (static) and the values
    it closed over (the residual arrays)."""

    def __init__(self, jaxpr, in_tree, out_tree, consts):
        self.jaxpr, self.in_tree, self.out_tree, self.consts = jaxpr, in_tree, out_tree, consts

    def tree_flatten(self):
        return self.consts, (self.jaxpr, self.in_tree, self.out_tree)

    @classmethod
    def tree_unflatten(cls, aux, consts):
        return cls(*aux, list(consts))
