"""Dead-code elimination of Jaxprs (JAX's ``pe.dce_jaxpr``).

Walking the equations backwards from the outputs a caller wants, an equation stays when
one of its outputs is needed or it has effects. A primitive may prune its own equation
(a call dropping outputs of its inner Jaxpr) with a rule in :data:`dce_rules`:
``rule(used_outputs, eqn) -> (used_inputs, new_eqn or None)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lamina.ir import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Primitive

__all__ = [
    "dce_jaxpr",
    "dce_jaxpr_call_rule",
    "dce_jaxpr_closed_call_rule",
    "dce_jaxpr_consts",
    "dce_keeping_operands",
    "dce_rules",
]

dce_rules: dict[Primitive, Callable] = {}


def _flags(value, n: int) -> list[bool]:
    return [value] * n if isinstance(value, bool) else list(value)


def _dce(jaxpr: Jaxpr, used_outputs, instantiate, n_leading: int):
    """Shared by both entry points: the first ``n_leading`` of ``all_inputs`` are the
    constvars. Returns the new eqns, outvars and the used flag per input."""
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs, strict=True) if u]
    live = {v for v in outvars if not isinstance(v, Literal)}
    add, eqns = live.add, []
    for eqn in reversed(jaxpr.eqns):
        rule = dce_rules.get(eqn.primitive)
        if rule is None:  # the common case, kept short (plain loops: no generators)
            if not eqn.effects:
                for v in eqn.outvars:  # a DropVar is never live: nothing reads it
                    if v in live:
                        break
                else:
                    continue
            eqns.append(eqn)
            for a in eqn.invars:
                if type(a) is not Literal:
                    add(a)
            continue
        used = [not isinstance(v, DropVar) and v in live for v in eqn.outvars]
        used_in, new_eqn = rule(used, eqn)
        if new_eqn is not None:
            eqns.append(new_eqn)
        live.update(
            a for a, u in zip(eqn.invars, used_in, strict=True) if u and not isinstance(a, Literal)
        )
    eqns.reverse()
    inputs = [*jaxpr.constvars, *jaxpr.invars]
    inst = [False] * n_leading + _flags(instantiate, len(jaxpr.invars))
    used_inputs = [v in live or i for v, i in zip(inputs, inst, strict=True)]
    return eqns, outvars, used_inputs


def dce_jaxpr(jaxpr: Jaxpr, used_outputs, instantiate=False) -> tuple[Jaxpr, list[bool]]:
    """``jaxpr`` computing only the outputs marked in ``used_outputs`` (a bool or one per
    output), taking only the inputs that needs (and those marked by ``instantiate``).
    Returns it and the used flag of each input."""
    used_outputs = _flags(used_outputs, len(jaxpr.outvars))
    eqns, outvars, used = _dce(jaxpr, used_outputs, instantiate, len(jaxpr.constvars))
    used = used[len(jaxpr.constvars) :]  # constvars all stay, matching the consts
    if all(used) and _unchanged(jaxpr, eqns, outvars):
        return jaxpr, used
    invars = [v for v, u in zip(jaxpr.invars, used, strict=True) if u]
    return jaxpr.replace(invars=invars, outvars=outvars, eqns=eqns), used


def _unchanged(jaxpr: Jaxpr, eqns, outvars) -> bool:
    return (
        len(outvars) == len(jaxpr.outvars)
        and len(eqns) == len(jaxpr.eqns)
        and all(a is b for a, b in zip(eqns, jaxpr.eqns, strict=True))
    )


def dce_jaxpr_consts(
    jaxpr: Jaxpr, used_outputs: Sequence[bool], instantiate=False
) -> tuple[Jaxpr, list[bool], list[bool]]:
    """As :func:`dce_jaxpr`, pruning the constvars too; returns the new Jaxpr, the used
    flag of each constvar and that of each input."""
    eqns, outvars, used = _dce(jaxpr, list(used_outputs), instantiate, len(jaxpr.constvars))
    n = len(jaxpr.constvars)
    used_consts, used_inputs = used[:n], used[n:]
    if all(used) and _unchanged(jaxpr, eqns, outvars):
        return jaxpr, used_consts, used_inputs
    new = jaxpr.replace(
        constvars=[v for v, u in zip(jaxpr.constvars, used_consts, strict=True) if u],
        invars=[v for v, u in zip(jaxpr.invars, used_inputs, strict=True) if u],
        outvars=outvars,
        eqns=eqns,
    )
    return new, used_consts, used_inputs


def dce_jaxpr_closed_call_rule(used_outputs: list[bool], eqn: JaxprEqn):
    """The DCE rule of a call whose param ``jaxpr`` is a ``ClosedJaxpr`` (``jit``): the
    inner Jaxpr loses the unused outputs and the inputs then unused."""
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    closed = eqn.params["jaxpr"]
    inner, used_inputs = dce_jaxpr(closed.jaxpr, used_outputs)
    if inner is closed.jaxpr:
        return used_inputs, eqn
    params = dict(eqn.params, jaxpr=ClosedJaxpr(inner, closed.consts))
    for name in ("donated_invars", "in_shardings", "in_layouts"):
        if name in params:
            params[name] = tuple(x for x, u in zip(params[name], used_inputs, strict=True) if u)
    for name in ("out_shardings", "out_layouts"):
        if name in params:
            params[name] = tuple(x for x, u in zip(params[name], used_outputs, strict=True) if u)
    new_eqn = eqn.replace(
        invars=[a for a, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params=params,
    )
    return used_inputs, new_eqn


def dce_jaxpr_call_rule(used_outputs: list[bool], eqn: JaxprEqn):
    """The DCE rule of a call whose param ``call_jaxpr`` is an open ``Jaxpr``."""
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    inner, used_inputs = dce_jaxpr(eqn.params["call_jaxpr"], used_outputs)
    new_eqn = eqn.replace(
        invars=[a for a, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params=dict(eqn.params, call_jaxpr=inner),
    )
    return used_inputs, new_eqn


def dce_keeping_operands(used_outputs: list[bool], eqn: JaxprEqn, prune_params: Callable):
    """The DCE rule of a custom-derivative call (param ``call_jaxpr``, a ``ClosedJaxpr``)
    whose rules take every operand: the unused outputs leave ``call_jaxpr``, and
    ``prune_params(params, used_outputs)`` gives the rule params to replace."""
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    closed = eqn.params["call_jaxpr"]
    jaxpr, _ = dce_jaxpr(closed.jaxpr, used_outputs, instantiate=True)
    if jaxpr is closed.jaxpr:
        return [True] * len(eqn.invars), eqn
    params = dict(
        eqn.params,
        call_jaxpr=ClosedJaxpr(jaxpr, closed.consts),
        **prune_params(eqn.params, used_outputs),
    )
    outvars = [v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u]
    return [True] * len(eqn.invars), eqn.replace(outvars=outvars, params=params)
