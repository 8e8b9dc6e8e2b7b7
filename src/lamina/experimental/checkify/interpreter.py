"""The checkify interpreter: a Jaxpr run equation by equation with an ``Error`` threaded
through.

Each primitive with an entry in :data:`error_checks` runs through its rule,
``rule(error, enabled_errors, *args, **params) -> (error, outs)``, which binds the
primitive (in whatever trace is current) and adds its checks to the error; any other
primitive is bound as it is. Rules for primitives holding Jaxprs (control flow, calls)
checkify those Jaxprs with :func:`trace_checked`.
"""

from __future__ import annotations

from lamina.interpreters import shaped_abstractify, trace_to_jaxpr
from lamina.ir import ClosedJaxpr, Literal
from lamina.ir.tree_util import tree_flatten, tree_unflatten

__all__ = ["checkify_jaxpr", "error_checks", "trace_checked", "trace_plain"]

# primitive -> rule(error, enabled_errors, *args, **params) -> (error, outs)
error_checks: dict = {}


def checkify_jaxpr(closed: ClosedJaxpr, enabled_errors, error, *args):
    """Runs ``closed`` on ``args`` with the checks in ``enabled_errors`` added to
    ``error``; returns the final error and the list of outputs."""
    jaxpr = closed.jaxpr
    env = {}

    def read(atom):
        return atom.val if isinstance(atom, Literal) else env[atom]

    for var, value in zip(jaxpr.constvars, closed.consts, strict=True):
        env[var] = value
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        rule = error_checks.get(eqn.primitive)
        if rule is None:
            outs = eqn.primitive.bind(*ins, **eqn.params)
        else:
            error, outs = rule(error, enabled_errors, *ins, **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[var] = value
    return error, [read(v) for v in jaxpr.outvars]


def avals_of(values) -> list:
    return [shaped_abstractify(x) for x in values]


def trace_checked(fun, in_avals):
    """Traces ``fun(*flat_args) -> (error, outs)`` to a Jaxpr whose outputs are the
    error's leaves, then ``outs``. Returns the ``ClosedJaxpr``, the structure of
    ``(error, outs)`` and the set of the error's effects."""
    found = {}

    def flat(*args):
        error, outs = fun(*args)
        leaves, tree = tree_flatten((error, list(outs)))
        found["tree"], found["effects"] = tree, frozenset(error._pred)
        return leaves

    closed, _ = trace_to_jaxpr(flat, in_avals, "checkify")
    return closed, found["tree"], found["effects"]


def split_error(error_tree, leaves):
    """``(error, outs)`` from the flat outputs of a Jaxpr made by :func:`trace_checked`."""
    return tree_unflatten(error_tree, list(leaves))


def trace_plain(fun, in_avals) -> ClosedJaxpr:
    """``fun(*flat_args) -> flat outputs`` traced to a ``ClosedJaxpr``."""
    return trace_to_jaxpr(lambda *args: list(fun(*args)), in_avals, "checkify")[0]
