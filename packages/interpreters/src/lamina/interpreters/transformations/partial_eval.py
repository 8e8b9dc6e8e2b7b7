"""Partial evaluation: splitting a computation into the part whose inputs are known and
the part that depends on unknown inputs.

A :class:`PartialEvalTrace` holds a *staging* :class:`DynamicJaxprTrace`. Unknown
values are that trace's tracers; known values are values of the parent trace. A
primitive with only known operands is bound in the parent (it runs now, or is traced by
an enclosing transformation); one with an unknown operand is staged into the Jaxpr,
where the known operands it uses become constants. ``jit`` equations with mixed inputs
are split in two: a known ``jit`` run in the parent that also returns the *residuals*
the unknown part needs, and an unknown ``jit`` staged with the residuals as inputs.

``linearize`` runs a JVP whose primals are known and tangents unknown, so the staged
Jaxpr is the linear map from input tangents to output tangents.

Rules written for JAX's ``JaxprTrace`` (``partial_eval.custom_partial_eval_rules``) see
every operand as a :class:`JaxprTracer` carrying a :class:`PartialVal`, and call the
trace's JAX methods (``default_process_primitive``, ``instantiate_const``,
``new_instantiated_const``, ...) or stage an equation with :func:`new_eqn_recipe`;
:func:`from_jax_rule` turns such a rule into one of lamina's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from lamina.interpreters.core.tracing import (
    Trace,
    find_current_trace,
    set_current_trace,
    shaped_abstractify,
)
from lamina.interpreters.jaxprs.calls import (
    UNSPECIFIED,
    call_jaxpr,
    eval_jaxpr,
    jit_p,
    jit_params,
    none_for_unspecified,
)
from lamina.interpreters.jaxprs.jaxpr_cache import cache_on_jaxpr
from lamina.interpreters.jaxprs.staging import DynamicJaxprTrace, DynamicJaxprTracer, trace_to_jaxpr
from lamina.interpreters.transformations import ad
from lamina.ir import (
    AbstractRef,
    AbstractValue,
    AccumEffect,
    ClosedJaxpr,
    Jaxpr,
    Literal,
    Var,
    WriteEffect,
    no_effects,
    partial_eval_rules,
)

__all__ = [
    "JaxprTracer",
    "PartialEvalTrace",
    "PartialVal",
    "from_jax_rule",
    "linearize_flat",
    "new_eqn_recipe",
    "partial_eval_flat",
    "partial_eval_jaxpr",
]


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
            return shaped_abstractify(self.const)
        return self.aval


class JaxprTracer:
    """An operand or result of a JAX-style partial evaluation rule: its ``pval`` (known
    value or type) and, once unknown and staged, the staging tracer standing for it.
    ``recipe`` is free for the rule (JAX keeps how the value is computed there)."""

    __slots__ = ("_trace", "pval", "recipe", "staged")

    def __init__(self, trace: PartialEvalTrace, pval: PartialVal, recipe=None, staged=None):
        self._trace = trace
        self.pval = pval
        self.recipe = recipe
        self.staged = staged

    @property
    def aval(self):
        return self.pval.get_aval()

    def is_known(self) -> bool:
        return self.pval.is_known()

    def value(self):
        """What lamina's partial evaluation works with: the known value, or the staging
        tracer of an unknown one."""
        if self.pval.is_known():
            return self.pval.const
        if self.staged is None:
            raise ValueError(
                "an unknown JaxprTracer returned by a partial evaluation rule was never "
                "staged: make it an output of new_eqn_recipe"
            )
        return self.staged

    def __repr__(self):
        return f"Traced<{self.aval}:{self._trace}>"


class PartialEvalTrace(Trace):
    """Binds known work in ``parent``; stages work on unknown values into ``staging``."""

    def __init__(self, parent: Trace, debug_info: str | None = None):
        super().__init__()
        self.parent = parent
        self.staging = DynamicJaxprTrace(debug_info)

    def new_unknown(self, aval) -> DynamicJaxprTracer:
        return self.staging.new_arg(aval)

    def is_unknown(self, x) -> bool:
        return isinstance(x, DynamicJaxprTracer) and x._trace is self.staging

    def process_primitive(self, primitive, args, params):
        rule = partial_eval_rules.get(primitive)
        if not any(self.is_unknown(x) for x in args) and not getattr(rule, "sees_known", False):
            with set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        if rule is not None:
            return rule(self, args, **params)
        return self.staging.process_primitive(primitive, args, params)

    # JAX's ``JaxprTrace`` methods, for rules written for it: they take and give
    # :class:`JaxprTracer`s.

    @property
    def parent_trace(self) -> Trace:
        return self.parent

    def to_jaxpr_tracer(self, x) -> JaxprTracer:
        """``x`` (a value, a staging tracer or a :class:`JaxprTracer`) as a JaxprTracer."""
        if isinstance(x, JaxprTracer):
            return x
        if self.is_unknown(x):
            return JaxprTracer(self, PartialVal.unknown(x.aval), staged=x)
        return self.new_const(x)

    def new_const(self, val) -> JaxprTracer:
        """A known value."""
        return JaxprTracer(self, PartialVal.known(val))

    def new_instantiated_const(self, val) -> JaxprTracer:
        """A known value made unknown: a constant of the staged Jaxpr."""
        staged = self.staging.to_jaxpr_tracer(val)
        return JaxprTracer(self, PartialVal.unknown(staged.aval), staged=staged)

    new_instantiated_literal = new_instantiated_const

    def instantiate_const(self, tracer) -> JaxprTracer:
        """``tracer`` unknown: a known one becomes a constant of the staged Jaxpr."""
        tracer = self.to_jaxpr_tracer(tracer)
        if tracer.is_known():
            return self.new_instantiated_const(tracer.pval.const)
        return tracer

    def default_process_primitive(self, primitive, tracers, params):
        """``primitive`` bound in the parent trace if every operand is known (values
        out), else staged (unknown JaxprTracers out)."""
        tracers = [self.to_jaxpr_tracer(t) for t in tracers]
        if all(t.is_known() for t in tracers):
            with set_current_trace(self.parent):
                return primitive.bind(*[t.pval.const for t in tracers], **params)
        staged = [self.instantiate_const(t).staged for t in tracers]
        outs = self.staging.process_primitive(primitive, staged, params)
        wrap = self.to_jaxpr_tracer
        return [wrap(o) for o in outs] if primitive.multiple_results else wrap(outs)

    def process_tangent_side(self, fn, args):
        with set_current_trace(self.staging):
            return fn(*args)

    def split_jit(self, args, params):
        name = params["name"]
        unknown = [self.is_unknown(x) for x in args]
        known_closed, unknown_closed, out_unknown, forwarded = partial_eval_jaxpr(
            params["jaxpr"], unknown, name
        )
        known_args = [x for x, u in zip(args, unknown, strict=True) if not u]
        n_known = len(out_unknown) - sum(out_unknown)
        known_sh, unknown_sh = _split_shardings(params, unknown, out_unknown, known_closed)
        options = params.get("compiler_options_kvs", ())  # both parts keep jit's XLA options
        with set_current_trace(self.parent):
            known_res = call_jaxpr(
                known_closed, *known_args, name=name, compiler_options_kvs=options, **known_sh
            )
        known_outs, computed = known_res[:n_known], iter(known_res[n_known:])
        residuals = [next(computed) if i is None else known_args[i] for i in forwarded]
        unknown_args = [x for x, u in zip(args, unknown, strict=True) if u]
        if unknown_sh:
            unknown_sh["in_shardings"] = (UNSPECIFIED,) * len(residuals) + unknown_sh[
                "in_shardings"
            ]
        unknown_outs = self.staging.process_primitive(
            jit_p,
            [*residuals, *unknown_args],
            jit_params(unknown_closed, name, compiler_options_kvs=options, **unknown_sh),
        )
        k_it, u_it = iter(known_outs), iter(unknown_outs)
        return [next(u_it) if u else next(k_it) for u in out_unknown]

    def __repr__(self):
        return f"PartialEvalTrace(parent={self.parent!r})"


def _split_shardings(params, unknown, out_unknown, known_closed) -> tuple[dict, dict]:
    """The shardings of a ``jit`` equation's known and unknown parts (residuals
    unspecified): empty when the equation has none."""
    ins, outs = params.get("in_shardings"), params.get("out_shardings")
    if ins is None or none_for_unspecified((*ins, *outs)) is None:
        return {}, {}
    known_outs = tuple(s for s, u in zip(outs, out_unknown, strict=True) if not u)
    n_res = len(known_closed.out_avals) - len(known_outs)
    known = {
        "in_shardings": tuple(s for s, u in zip(ins, unknown, strict=True) if not u),
        "out_shardings": known_outs + (UNSPECIFIED,) * n_res,
    }
    unknown_part = {
        "in_shardings": tuple(s for s, u in zip(ins, unknown, strict=True) if u),
        "out_shardings": tuple(s for s, u in zip(outs, out_unknown, strict=True) if u),
    }
    return known, unknown_part


jit_p.def_partial_eval(lambda trace, args, **params: trace.split_jit(args, params))


def new_eqn_recipe(
    trace: PartialEvalTrace,
    in_tracers,
    out_tracers,
    primitive,
    params,
    effects=no_effects,
    source_info=None,
    ctx=None,
):
    """Stages the equation ``primitive`` of ``in_tracers`` (unknown JaxprTracers) whose
    results are ``out_tracers`` (unknown JaxprTracers made by the rule, which become
    staged); returns the equation."""
    del source_info, ctx
    ins = [trace.instantiate_const(t).staged for t in in_tracers]
    out_avals = [t.aval for t in out_tracers]
    outs = trace.staging.stage_equation(primitive, ins, out_avals, params, effects)
    for tracer, staged in zip(out_tracers, outs, strict=True):
        tracer.staged = staged
    return trace.staging.eqns[-1]


def from_jax_rule(primitive, rule):
    """Lamina's partial evaluation rule for ``rule(trace, *tracers, **params)``, written
    for JAX's ``JaxprTrace``: it runs for known operands too (as JAX's does), in the
    parent trace, on :class:`JaxprTracer`s, and may return JaxprTracers or values."""

    def adapted(trace: PartialEvalTrace, args, **params):
        tracers = [trace.to_jaxpr_tracer(x) for x in args]
        with set_current_trace(trace.parent):
            outs = rule(trace, *tracers, **params)
        if primitive.multiple_results:
            return [_lamina_value(o) for o in outs]
        return _lamina_value(outs)

    adapted.sees_known = True
    return adapted


def _lamina_value(x):
    return x.value() if isinstance(x, JaxprTracer) else x


@cache_on_jaxpr
def partial_eval_jaxpr(
    closed: ClosedJaxpr, unknown, name: str, instantiate=False, forward: bool = True
):
    """Splits ``closed``, whose inputs marked ``unknown`` are unknown, in two. Returns
    ``(known, staged, out_unknown, forwarded)``: ``known`` maps the known inputs to the
    known outputs and the residuals; ``staged`` maps all residuals, then the unknown
    inputs, to the unknown outputs; ``out_unknown`` marks the unknown outputs. Outputs
    marked by ``instantiate`` (a bool, or one per output) are unknown even where they
    could be computed. With ``forward``, a residual that is a known input is not returned
    by ``known`` but passed on as it is: ``forwarded`` holds, per residual, the index of
    that known input, else None (always None without ``forward``)."""
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(closed.out_avals)
    known_avals = [a for a, u in zip(closed.in_avals, unknown, strict=True) if not u]
    forced = _unknown_ref_allocations(closed.jaxpr, unknown)
    box = {}

    def known_fun(*kargs):
        it = iter(kargs)
        inner = PartialEvalTrace(find_current_trace())
        try:
            ins = [
                inner.new_unknown(a) if u else next(it)
                for a, u in zip(closed.in_avals, unknown, strict=True)
            ]
            with set_current_trace(inner):
                if forced:
                    outs = _eval_staging(closed.jaxpr, closed.consts, ins, inner, forced)
                else:
                    outs = eval_jaxpr(closed.jaxpr, closed.consts, *ins)
            out_unknown = [
                inner.is_unknown(o) or inst for o, inst in zip(outs, instantiate, strict=True)
            ]
            staged = inner.staging.to_jaxpr(
                [o for o, u in zip(outs, out_unknown, strict=True) if u]
            )
        finally:
            inner.staging.invalidate()
            inner.invalidate()
        forwarded = [
            next((i for i, k in enumerate(kargs) if k is c), None) if forward else None
            for c in staged.consts
        ]
        box.update(staged=staged, out_unknown=out_unknown, forwarded=forwarded)
        known_outs = [o for o, u in zip(outs, out_unknown, strict=True) if not u]
        computed = [c for c, i in zip(staged.consts, forwarded, strict=True) if i is None]
        return [*known_outs, *computed]

    known_closed, _ = trace_to_jaxpr(known_fun, known_avals, name)
    jaxpr = box["staged"].jaxpr
    staged = ClosedJaxpr(jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars]), [])
    return known_closed, staged, box["out_unknown"], box["forwarded"]


def _unknown_ref_allocations(jaxpr, unknown) -> frozenset:
    """The equations of ``jaxpr`` making references into which unknown values are
    written (tangent references, in the JVP of a Jaxpr): they must be staged, though
    their own inputs are known. As the ids of those equations."""
    if not any(eqn.primitive.ref_allocating for eqn in jaxpr.eqns):
        return frozenset()
    unknown_vars = {v for v, u in zip(jaxpr.invars, unknown, strict=True) if u}
    _spread_unknown(jaxpr, unknown_vars)
    return frozenset(
        id(eqn)
        for eqn in jaxpr.eqns
        if eqn.primitive.ref_allocating and eqn.outvars[0] in unknown_vars
    )


def _spread_unknown(jaxpr, unknown_vars: set) -> None:
    """Adds to ``unknown_vars`` the variables of ``jaxpr`` computed from them, and the
    references into which they are written, also inside the Jaxprs of loops, branches
    and calls (whose inputs are the equation's last operands)."""
    changed = True
    while changed:
        changed = False
        for eqn in jaxpr.eqns:
            if not any(type(v) is Var and v in unknown_vars for v in eqn.invars):
                continue
            written = [e.input for e in eqn.effects if isinstance(e, (WriteEffect, AccumEffect))]
            for inner in _inner_jaxprs(eqn.params):
                operands = eqn.invars[len(eqn.invars) - len(inner.invars) :]
                if len(operands) != len(inner.invars):
                    continue
                inner_unknown = {
                    iv for iv, v in zip(inner.invars, operands, strict=True) if v in unknown_vars
                }
                _spread_unknown(inner, inner_unknown)
                written += [
                    v
                    for iv, v in zip(inner.invars, operands, strict=True)
                    if iv in inner_unknown and type(iv.aval) is AbstractRef
                ]
            for v in [*eqn.outvars, *written]:
                if type(v) is Var and v not in unknown_vars:
                    unknown_vars.add(v)
                    changed = True


def _inner_jaxprs(params):
    for value in params.values():
        for v in value if type(value) in (tuple, list) else (value,):
            if isinstance(v, ClosedJaxpr):
                yield v.jaxpr
            elif isinstance(v, Jaxpr):
                yield v


def _eval_staging(jaxpr, consts, args, trace: PartialEvalTrace, forced):
    """``eval_jaxpr`` in the partial evaluation ``trace``, staging the equations in
    ``forced`` (ids) whatever their inputs."""
    env = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(atom):
        return atom.val if isinstance(atom, Literal) else env[atom]

    for eqn in jaxpr.eqns:
        invals = [read(a) for a in eqn.invars]
        if id(eqn) in forced:
            outs = trace.staging.process_primitive(eqn.primitive, invals, eqn.params)
        else:
            outs = eqn.primitive.bind(*invals, **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        env.update(zip(eqn.outvars, outs, strict=True))
    return [read(v) for v in jaxpr.outvars]


def partial_eval_flat(fun, known, unknown_avals, debug_info: str | None = None):
    """Runs ``fun(*known, *unknowns)`` (flat in, flat out) with the ``known`` values
    bound in the current trace and unknown inputs of types ``unknown_avals``. Returns
    ``(outs, staged)``: ``outs`` holds known outputs as values and unknown ones as
    ``None``; ``staged`` is the ``ClosedJaxpr`` from the unknown inputs to the unknown
    outputs (its constants are the known values it uses)."""
    trace = PartialEvalTrace(find_current_trace(), debug_info)
    try:
        unknowns = [trace.new_unknown(a) for a in unknown_avals]
        with set_current_trace(trace):
            outs = list(fun(*known, *unknowns))
        is_unknown = [trace.is_unknown(o) for o in outs]
        staged = trace.staging.to_jaxpr([o for o, u in zip(outs, is_unknown, strict=True) if u])
    finally:
        trace.staging.invalidate()
        trace.invalidate()
    return [None if u else o for o, u in zip(outs, is_unknown, strict=True)], staged


def linearize_flat(fun, primals, tangent_avals, debug_info: str | None = None):
    """The JVP of ``fun`` (flat in, flat out) at ``primals`` with unknown tangents of
    types ``tangent_avals`` (``None`` for a primal not differentiated). Returns
    ``(primals_out, linear)``: ``linear`` is a ``ClosedJaxpr`` from the given tangents
    to every output tangent (zeros instantiated), whose constants are the residuals."""
    diff = [a is not None for a in tangent_avals]
    n = len(primals)

    def jvp_fun(*args):
        ps, ts = args[:n], iter(args[n:])
        tangents = [
            next(ts) if d else ad.Zero(ad.tangent_aval(ad._check_jax_type(p)))
            for p, d in zip(ps, diff, strict=True)
        ]
        outs_p, outs_t = ad.jvp_flat(fun, ps, tangents)
        box["n_out"] = len(outs_p)
        return [*outs_p, *[ad.instantiate_zeros(t) for t in outs_t]]

    box = {}
    outs, staged = partial_eval_flat(
        jvp_fun, primals, [a for a in tangent_avals if a is not None], debug_info
    )
    n_out = box["n_out"]
    primals_out = outs[:n_out]
    # Output tangents that came out known (constants, zeros) become Jaxpr outputs too.
    jaxpr = staged.jaxpr
    tangent_outs = outs[n_out:]
    if any(t is not None for t in tangent_outs):
        staged = with_known_outputs(staged, tangent_outs)
    if any(p is None for p in primals_out):  # a primitive without reverse mode (custom_vmap)
        raise ValueError(
            "Linearization failed to produce known values for all output primals. This is "
            "typically caused by attempting to differentiate a function uses an operation "
            "that does not support reverse-mode autodiff."
        )
    del jaxpr
    return primals_out, staged


def with_known_outputs(staged: ClosedJaxpr, outs):
    """``staged`` with the known values in ``outs`` (not None) spliced into its outputs
    as constants."""
    trace = DynamicJaxprTrace()
    try:
        args = [trace.new_arg(a) for a in staged.in_avals]
        with set_current_trace(trace):
            unknown_outs = iter(eval_jaxpr(staged.jaxpr, staged.consts, *args))
        full = [next(unknown_outs) if o is None else o for o in outs]
        return trace.to_jaxpr(full)
    finally:
        trace.invalidate()
