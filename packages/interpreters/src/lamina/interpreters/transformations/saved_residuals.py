"""``saved_residuals`` / ``print_saved_residuals``: which values reverse-mode
differentiation of a function keeps from its forward pass, and where each comes from
(JAX's ``jax.ad_checkpoint.print_saved_residuals``).

The function is linearized under a staging trace: the residuals (the constants of the
linear Jaxpr) become outputs of a Jaxpr whose equations and inputs say where they come
from: an argument, a constant, a literal, a value named with ``checkpoint_name`` or
the output of a primitive (with its source line).
"""

from __future__ import annotations

import inspect

from lamina.interpreters.core.tangents import tangent_aval
from lamina.interpreters.core.tracing import shaped_abstractify
from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.interpreters.transformations.checkpoint_policies import name_p
from lamina.interpreters.transformations.partial_eval import linearize_flat
from lamina.ir import Literal, dtypes, source_summary, tree_util

__all__ = ["print_saved_residuals", "saved_residuals"]


def saved_residuals(f, *args, **kwargs) -> list[tuple]:
    """``(aval, description)`` of each residual ``vjp`` of ``f`` at the arguments keeps."""
    flat, in_tree = tree_util.tree_flatten((args, kwargs))
    avals = [shaped_abstractify(x) for x in flat]
    lin_avals = []
    for a in avals:
        t = tangent_aval(a)
        lin_avals.append(None if t.dtype == dtypes.float0 else t)

    def flat_f(*leaves):
        a, kw = tree_util.tree_unflatten(in_tree, leaves)
        return tree_util.tree_leaves(f(*a, **kw))

    def residuals_of(*leaves):
        _, linear = linearize_flat(flat_f, list(leaves), lin_avals)
        return list(linear.consts)

    closed, _ = trace_to_jaxpr(residuals_of, avals, "saved_residuals")
    return _describe(closed.jaxpr, _arg_names(f, args, kwargs, len(flat)))


def print_saved_residuals(f, *args, **kwargs) -> None:
    """Prints each residual ``vjp`` of ``f`` at the arguments keeps: its type and
    where it comes from."""
    for aval, src in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {src}")


def _describe(jaxpr, arg_names) -> list[tuple]:
    res_vars = {v for v in jaxpr.outvars if not isinstance(v, Literal)}
    results = [(v.aval, "from a literal") for v in jaxpr.outvars if isinstance(v, Literal)]
    results += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res_vars]
    for v, name in zip(jaxpr.invars, arg_names, strict=True):
        if v in res_vars:
            results.append((v.aval, f"from the argument {name}"))
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            if v not in res_vars:
                continue
            src = source_summary(eqn.source_info)
            if eqn.primitive is name_p:
                results.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
            elif eqn.primitive.name == "jit":
                desc = f"output of jitted function '{eqn.params['name']}' from {src}"
                results.append((v.aval, desc))
            else:
                results.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
    return results


def _arg_names(f, args, kwargs, n_leaves) -> list[str]:
    """The name of each flat argument leaf (``x``, ``d['b']``), as JAX gives it."""
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
    except (TypeError, ValueError):
        bound = None
    names = []
    if bound is not None:
        for pname, value in bound.arguments.items():
            for path, _ in tree_util.tree_flatten_with_path(value)[0]:
                names.append(pname + tree_util.keystr(path))
    if len(names) != n_leaves:
        return [f"at flattened index {i}" for i in range(n_leaves)]
    return names
