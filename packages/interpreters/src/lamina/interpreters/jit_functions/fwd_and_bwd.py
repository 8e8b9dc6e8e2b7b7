"""``fwd_and_bwd``: a function's forward and backward passes as two functions, each
jitted once, with the backward function's residuals passed between them."""

from __future__ import annotations

from lamina.interpreters.jit_functions.jit import jit
from lamina.interpreters.transformations.ad import _check_callable
from lamina.interpreters.transformations.reverse import vjp

__all__ = ["fwd_and_bwd"]


def fwd_and_bwd(fun, argnums, has_aux: bool = False, jitted: bool = True):
    """``(fwd, bwd)``: ``fwd(*args)`` is ``vjp`` of ``fun`` in the arguments ``argnums``
    (``(out, residuals)``, plus ``aux`` with ``has_aux``), and ``bwd(residuals, ct)``
    the cotangents of those arguments (one, for an integer ``argnums``). Both are jitted
    unless ``jitted=False``, so the backward pass compiles once."""
    _check_callable(fun)
    single = isinstance(argnums, int)
    positions = (argnums,) if single else tuple(argnums)

    def fwd(*args):
        for i in positions:
            if not -len(args) <= i < len(args):
                raise TypeError(
                    f"Differentiated argnum {i} is out of range for a function called with "
                    f"{len(args)} positional arguments."
                )
        chosen = [i % len(args) for i in positions]

        def of_chosen(*values):
            full = list(args)
            for i, v in zip(chosen, values, strict=True):
                full[i] = v
            return fun(*full)

        return vjp(of_chosen, *(args[i] for i in chosen), has_aux=has_aux)

    def bwd(residuals, ct):
        cts = residuals(ct)
        return cts[0] if single else cts

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
