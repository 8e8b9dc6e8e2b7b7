"""Discharging mutable array references: a Jaxpr that reads and writes ``Ref``s turned
into one that passes arrays instead, which is what gets lowered and compiled.

:func:`discharge_state` retraces a Jaxpr, keeping for each reference the array it
refers to at that point of the program. An equation that takes or makes a reference is
replaced by what its primitive's discharge rule (``lamina.ir.discharge_rules``) binds;
every other equation is bound as it is. Inputs of type ``AbstractRef`` take the array
instead, and the final arrays of the references that were written come out after the
Jaxpr's own outputs.
"""

from __future__ import annotations

from typing import Any

from lamina.interpreters.jaxprs.jaxpr_cache import weak_entry_key
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.ir import AbstractRef, ClosedJaxpr, Jaxpr, Literal, discharge_rules

__all__ = ["Discharged", "discharge_state", "has_refs"]


def _sub_jaxprs(eqn):
    # A primitive whose Jaxprs' references are all its own (a Pallas kernel's blocks)
    # discharges them itself: to the rest of the program it is an ordinary operation.
    if getattr(eqn.primitive, "keeps_refs_inside", False):
        return
    for value in eqn.params.values():
        for v in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(v, ClosedJaxpr):
                yield v.jaxpr
            elif isinstance(v, Jaxpr):
                yield v


_has_refs: dict[int, tuple[Jaxpr, bool]] = {}


def has_refs(jaxpr: Jaxpr | ClosedJaxpr) -> bool:
    """Whether ``jaxpr`` (or a Jaxpr inside it) has a value of type ``AbstractRef``."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    entry = _has_refs.get(id(jaxpr))
    if entry is not None and entry[0] is jaxpr:
        return entry[1]
    found = any(type(v.aval) is AbstractRef for v in (*jaxpr.constvars, *jaxpr.invars)) or any(
        any(type(v.aval) is AbstractRef for v in eqn.outvars)
        or any(has_refs(sub) for sub in _sub_jaxprs(eqn))
        for eqn in jaxpr.eqns
    )
    _has_refs[id(jaxpr)] = (jaxpr, found)
    return found


def _eqn_has_refs(eqn) -> bool:
    return (
        any(type(a.aval) is AbstractRef for a in eqn.invars)
        or any(type(v.aval) is AbstractRef for v in eqn.outvars)
        or any(has_refs(sub) for sub in _sub_jaxprs(eqn))
    )


def run_discharged(jaxpr: Jaxpr, consts, args) -> tuple[list, dict]:
    """Evaluates ``jaxpr`` by binding (under the current trace), references replaced by
    the arrays they hold: ``args``/``consts`` give arrays for inputs of type
    ``AbstractRef``. Returns the outputs and the final array of each input reference."""
    env: dict = {}
    held: dict = {}  # reference Var -> the array it refers to now

    def read(atom):
        if isinstance(atom, Literal):
            return atom.val
        return held[atom] if type(atom.aval) is AbstractRef else env[atom]

    def write(var, value):
        if type(var.aval) is AbstractRef:
            held[var] = value
        else:
            env[var] = value

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        write(var, value)
    for var, value in zip(jaxpr.invars, args, strict=True):
        write(var, value)
    for eqn in jaxpr.eqns:
        vals = [read(a) for a in eqn.invars]
        if _eqn_has_refs(eqn):
            rule = discharge_rules[eqn.primitive]
            in_avals = [a.aval for a in eqn.invars]
            out_avals = [v.aval for v in eqn.outvars]
            new_vals, outs = rule(in_avals, out_avals, *vals, **eqn.params)
            for atom, new in zip(eqn.invars, new_vals, strict=True):
                if new is not None:
                    held[atom] = new
        else:
            outs = eqn.primitive.bind(*vals, **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            write(var, value)
    finals = {v: held[v] for v in (*jaxpr.constvars, *jaxpr.invars) if type(v.aval) is AbstractRef}
    return [read(v) for v in jaxpr.outvars], finals


class Discharged:
    """``closed`` discharged: ``jaxpr`` takes arrays where ``closed`` takes references
    and returns, after ``closed``'s outputs, the final arrays of the references that
    were written (``written[i]``: whether input ``i`` is such a reference)."""

    __slots__ = ("jaxpr", "written")

    def __init__(self, jaxpr: ClosedJaxpr, written: tuple[bool, ...]):
        self.jaxpr = jaxpr
        self.written = written

    def new_values(self, args, extra_outs) -> list:
        """Per input: its final array if it is a written reference, else None."""
        rest = iter(extra_outs)
        return [next(rest) if w else None for w in self.written]


_discharged: dict[int, tuple[Any, Discharged]] = {}  # id -> (weak reference, result)


def discharge_state(closed: ClosedJaxpr) -> Discharged:
    """``closed`` with its references discharged (once per Jaxpr object). Constants
    must not be references: move them to inputs first."""
    entry = _discharged.get(id(closed))
    if entry is not None and entry[0]() is closed:
        return entry[1]
    jaxpr, consts = closed.jaxpr, closed.consts
    if any(type(v.aval) is AbstractRef for v in jaxpr.constvars):
        raise ValueError("discharge_state: move constants that are references to the inputs")
    in_avals = [v.aval.inner_aval if type(v.aval) is AbstractRef else v.aval for v in jaxpr.invars]
    written: list[bool] = []

    def fun(*args):
        outs, finals = run_discharged(jaxpr, consts, args)
        extra = []
        written.clear()
        for var, arg in zip(jaxpr.invars, args, strict=True):
            changed = type(var.aval) is AbstractRef and finals[var] is not arg
            written.append(changed)
            if changed:
                extra.append(finals[var])
        return [*outs, *extra]

    new_closed, _ = trace_to_jaxpr(fun, in_avals, "discharged")
    result = Discharged(new_closed, tuple(written))
    _discharged[id(closed)] = (weak_entry_key(closed, _discharged, id(closed)), result)
    return result
