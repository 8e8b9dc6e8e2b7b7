"""`lamina.api_util`: helpers for writing transformations (`jax.api_util`).

``flatten_fun`` / ``flatten_fun_nokwargs`` turn a :class:`~lamina.extend.linear_util.
WrappedFun` of pytrees into one of flat leaves (the output tree is read, after a call,
from the returned thunk); ``argnums_partial`` fixes the static arguments of one;
``debug_info`` describes a traced function for error messages; ``donation_vector``,
``rebase_donate_argnums`` and ``flatten_axes`` expand per-argument options to one entry
per leaf.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from lamina.extend import linear_util as lu
from lamina.interpreters import describe_function, jit_args, shaped_abstractify
from lamina.ir import prefix_errors, tree_util

__all__ = [
    "argnums_partial",
    "debug_info",
    "donation_vector",
    "flatten_axes",
    "flatten_fun",
    "flatten_fun_nokwargs",
    "rebase_donate_argnums",
    "safe_map",
    "shaped_abstractify",
]


def safe_map(f: Callable, *args) -> list:
    """``list(map(f, *args))``, with a ``ValueError`` when the sequences' lengths differ."""
    args = [list(a) for a in args]
    n = len(args[0])
    for i, a in enumerate(args[1:], 2):
        if len(a) != n:
            which = "shorter" if len(a) < n else "longer"
            raise ValueError(f"safe_map() argument {i} is {which} than argument 1")
    return list(map(f, *args))


@lu.transformation_with_aux2
def _flatten_fun(f, store, in_tree, *args_flat):
    py_args, py_kwargs = tree_util.tree_unflatten(in_tree, args_flat)
    ans = f(*py_args, **py_kwargs)
    leaves, out_tree = tree_util.tree_flatten(ans)
    store.store(out_tree)
    return leaves


@lu.transformation_with_aux2
def _flatten_fun_nokwargs(f, store, in_tree, *args_flat):
    py_args = tree_util.tree_unflatten(in_tree, args_flat)
    ans = f(*py_args)
    leaves, out_tree = tree_util.tree_flatten(ans)
    store.store(out_tree)
    return leaves


def flatten_fun(fun: lu.WrappedFun, in_tree, *gen_static_args, **kwargs):
    """``fun`` taking the leaves of ``(args, kwargs)`` (structure ``in_tree``) and
    returning the leaves of its result; the thunk gives the result's tree."""
    del gen_static_args, kwargs
    return _flatten_fun(fun, in_tree)


def flatten_fun_nokwargs(fun: lu.WrappedFun, in_tree, *gen_static_args, **kwargs):
    """As :func:`flatten_fun`, for ``in_tree`` the structure of the positional args."""
    del gen_static_args, kwargs
    return _flatten_fun_nokwargs(fun, in_tree)


class _HashableById:
    __slots__ = ("val",)

    def __init__(self, val):
        self.val = val

    def __hash__(self):
        return id(self.val)

    def __eq__(self, other):
        return isinstance(other, _HashableById) and self.val is other.val


class _Static:
    """A static argument compared by value and type (``1`` and ``1.0`` differ)."""

    __slots__ = ("val",)

    def __init__(self, val):
        self.val = val

    def __hash__(self):
        return hash(self.val)

    def __eq__(self, other):
        return (
            isinstance(other, _Static)
            and type(self.val) is type(other.val)
            and (self.val == other.val)
        )


def argnums_partial(
    f: lu.WrappedFun,
    dyn_argnums: int | Sequence[int],
    args: Sequence,
    require_static_args_hashable: bool = True,
):
    """``f`` with the arguments not in ``dyn_argnums`` fixed to their values in
    ``args``; returns it and the dynamic arguments. Static arguments key the wrapped
    function by value (hashing them when it is hashed), or by identity when
    ``require_static_args_hashable`` is false."""
    dyn = (dyn_argnums,) if isinstance(dyn_argnums, int) else tuple(dyn_argnums)
    dyn = tuple(sorted({d % len(args) if d < 0 else d for d in dyn}))
    static = {}
    for i, a in enumerate(args):
        if i in dyn:
            continue
        static[i] = _Static(a) if require_static_args_hashable else _HashableById(a)
    key = tuple(sorted(static.items()))
    fixed = lu.transformation2(_fix_static_gen, f, dyn, len(args), key)
    return fixed, tuple(args[i] for i in dyn)


def _fix_static_gen(f, dyn, n, key, *dyn_args, **kwargs):
    static = dict(key)
    it = iter(dyn_args)
    full = [next(it) if i in dyn else static[i].val for i in range(n)]
    return f(*full, **kwargs)


