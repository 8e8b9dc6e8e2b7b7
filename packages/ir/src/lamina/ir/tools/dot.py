"""A Jaxpr's dataflow as a Graphviz graph (the ``dot`` language).

Inputs and outputs are ellipses, equations boxes named for their primitive, and each
edge carries a value (labelled with its type). The Jaxprs in an equation's params are
clusters, linked to their equation by dashed edges labelled with the param's name.
"""

from __future__ import annotations

import numpy as np

from lamina.ir.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from lamina.ir.tools.walk import open_jaxpr, sub_jaxprs

__all__ = ["jaxpr_dot"]


def jaxpr_dot(jaxpr: Jaxpr | ClosedJaxpr, name: str = "jaxpr") -> str:
    graph = _Graph()
    lines = [f"digraph {_quote(name)} {{", "  node [fontname=monospace];"]
    lines += graph.jaxpr(open_jaxpr(jaxpr), "  ")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Graph:
    def __init__(self):
        self.count = 0

    def node(self) -> str:
        self.count += 1
        return f"n{self.count}"

    def jaxpr(self, jaxpr: Jaxpr, indent: str) -> list[str]:
        """The nodes and edges of ``jaxpr``, its first node first."""
        lines = []
        producers = {}  # var -> node
        for kind, variables in (("const", jaxpr.constvars), ("in", jaxpr.invars)):
            for i, v in enumerate(variables):
                n = self.node()
                producers[v] = n
                label = f"{kind}{i}: {v.aval.str_short(short_dtypes=True)}"
                lines.append(f"{indent}{n} [shape=ellipse label={_quote(label)}];")
        for eqn in jaxpr.eqns:
            n = self.node()
            lines.append(f"{indent}{n} [shape=box label={_quote(eqn.primitive.name)}];")
            lines += self.edges(eqn.invars, producers, n, indent)
            for key, sub in sub_jaxprs(eqn):
                cluster = self.node()
                lines.append(f"{indent}subgraph cluster_{cluster} {{")
                lines.append(f"{indent}  label={_quote(f'{eqn.primitive.name} {key}')};")
                first = f"n{self.count + 1}"
                lines += self.jaxpr(sub, indent + "  ")
                lines.append(f"{indent}}}")
                lines.append(f"{indent}{n} -> {first} [style=dashed label={_quote(key)}];")
            for v in eqn.outvars:
                producers[v] = n
        out = self.node()
        lines.append(f"{indent}{out} [shape=ellipse label=out];")
        lines += self.edges(jaxpr.outvars, producers, out, indent)
        return lines

    def edges(self, atoms, producers: dict, target: str, indent: str) -> list[str]:
        lines = []
        for atom in atoms:
            if isinstance(atom, Literal):
                n = self.node()
                value = np.asarray(atom.val)
                text = str(value.item()) if value.ndim == 0 else "[...]"
                lines.append(f"{indent}{n} [shape=plaintext label={_quote(text)}];")
                text = atom.aval.str_short(short_dtypes=True)
            else:
                n = producers.get(atom)
                if n is None:
                    continue
                text = atom.aval.str_short(short_dtypes=True)
            lines.append(f"{indent}{n} -> {target} [label={_quote(text)}];")
        return lines
