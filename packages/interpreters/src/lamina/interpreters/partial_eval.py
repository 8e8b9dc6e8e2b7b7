"""``jax.interpreters.partial_eval``: JAX's API for partial evaluation and Jaxprs.

``trace_to_jaxpr_dynamic`` stages a function (a ``WrappedFun`` or a plain callable of
flat arguments returning a sequence) into a Jaxpr; ``trace_to_jaxpr_nounits`` runs it on
``PartialVal``s, computing the known part now and staging the unknown part; ``dce_jaxpr``
and its rules prune Jaxprs.

``custom_partial_eval_rules[p] = rule`` takes JAX's ``rule(trace, *tracers, **params)``:
the trace is lamina's ``PartialEvalTrace``, which has the ``JaxprTrace`` methods rules
use (``default_process_primitive``, ``instantiate_const``, ``new_const``,
``new_instantiated_const``, ``new_instantiated_literal``, ``to_jaxpr_tracer``,
``parent_trace``), the operands are :class:`JaxprTracer`s (``pval``, ``aval``,
``is_known()``), and ``JaxprTracer(trace, PartialVal.unknown(aval), None)`` with
``new_eqn_recipe`` stages an equation by hand. As in JAX the rule runs in the parent
trace, for known operands too.

``partial_eval_jaxpr_custom_rules[p] = rule`` takes JAX's ``rule(saveable, unks_in,
inst_in, eqn) -> (eqn_known, eqn_staged, unks_out, inst_out, residuals)`` for
``checkpoint``'s split of a Jaxpr, registered in ``lamina.ir.remat_split_rules``. lamina
calls it only for equations with both known and unknown operands (others are known or
staged whole, the policy deciding whether known results are saved), and with every
operand instantiated: known values the staged equation reads are saved or recomputed
by the policy, so the residuals a rule lists for them are not needed.
"""

from __future__ import annotations

from typing import Any

from lamina.interpreters.core.rule_registries import RuleRegistry
from lamina.interpreters.core.tracing import find_current_trace
from lamina.interpreters.jaxprs.dce import (
    dce_jaxpr,
    dce_jaxpr_call_rule,
    dce_jaxpr_closed_call_rule,
    dce_jaxpr_consts,
    dce_rules,
)
from lamina.interpreters.jaxprs.staging import DynamicJaxprTracer, trace_to_jaxpr
from lamina.interpreters.transformations.checkpoint_partial_eval import from_jax_remat_rule
from lamina.interpreters.transformations.partial_eval import (
    JaxprTracer,
    PartialVal,
    from_jax_rule,
    partial_eval_flat,
)
from lamina.interpreters.transformations.partial_eval import (
    new_eqn_recipe as new_eqn_recipe,  # JAX's internal helper, for hand-staged equations
)
from lamina.ir import AbstractValue, Jaxpr, partial_eval_rules, remat_split_rules

__all__ = [
    "DynamicJaxprTracer",
    "JaxprTracer",
    "PartialVal",
    "Val",
    "custom_partial_eval_rules",
    "dce_jaxpr",
    "dce_jaxpr_call_rule",
    "dce_jaxpr_closed_call_rule",
    "dce_jaxpr_consts",
    "dce_rules",
    "partial_eval_jaxpr_custom_rules",
    "trace_to_jaxpr_dynamic",
    "trace_to_jaxpr_nounits",
]

Val = Any

custom_partial_eval_rules = RuleRegistry(partial_eval_rules, from_jax_rule, reads_table=False)
partial_eval_jaxpr_custom_rules = RuleRegistry(
    remat_split_rules, from_jax_remat_rule, reads_table=False
)


def _flat_callable(fun):
    call = getattr(fun, "call_wrapped", fun)
    return lambda *args: list(call(*args))


def trace_to_jaxpr_dynamic(
    fun, in_avals, *, keep_inputs=None, lower: bool = False, auto_dce: bool = False
) -> tuple[Jaxpr, list[AbstractValue], list[Any]]:
    """Stages ``fun`` on inputs of types ``in_avals``; returns ``(jaxpr, out_avals,
    consts)``, the constants being the values of ``jaxpr``'s constvars. With
    ``keep_inputs``, only the inputs it marks stay invars; with ``auto_dce``, unused
    equations are dropped."""
    del lower
    closed, _ = trace_to_jaxpr(_flat_callable(fun), list(in_avals), "trace_to_jaxpr_dynamic")
    jaxpr = closed.jaxpr
    if keep_inputs is not None:
        jaxpr = jaxpr.replace(
            invars=[v for v, k in zip(jaxpr.invars, keep_inputs, strict=True) if k]
        )
    if auto_dce:
        kept, used_consts, _ = dce_jaxpr_consts(jaxpr, [True] * len(jaxpr.outvars), True)
        consts = [c for c, u in zip(closed.consts, used_consts, strict=True) if u]
        return kept, list(closed.out_avals), consts
    return jaxpr, list(closed.out_avals), list(closed.consts)


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """Runs ``fun`` on ``pvals``: the known inputs' work is done now, the rest staged.
    Returns ``(jaxpr, out_pvals, consts)``: ``jaxpr`` takes the unknown inputs (its
    constvars are the known values it uses, ``consts``) and computes the unknown
    outputs, in order; ``out_pvals`` holds the known outputs' values. Outputs marked by
    ``instantiate`` (a bool or one per output) are staged even when known."""
    call = _flat_callable(fun)
    known = [pv.const for pv in pvals if pv.is_known()]
    unknown_avals = [pv.aval for pv in pvals if not pv.is_known()]

    def reordered(*args):
        k, u = iter(args[: len(known)]), iter(args[len(known) :])
        outs = call(*[next(k) if pv.is_known() else next(u) for pv in pvals])
        inst = [instantiate] * len(outs) if isinstance(instantiate, bool) else instantiate
        staging = find_current_trace().staging  # the PartialEvalTrace running ``fun``
        return [staging.to_jaxpr_tracer(o) if i else o for o, i in zip(outs, inst, strict=True)]

    outs, staged = partial_eval_flat(reordered, known, unknown_avals, "trace_to_jaxpr_nounits")
    out_avals = iter(staged.out_avals)
    out_pvals = [
        PartialVal.unknown(next(out_avals)) if o is None else PartialVal.known(o) for o in outs
    ]
    return staged.jaxpr, out_pvals, list(staged.consts)
