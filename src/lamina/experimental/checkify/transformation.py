"""``checkify``: a function's checks turned into an ``Error`` it returns."""

from __future__ import annotations

import functools

from lamina.experimental.checkify.error_value import init_error
from lamina.experimental.checkify.failures import FailedCheckError
from lamina.experimental.checkify.interpreter import checkify_jaxpr
from lamina.interpreters import trace_to_jaxpr
from lamina.ir.tree_util import tree_flatten, tree_unflatten

__all__ = ["checkify", "user_checks"]

user_checks = frozenset({FailedCheckError})


def checkify(f, errors=user_checks):
    """``f`` returning ``(error, out)``: ``error`` records the first failure among its
    ``check`` calls and the automatic checks in ``errors`` (``user_checks`` by default;
    also ``nan_checks``, ``div_checks``, ``index_checks`` and their unions)."""

    @functools.wraps(f)
    def checked(*args, **kwargs):
        # The arguments are closed over, so non-array arguments stay Python values.
        found = {}

        def flat():
            leaves, found["tree"] = tree_flatten(f(*args, **kwargs))
            return leaves

        closed, _ = trace_to_jaxpr(flat, [], "checkify")
        error, outs = checkify_jaxpr(closed, errors, init_error)
        return error, tree_unflatten(found["tree"], outs)

    return checked
