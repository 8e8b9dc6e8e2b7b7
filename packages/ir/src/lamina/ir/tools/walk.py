"""Walking a Jaxpr and the Jaxprs nested in its equations' params."""

from __future__ import annotations

from collections.abc import Iterator

from lamina.ir.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn

__all__ = ["open_jaxpr", "sub_jaxprs", "walk_eqns"]


def open_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> Jaxpr:
    return jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr


def sub_jaxprs(eqn: JaxprEqn) -> Iterator[tuple[str, Jaxpr]]:
    """``(param name, Jaxpr)`` for each Jaxpr in ``eqn``'s params (in tuples too)."""
    for key, value in eqn.params.items():
        stack = [value]
        while stack:
            v = stack.pop(0)
            if isinstance(v, (Jaxpr, ClosedJaxpr)):
                yield key, open_jaxpr(v)
            elif isinstance(v, (tuple, list)):
                stack.extend(v)


def walk_eqns(jaxpr: Jaxpr | ClosedJaxpr, depth: int = 1) -> Iterator[tuple[JaxprEqn, int]]:
    """Every equation with the depth of the Jaxpr holding it (1 for the outermost),
    sub-Jaxprs right after the equation holding them. A Jaxpr held in several places
    is walked at each."""
    for eqn in open_jaxpr(jaxpr).eqns:
        yield eqn, depth
        for _, sub in sub_jaxprs(eqn):
            yield from walk_eqns(sub, depth + 1)
