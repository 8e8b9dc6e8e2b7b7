"""``jax.interpreters.partial_eval``: JAX's API for partial evaluation and Jaxprs.

``trace_to_jaxpr_dynamic`` stages a function (a ``WrappedFun`` or a plain callable of
flat arguments returning a sequence) into a Jaxpr; ``trace_to_jaxpr_nounits`` runs it on
``PartialVal``s, computing the known part now and staging the unknown part; ``dce_jaxpr``
and its rules prune Jaxprs. ``custom_partial_eval_rules[p] = rule`` registers
``rule(trace, *args, **params) -> outs`` in ``lamina.ir.partial_eval_rules``: the
trace is lamina's ``PartialEvalTrace`` (``trace.is_unknown(x)``, ``trace.parent``,
``trace.staging``), so rules written against JAX's ``JaxprTrace`` need porting.
``partial_eval_jaxpr_custom_rules`` is kept for JAX's API; lamina's rematerialization
reads ``lamina.ir.remat_split_rules``. ``JaxprTracer`` is lamina's staging tracer, which
stands for unknown values during partial evaluation.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from lamina.interpreters.core.rule_registries import RuleRegistry
from lamina.interpreters.core.tracing import find_current_trace, shaped_abstractify
from lamina.interpreters.jaxprs.dce import (
    dce_jaxpr,
    dce_jaxpr_call_rule,
    dce_jaxpr_closed_call_rule,
    dce_jaxpr_consts,
    dce_rules,
)
from lamina.interpreters.jaxprs.staging import DynamicJaxprTracer, trace_to_jaxpr
from lamina.interpreters.transformations.partial_eval import partial_eval_flat
from lamina.ir import AbstractValue, Jaxpr, Primitive, partial_eval_rules

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
JaxprTracer = DynamicJaxprTracer


class PartialVal(NamedTuple):
    """A value known now (``(None, value)``) or only by its type (``(aval, None)``)."""

    aval: AbstractValue | None
    const: Any

    @classmethod
    def known(cls, const) -> PartialVal:
        return cls(None, const)

    @classmethod
    def unknown(cls, aval: AbstractValue) -> PartialVal:
        return cls(aval, None)

    def is_known(self) -> bool:
        return self.aval is None

    def get_known(self):
        """The value if known, else None."""
        return self.const if self.aval is None else None

    def get_aval(self) -> AbstractValue:
        """The type of the value, known or not."""
        if self.aval is None:
            return _aval_of(self.const)
        return self.aval


def _aval_of(x):
    return shaped_abstractify(x)


def _adapt_partial_eval(p: Primitive, rule):
    def adapted(trace, args, **params):
        return rule(trace, *args, **params)

    return adapted


custom_partial_eval_rules = RuleRegistry(partial_eval_rules, _adapt_partial_eval, reads_table=False)
partial_eval_jaxpr_custom_rules: dict[Primitive, Any] = {}


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
