"""``jax_explain_cache_misses``: when a jitted function traces again, log (at WARNING,
on ``jit``'s logger) why its cache had no entry: a function never seen, or how the
call differs from the closest key seen before: the config options in the trace
context, the arguments' tree structure or static values, or their types.

A cache key is ``(treedef, avals, static_key, trace_context)`` as
:meth:`..jit.JitWrapped._lookup` builds it, ``static_key`` being ``(positions,
values, keyword items)`` of the static arguments.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from jaxlib import _jax

from lamina.ir import tree_util

__all__ = ["explain_cache_miss"]

_miss_callsites: set[str] = set()  # where functions were seen for the first time


class _Leaf:
    def __repr__(self) -> str:
        return "pytree leaf"


_LEAF = _Leaf()


def explain_cache_miss(logger, fun, name: str, key: tuple, seen: list[tuple]) -> None:
    """Log why ``key`` (a call of ``fun``) matched none of the keys ``seen`` before."""
    if getattr(fun, "__module__", "").startswith("lamina."):
        return  # lamina's own jitted helpers
    callsite = _callsite()
    lines = [f"TRACING CACHE MISS at {callsite}:"]
    code = getattr(fun, "__code__", None)
    where = f" defined at {code.co_filename}:{code.co_firstlineno}" if code else ""
    if not seen:
        lines.append(f"  never seen function:\n    {name} id={id(fun)}{where}")
        if callsite in _miss_callsites:
            lines.append(
                "  but seen another function defined on the same line; maybe the function "
                "is\n  being re-defined repeatedly, preventing caching?"
            )
        _miss_callsites.add(callsite)
    else:
        lines.append(f"  for {name}{where}")
        lines.append("  all previously seen cache keys differ. For the closest previous key:")
        lines.append("  " + min(_difference(fun, key, old) for old in seen)[-1])
    logger.warning("\n".join(lines))


def _callsite() -> str:
    """``file:line:column (function)`` of the innermost caller outside lamina."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        ("lamina.", "contextlib", "functools")
    ):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    column = 0
    positions = list(frame.f_code.co_positions())
    if 0 <= frame.f_lasti // 2 < len(positions):
        column = positions[frame.f_lasti // 2][2] or 0
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}" + (f":{column}" if column else "")
    return f"{where} ({frame.f_code.co_name})"


def _difference(fun, new: tuple, old: tuple) -> tuple[int, int, str]:
    """(severity, number of differences, explanation): lower severity is closer."""
    return (
        _context_difference(new[3], old[3])
        or _structure_difference(new, old)
        or _type_difference(fun, new, old)
        or (4, 0, "cache miss explanation unavailable")
    )


def _context_difference(new, old):
    if new == old:
        return None
    text = "Tracing context doesn't match, e.g. due to config or context manager."
    names = _jax.config.trace_context_names()
    lines = [
        f"  * {name} differs: now {a} and before {b}"
        for name, a, b in zip(names, new, old, strict=False)
        if a != b
    ]
    return 0, len(lines), "\n".join([text, *lines])


def _inputs(key: tuple) -> tuple[tuple, dict]:
    """The call's (args, kwargs) with each dynamic leaf a marker and each static
    argument a ``("static", value)`` pair."""
    treedef, _, static_key, _ = key
    dyn_args, dyn_kwargs = tree_util.tree_unflatten(treedef, [_LEAF] * treedef.num_leaves)
    nums, statics, static_kw = static_key or ((), (), ())
    args, it = [], iter(dyn_args)
    given = dict(zip(nums, statics, strict=True))
    for i in range(len(dyn_args) + len(nums)):
        args.append(Static(given[i]) if i in given else next(it))
    return tuple(args), {**dyn_kwargs, **{k: Static(v) for k, v in static_kw}}


class Static:
    """A static argument's value, compared by value and otherwise a leaf."""

    def __init__(self, val: Any):
        self.val = val

    def __repr__(self) -> str:
        return f"Static(val={self.val!r})"


def _structure_difference(new, old):
    if new[0] == old[0] and new[2] == old[2]:
        return None
    new_tree, old_tree = _inputs(new), _inputs(old)
    lines = []
    for path, a, b, why in tree_util.equality_errors(new_tree, old_tree):
        lines.append(
            f"  * at input path {tree_util.keystr(path)}, now {a} and before {b}, so {why}"
        )
    statics = _statics(new_tree, old_tree)
    for path, a, b in statics:
        lines.append(
            f"  * at input path {path}, now {Static} with pytree metadata {a} and "
            f"before {Static} with pytree metadata {b}, so the pytree node metadata "
            "does not match"
        )
    if not lines:
        return None
    return 1, len(lines), "different input pytree:\n" + "\n".join(lines)


def _statics(new_tree, old_tree):
    (new_args, new_kw), (old_args, old_kw) = new_tree, old_tree
    both = zip(new_args, old_args, strict=False)
    pairs = [(f"[0][{i}]", a, b) for i, (a, b) in enumerate(both)]
    pairs += [(f"[1][{k!r}]", new_kw[k], old_kw[k]) for k in new_kw if k in old_kw]
    return [
        (path, a, b)
        for path, a, b in pairs
        if isinstance(a, Static) and isinstance(b, Static) and a.val != b.val
    ]


def _type_difference(fun, new, old):
    if new[1] == old[1]:
        return None
    names = _leaf_names(fun, new)
    lines, weak_hint = [], False
    for name, a, b in zip(names, new[1], old[1], strict=False):
        if a == b:
            continue
        a_text, b_text = a.str_short(True), b.str_short(True)
        if a.weak_type != b.weak_type:
            weak_hint = True
            marks = "({})" if a.ndim != b.ndim else ""
            a_text += f"{marks}{{weak_type={a.weak_type}}}"
            b_text += f"{marks}{{weak_type={b.weak_type}}}"
        lines.append(f"  * at {name}, now {a_text} and before {b_text}")
    text = "different input types:\n" + "\n".join(lines)
    if weak_hint:
        text += "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
    return 3, len(lines), text


def _leaf_names(fun, key: tuple) -> list[str]:
    """A name for each dynamic leaf: its parameter's name and its path within it."""
    args, kwargs = _inputs(key)
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), "args")
    names = []
    for i, arg in enumerate(args):
        base = positional[i] if i < len(positional) else f"{star}[{i - len(positional)}]"
        names += _names_in(base, arg)
    for k in sorted(kwargs):
        names += _names_in(k, kwargs[k])
    return names


def _names_in(base: str, tree: Any) -> list[str]:
    if isinstance(tree, Static):
        return []
    paths = tree_util.tree_flatten_with_path(tree)[0]
    return [base + tree_util.keystr(path) for path, _ in paths]
