"""The structural difference of two Jaxprs, ignoring the names of variables.

Each variable gets a name that says how it was computed: ``in0``, ``const1`` for
inputs, and for an equation's output a hash of the equation's primitive, params, result
types and operands' names, and the output's position. Equations are lined up by these
(as ``difflib`` lines up text): equations that only the names of variables tell apart
show as equal, and one computed differently shows as removed and added, with the
equations downstream of it. Nested Jaxprs are compared by their printed text, whose
names are given afresh.
"""

from __future__ import annotations

import difflib
import hashlib

import numpy as np

from lamina.ir.core.jaxpr import ClosedJaxpr, Jaxpr, Literal, PpContext, pp_eqn, printed_names
from lamina.ir.tools.walk import open_jaxpr

__all__ = ["jaxpr_diff"]


def jaxpr_diff(a: Jaxpr | ClosedJaxpr, b: Jaxpr | ClosedJaxpr) -> list[str]:
    """Lines describing how ``b`` differs from ``a`` (``-`` only in ``a``, ``+`` only in
    ``b``, each with the equation as printed in its own Jaxpr); empty when they are
    equal up to renaming."""
    a, b = open_jaxpr(a), open_jaxpr(b)
    lines = []
    for what, xs, ys in (
        ("constvars", a.constvars, b.constvars),
        ("inputs", a.invars, b.invars),
    ):
        tx, ty = _types(xs), _types(ys)
        if tx != ty:
            lines += [f"- {what}: {tx}", f"+ {what}: {ty}"]
    sig_a, names_a = _signatures(a)
    sig_b, names_b = _signatures(b)
    matcher = difflib.SequenceMatcher(a=sig_a, b=sig_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        lines += [f"- {pp_eqn(e, names_a[1])}" for e in a.eqns[i1:i2]]
        lines += [f"+ {pp_eqn(e, names_b[1])}" for e in b.eqns[j1:j2]]
    out_a = [_atom(x, names_a[0]) for x in a.outvars]
    out_b = [_atom(x, names_b[0]) for x in b.outvars]
    shown_a, shown_b = _uses(a.outvars, names_a[1]), _uses(b.outvars, names_b[1])
    if out_a != out_b and (not lines or shown_a != shown_b):
        lines += [f"- outputs: ({shown_a})", f"+ outputs: ({shown_b})"]
    if not lines and a != b:
        lines.append("! the Jaxprs differ in what their printed equations do not show")
    return lines


def _uses(atoms, context: PpContext) -> str:
    return ", ".join(_atom(x, {}) if isinstance(x, Literal) else context.var_name(x) for x in atoms)


def _types(variables) -> str:
    return " ".join(v.aval.str_short(short_dtypes=True) for v in variables)


def _atom(atom, names: dict) -> str:
    if isinstance(atom, Literal):
        value = np.asarray(atom.val)
        text = str(value.item()) if value.ndim == 0 else repr(value.tolist())
        return f"{text}:{atom.aval.str_short(short_dtypes=True)}"
    return names.get(atom, "?")


def _signatures(jaxpr: Jaxpr) -> tuple[list[str], tuple[dict, PpContext]]:
    names: dict = {}
    for i, v in enumerate(jaxpr.constvars):
        names[v] = f"const{i}"
    for i, v in enumerate(jaxpr.invars):
        names[v] = f"in{i}"
    signatures = []
    for eqn in jaxpr.eqns:
        # The primitive and params as printed alone (nested Jaxprs named afresh).
        try:
            head = pp_eqn(eqn.replace(invars=[], outvars=[]), PpContext())
        except Exception:  # a printing rule that needs the operands
            head = f"{eqn.primitive.name} {sorted(map(str, eqn.params.items()))}"
        types = " ".join(v.aval.str_short(short_dtypes=True) for v in eqn.outvars)
        operands = " ".join(_atom(x, names) for x in eqn.invars)
        signature = f"{head} -> {types} <- {operands}"
        digest = hashlib.sha1(signature.encode()).hexdigest()[:12]
        for i, v in enumerate(eqn.outvars):
            names[v] = f"{digest}.{i}"
        signatures.append(signature)
    return signatures, (names, printed_names(jaxpr))
