"""``check_p``: a pending check, an equation that raises if its error holds a failure.

Its operands are the leaves of an ``Error`` (``err_tree`` is the structure). Run
eagerly it raises ``JaxRuntimeError``; under ``vmap`` the batch is reduced to one
failure; under differentiation it checks the primal values. It cannot be compiled:
staged code must be ``checkify``-ed, which turns the equation into an update of the
error value (``debug=True`` checks are dropped instead).
"""

from __future__ import annotations

import numpy as np

import lamina.numpy as jnp
from lamina.experimental.checkify.failures import JaxRuntimeError
from lamina.interpreters import moveaxis
from lamina.ir import Primitive
from lamina.ir.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["bind_check", "check_p", "functionalization_error"]

check_p = Primitive("check")
check_p.multiple_results = True  # it has no results
check_p.effectful = True


def functionalization_error() -> ValueError:
    return ValueError(
        "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
        "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
        "functionalizing it through `checkify.checkify`."
    )


def bind_check(error, *, debug: bool) -> None:
    """Binds ``check_p`` on ``error``, reduced to one failure first if it is batched."""
    if any(np.shape(p) for p in error._pred.values()):
        error = _reduce_batch(error)
    leaves, tree = tree_flatten(error)
    check_p.bind(*leaves, err_tree=tree, debug=debug)


def _reduce_batch(error):
    """One entry per kind of failure: the last failing element of the leading batch
    axis (the last element if none failed)."""
    pred, code, payload = {}, {}, {}
    for effect, p in error._pred.items():
        p = jnp.asarray(p)
        n = p.shape[0]
        i = n - 1 - jnp.argmax(p[::-1])
        pred[effect] = p[i]
        code[effect] = jnp.asarray(error._code[effect])[i]
        payload[effect] = tree_map(lambda x, i=i: x[i], error._payload[effect])
    return type(error)(pred, code, error._metadata, payload)


def _impl(*leaves, err_tree, debug):
    if debug:
        return []
    failure = tree_unflatten(err_tree, leaves).get_exception()
    if failure is not None:
        raise JaxRuntimeError(str(failure)) from failure
    return []


def _abstract_eval(*avals, err_tree, debug):
    return [], set(tree_unflatten(err_tree, avals)._pred)


def _lowering(ctx, *args, err_tree, debug):
    if debug:
        return []
    raise functionalization_error()


def _batching(axis_data, vals, dims, *, err_tree, debug):
    vals = [x if d is None else moveaxis(x, d, 0) for x, d in zip(vals, dims, strict=True)]
    vals = [
        jnp.broadcast_to(x, (axis_data.size, *np.shape(x))) if d is None else x
        for x, d in zip(vals, dims, strict=True)
    ]
    bind_check(tree_unflatten(err_tree, vals), debug=debug)
    return [], []


def _jvp(primals, tangents, *, err_tree, debug):
    check_p.bind(*primals, err_tree=err_tree, debug=debug)
    return [], []


def _pp_params(params: dict):
    return [("debug", params["debug"])]


def _complete_params(params, in_avals, out_avals):
    raise ValueError("a check equation cannot be parsed: its error structure is not printed")


check_p.def_impl(_impl)
check_p.def_abstract_eval(_abstract_eval)
check_p.def_lowering(_lowering)
check_p.def_batching(_batching)
check_p.def_jvp(_jvp)
check_p.def_pp_params(_pp_params, _complete_params)
