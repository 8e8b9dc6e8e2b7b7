"""Partial evaluation of a Jaxpr under a saving policy: the heart of ``checkpoint``.

Given which inputs of a Jaxpr are *unknown* (tangents, when differentiating), the
Jaxpr is split in two:

- the *known* Jaxpr runs the equations whose inputs are all known: it maps the known
  inputs to the known outputs and the *residuals* that the other side needs;
- the *unknown* Jaxpr maps the residuals and the unknown inputs to the unknown
  outputs: it holds the equations with an unknown input and, in front of them, the
  known equations it must *recompute*.

A known value the unknown side needs is a residual when it is a known input, or the
output of an equation the policy calls saveable (``policy(primitive, *input_avals,
**params)`` is true, ``Saveable`` or ``Offloadable``); otherwise the equation producing
it is recomputed on the unknown side, and its own inputs are needed in turn. With
``nothing_saveable`` only inputs are saved; with ``everything_saveable`` nothing is
recomputed.

Call-like equations (``jit``, nested ``checkpoint``) with both known and unknown
inputs are split the same way, recursively, under the same policy (as JAX does):
their known halves run on the known side and their intermediate residuals are saved.
A call whose inputs are all known is one equation: saved or recomputed whole.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from lamina.interpreters.jaxprs.calls import jit_p, jit_params
from lamina.interpreters.transformations.checkpoint_markers import saves
from lamina.ir import ClosedJaxpr, DropVar, Jaxpr, Var, new_jaxpr_eqn, remat_split_rules

__all__ = ["JaxprSplit", "from_jax_remat_rule", "split_jaxpr"]

# Call-like primitives split recursively when some operands are unknown, by their rules
# in ``remat_split_rules``: ``rule(eqn, in_unknown, policy) -> (known_eqn, unknown_eqn,
# saved_vars)``. ``known_eqn`` (or None) takes the eqn's known operands and defines its
# known outputs plus ``saved_vars`` (fresh vars, always residuals); ``unknown_eqn`` (or
# None) takes residuals, known and unknown operands and defines the eqn's unknown
# outputs. The known values it reads are saved or recomputed as the policy says.


@dataclass
class JaxprSplit:
    """The two halves of a Jaxpr; see the module docstring.

    ``known``: constvars (all of the original's), known invars -> known outputs, then
    the residuals computed inside it (``num_res`` of them).
    ``unknown``: constvars ``unknown_constvars`` (indices into the original's),
    invars = residuals then the unknown inputs it uses -> unknown outputs.
    ``residual_inputs[i]`` is the index of the original invar the i-th residual is, or
    ``None`` for one computed by ``known`` (they come out of it in order).
    """

    known: Jaxpr
    unknown: Jaxpr
    out_unknown: list[bool]
    num_res: int
    residual_inputs: list[int | None]
    unknown_inputs_used: list[bool]  # one per unknown invar of the original
    unknown_constvars: list[int]


def _is_var(atom) -> bool:
    return isinstance(atom, Var) and not isinstance(atom, DropVar)


def split_jaxpr(jaxpr: Jaxpr, in_unknown, policy) -> JaxprSplit:
    """Splits ``jaxpr`` (its constvars known) given which invars are unknown."""
    known_inputs = {
        v: i for i, (v, u) in enumerate(zip(jaxpr.invars, in_unknown, strict=True)) if not u
    }
    walk = _Walk(jaxpr, in_unknown, policy)
    out_unknown = [_is_var(v) and v in walk.unknown_vars for v in jaxpr.outvars]
    unknown_outs = [v for v, u in zip(jaxpr.outvars, out_unknown, strict=True) if u]
    staged, needed = _live_unknown_eqns(walk, unknown_outs)
    residuals, recomputed = _residuals(walk, needed, known_inputs, set(jaxpr.constvars), policy)

    residual_set = set(residuals)
    unknown_eqns = []
    for eqn, is_unknown in walk.ordered:
        if id(eqn) in staged:
            unknown_eqns.append(eqn)
        elif not is_unknown and id(eqn) in recomputed:
            unknown_eqns.append(_without_outputs(eqn, residual_set))
    unknown_invars = [v for v, u in zip(jaxpr.invars, in_unknown, strict=True) if u]
    used = _used_vars(unknown_eqns, unknown_outs)
    inputs_used = [v in used for v in unknown_invars]
    unknown_constvars = [i for i, v in enumerate(jaxpr.constvars) if v in used]
    unknown = Jaxpr(
        [jaxpr.constvars[i] for i in unknown_constvars],
        residuals + [v for v, u in zip(unknown_invars, inputs_used, strict=True) if u],
        unknown_outs,
        unknown_eqns,
    )

    computed = [v for v in residuals if v not in known_inputs]
    known_outs = [v for v, u in zip(jaxpr.outvars, out_unknown, strict=True) if not u]
    known = Jaxpr(
        jaxpr.constvars,
        [v for v, u in zip(jaxpr.invars, in_unknown, strict=True) if not u],
        known_outs + computed,
        _live_known_eqns(walk.ordered, known_outs + computed),
    )
    return JaxprSplit(
        known=known,
        unknown=unknown,
        out_unknown=out_unknown,
        num_res=len(computed),
        residual_inputs=[known_inputs.get(v) for v in residuals],
        unknown_inputs_used=inputs_used,
        unknown_constvars=unknown_constvars,
    )


class _Walk:
    """One pass over the equations: each is known (all inputs known) or unknown, and
    call-like ones with both kinds of input are split in two by their rule."""

    def __init__(self, jaxpr: Jaxpr, in_unknown, policy):
        self.unknown_vars = {v for v, u in zip(jaxpr.invars, in_unknown, strict=True) if u}
        self.producer = {}  # known var -> the known eqn defining it
        self.saved = set()  # vars that are residuals whatever the policy says
        self.ordered = []  # (eqn, is_unknown) in program order
        for eqn in jaxpr.eqns:
            unknown_ins = [_is_var(a) and a in self.unknown_vars for a in eqn.invars]
            rule = remat_split_rules.get(eqn.primitive)
            if not any(unknown_ins):
                self._add(eqn, False)
            elif rule is None or all(unknown_ins):
                self._add(eqn, True)
            else:
                known_eqn, unknown_eqn, saved_vars = rule(eqn, unknown_ins, policy)
                if known_eqn is not None:
                    self._add(known_eqn, False)
                self.saved.update(saved_vars)
                if unknown_eqn is not None:
                    self._add(unknown_eqn, True)

    def _add(self, eqn, is_unknown: bool):
        self.ordered.append((eqn, is_unknown))
        if is_unknown:
            self.unknown_vars.update(eqn.outvars)
        else:
            self.producer.update((v, eqn) for v in eqn.outvars)


def _live_unknown_eqns(walk: _Walk, outs):
    """The unknown equations the outputs ``outs`` need (by id), and the known
    variables those read."""
    live = set(outs)
    staged = set()
    for eqn, is_unknown in reversed(walk.ordered):
        if is_unknown and (eqn.effects or any(v in live for v in eqn.outvars)):
            staged.add(id(eqn))
            live.update(a for a in eqn.invars if _is_var(a))
    return staged, [v for v in live if v not in walk.unknown_vars]


def _residuals(walk: _Walk, needed, known_inputs, constvars, policy):
    """Each needed known variable is a residual (a known input, a saved output, or
    the output of an equation the policy saves) or its equation is recomputed, and
    then that equation's inputs are needed. Returns the residuals in program order
    and the recomputed equations (by id). Constvars are available on both sides."""
    residuals, recomputed = [], set()
    pending, seen = deque(needed), set(needed)
    while pending:
        var = pending.popleft()
        if var in constvars:
            continue
        eqn = walk.producer.get(var)
        if var in known_inputs or var in walk.saved or _saveable(policy, eqn):
            residuals.append(var)
            continue
        recomputed.add(id(eqn))
        for a in eqn.invars:
            if _is_var(a) and a not in seen:
                seen.add(a)
                pending.append(a)
    residuals.sort()  # variables are numbered as they are made: program order
    return residuals, recomputed


def _saveable(policy, eqn) -> bool:
    avals = [a.aval for a in eqn.invars]
    return saves(policy(eqn.primitive, *avals, **eqn.params))


def _without_outputs(eqn, taken: set):
    """``eqn`` recomputed where some of its outputs are residuals already: those
    outputs get fresh, unused binders so each variable is defined once."""
    if not any(v in taken for v in eqn.outvars):
        return eqn
    return eqn.replace(outvars=[DropVar(v.aval) if v in taken else v for v in eqn.outvars])


def _used_vars(eqns, outvars) -> set:
    used = {v for v in outvars if _is_var(v)}
    for eqn in eqns:
        used.update(a for a in eqn.invars if _is_var(a))
    return used


def _live_known_eqns(ordered, outs) -> list:
    live = {v for v in outs if _is_var(v)}
    kept = []
    for eqn, is_unknown in reversed(ordered):
        if not is_unknown and (eqn.effects or any(v in live for v in eqn.outvars)):
            kept.append(eqn)
            live.update(a for a in eqn.invars if _is_var(a))
    kept.reverse()
    return kept


# --------------------------------------------------------------------------- call rules


def split_call_eqn(eqn, in_unknown, policy, inner: Jaxpr):
    """The pieces every call rule needs: the split of ``inner`` (the callee, with
    ``eqn``'s operands as its invars) and the atoms of the two new equations.
    Returns ``(split, known_invars, known_outvars, unknown_invars, saved_vars)``."""
    split = split_jaxpr(inner, in_unknown, policy)
    known_invars = [a for a, u in zip(eqn.invars, in_unknown, strict=True) if not u]
    known_outs = [v for v, u in zip(eqn.outvars, split.out_unknown, strict=True) if not u]
    computed = [Var(v.aval) for v in split.known.outvars[len(known_outs) :]]
    computed_it = iter(computed)
    residual_atoms = [
        next(computed_it) if i is None else eqn.invars[i] for i in split.residual_inputs
    ]
    unknown_operands = [a for a, u in zip(eqn.invars, in_unknown, strict=True) if u]
    used = [a for a, u in zip(unknown_operands, split.unknown_inputs_used, strict=True) if u]
    return split, known_invars, known_outs + computed, residual_atoms + used, computed


def _split_jit(eqn, in_unknown, policy):
    closed = eqn.params["jaxpr"]
    name = eqn.params["name"]
    split, k_in, k_out, u_in, saved = split_call_eqn(eqn, in_unknown, policy, closed.jaxpr)
    known = ClosedJaxpr(split.known, closed.consts)
    source = eqn.source_info
    known_eqn = new_jaxpr_eqn(k_in, k_out, jit_p, jit_params(known, name), source_info=source)
    if not any(split.out_unknown):
        return known_eqn, None, saved
    unknown = ClosedJaxpr(split.unknown, [closed.consts[i] for i in split.unknown_constvars])
    u_out = [v for v, u in zip(eqn.outvars, split.out_unknown, strict=True) if u]
    unknown_eqn = new_jaxpr_eqn(u_in, u_out, jit_p, jit_params(unknown, name), source_info=source)
    return known_eqn, unknown_eqn, saved


jit_p.def_remat_split(_split_jit)


# --------------------------------------------------------------------------- JAX's rules


def from_jax_remat_rule(primitive, rule):
    """Lamina's split rule for ``rule(saveable, unks_in, inst_in, eqn) -> (eqn_known,
    eqn_staged, unks_out, inst_out, residuals)``, a rule of JAX's
    ``partial_eval_jaxpr_custom_rules``. Every operand is given as instantiated (lamina
    saves or recomputes the known values the staged equation reads, by the policy);
    outputs the rule calls known and its known equation defines are dropped from the
    staged equation, which defines the unknown ones."""
    del primitive

    def split(eqn, in_unknown, policy):
        known, staged, unks_out, _, residuals = rule(
            policy, list(in_unknown), [True] * len(eqn.invars), eqn
        )
        if staged is not None and known is not None:
            known_outs = {v for v, u in zip(eqn.outvars, unks_out, strict=True) if not u}
            known_outs &= set(known.outvars)
            staged = staged.replace(
                outvars=[DropVar(v.aval) if v in known_outs else v for v in staged.outvars]
            )
        return known, staged, [v for v in residuals if _is_var(v)]

    return split