def debug_info(
    traced_for: str,
    fun: Callable,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    *,
    static_argnums: Sequence[int] = (),
    static_argnames: Sequence[str] = (),
    result_paths_thunk=None,
    sourceinfo: str | None = None,
    signature: inspect.Signature | None = None,
) -> lu.DebugInfo:
    """What error messages say about ``fun`` traced for ``traced_for`` on ``args``,
    ``kwargs``: its name and place, and a name per leaf of the non-static arguments."""
    src = sourceinfo if sourceinfo is not None else describe_function(fun)
    names = _arg_names(fun, signature, args, kwargs, static_argnums, static_argnames)
    if names is None:
        dyn_args = [a for i, a in enumerate(args) if i not in static_argnums]
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}
        names = jit_args.leaf_names(fun, dyn_args, dyn_kwargs)
    return lu.DebugInfo(traced_for, src, tuple(names), result_paths_thunk)


def _arg_names(fun, signature, args, kwargs, static_argnums, static_argnames):
    """A name per leaf of the non-static arguments as bound to ``fun``'s parameters
    (``x``, ``y['a']``, ``args[1]``, ``kw['b']``); None when they do not bind."""
    try:
        signature = signature or inspect.signature(fun)
        bound = signature.bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return None
    static_argnums = {i % len(args) if i < 0 else i for i in static_argnums}
    named: list[tuple[str, Any]] = []
    position = 0
    for name, param in signature.parameters.items():
        if name not in bound:
            continue
        value = bound[name]
        if param.kind is param.VAR_POSITIONAL:
            for i, a in enumerate(value):
                if position + i not in static_argnums:
                    named.append((f"{name}[{i}]", a))
            position += len(value)
        elif param.kind is param.VAR_KEYWORD:
            named += [
                (f"{name}['{k}']", value[k]) for k in sorted(value) if k not in static_argnames
            ]
        else:
            if position < len(args) and param.kind is not param.KEYWORD_ONLY:
                static = position in static_argnums  # passed by position
                position += 1
            else:
                static = name in static_argnames  # passed by keyword
            if not static:
                named.append((name, value))
    return [
        prefix + tree_util.keystr(path)
        for prefix, value in named
        for path, _ in tree_util.tree_flatten_with_path(value)[0]
    ]


def rebase_donate_argnums(donate_argnums, static_argnums) -> tuple[int, ...]:
    """``donate_argnums`` renumbered for the argument list without the static ones."""
    static = sorted(set(static_argnums))
    donate = sorted(set(donate_argnums) - set(static))
    return tuple(d - sum(s < d for s in static) for d in donate)


def donation_vector(donate_argnums, donate_argnames, in_tree, kws: bool = True) -> tuple:
    """One flag per leaf of ``in_tree`` (the structure of ``(args, kwargs)``, or of the
    positional args when ``kws`` is false): whether that leaf is donated."""
    if kws:
        args_tree, kwargs_tree = in_tree.children()
    else:
        args_tree, kwargs_tree = in_tree, None
    flags: list[bool] = []
    for i, child in enumerate(args_tree.children()):
        flags += [i in donate_argnums] * child.num_leaves
    if kwargs_tree is not None:
        kwargs = tree_util.tree_unflatten(kwargs_tree, [0] * kwargs_tree.num_leaves)
        for name in sorted(kwargs):
            flags += [name in donate_argnames] * tree_util.tree_structure(kwargs[name]).num_leaves
    return tuple(flags)


class _Leaf:
    def __repr__(self):
        return "*"


def flatten_axes(name, treedef, axis_tree, *, kws: bool = False, tupled_args: bool = False):
    """The entry of the prefix tree ``axis_tree`` (``None`` entries are leaves) for each
    leaf of ``treedef``; with ``kws``, ``treedef`` is that of ``(args, kwargs)`` and
    ``axis_tree`` covers the args (kwargs map at 0)."""
    del tupled_args
    proxy = tree_util.tree_unflatten(treedef, [_Leaf() for _ in range(treedef.num_leaves)])
    if kws:
        axis_tree = (axis_tree, 0)
    try:
        return tree_util.broadcast_prefix(axis_tree, proxy, is_leaf=lambda x: x is None)
    except ValueError:
        makers = prefix_errors(axis_tree, proxy, is_leaf=lambda x: x is None)
        details = "\n".join(f"  {m(name)}" for m in makers)
        raise ValueError(
            f"{name} specification must be a tree prefix of the corresponding value; \n"
            f"  Mismatch details ({len(makers)} found):\n{details}"
        ) from None
