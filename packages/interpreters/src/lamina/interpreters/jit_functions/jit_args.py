"""How ``jit`` reads its arguments: which are static or donated, and their abstract values.

Argnums and argnames inferred from each other through the function's signature,
hashing static values, the error that names a non-array argument by its path, and
abstractifying a leaf.
"""

from __future__ import annotations

import inspect

from jaxlib import xla_client

from lamina.interpreters.core.tracing import shaped_abstractify
from lamina.ir import AbstractRef, tree_util, typed_value_aval

ArrayImpl = xla_client.ArrayImpl


def _argnums_and_names(fun, argnums, argnames, what: str = "static"):
    """Normalize ``what`` ("static" or "donate") argnums/argnames to tuples, each
    inferred from the other through ``fun``'s signature, and check them against it, as
    JAX does."""
    if isinstance(argnums, int):
        argnums = (argnums,)
    if isinstance(argnames, str):
        argnames = (argnames,)
    if argnums is None and argnames is None:  # the common case: no signature needed
        return (), ()
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return tuple(argnums or ()), tuple(argnames or ())
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if argnums is not None:
        _check_argnums(params, tuple(argnums), f"{what}_argnums")
    if argnames is not None:
        _check_argnames(params, tuple(argnames), f"{what}_argnames")
    if argnames is None:
        argnames = tuple(positional[i] for i in argnums if -len(positional) <= i < len(positional))
    elif argnums is None:
        argnums = tuple(positional.index(n) for n in argnames if n in positional)
    return tuple(argnums), tuple(argnames)


def _check_argnums(params, argnums: tuple[int, ...], name: str) -> None:
    if not argnums or any(p.kind is p.VAR_POSITIONAL for p in params):
        return
    n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    if min(argnums) < -n or max(argnums) >= n:
        raise ValueError(
            f"Jitted function has {name}={argnums}, but only accepts {n} positional arguments."
        )


def _check_argnames(params, argnames: tuple[str, ...], name: str) -> None:
    positional_only = {p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)}
    if bad := positional_only & set(argnames):
        raise ValueError(
            f"Jitted function has invalid argnames {bad} in {name}. These are positional-only"
        )
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    keywords = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if bad := set(argnames) - keywords:
        raise ValueError(
            f"Jitted function has invalid argnames {bad} in {name}. "
            "Function does not take these args."
        )


def _hash_static(value) -> None:
    try:
        hash(value)
    except TypeError as err:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while "
            f"trying to hash an object of type {type(value)}, {value}. The error was:\n"
            f"{type(err).__name__}: {err}"
        ) from None


def _bad_argument(fun, args, kwargs, static_argnums, static_argnames) -> TypeError:
    """The error for a dynamic argument leaf that is not an array, naming its path."""
    try:
        signature = inspect.signature(fun)
        bound = signature.bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        signature, bound = None, None
    named = []
    if bound is None:
        named += [(i, f"args[{i}]", a) for i, a in enumerate(args)]
        named += [(k, f"kwargs['{k}']", v) for k, v in kwargs.items()]
    else:
        positional = {n: i for i, n in enumerate(signature.parameters)}
        for name, value in bound.items():
            kind = signature.parameters[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:
                start = positional[name]
                named += [(start + i, f"{name}[{i}]", v) for i, v in enumerate(value)]
            elif kind == inspect.Parameter.VAR_KEYWORD:
                named += [(k, f"{name}['{k}']", v) for k, v in value.items()]
            else:
                named.append((positional[name], name, value))
    nargs = len(args)
    static = {i % nargs for i in static_argnums if nargs} | set(static_argnames)
    for key, prefix, value in named:
        if key in static or (
            isinstance(key, int) and bound is not None and _name_of(signature, key) in static
        ):
            continue
        for path, leaf in tree_util.tree_flatten_with_path(value)[0]:
            try:
                shaped_abstractify(leaf)
            except TypeError:
                return TypeError(
                    f"Error interpreting argument to {fun} as an abstract array. The "
                    f"problematic value is of type {type(leaf)} and was passed to the "
                    f"function at path {prefix}{tree_util.keystr(path)}.\n"
                    "This typically means that a jit-wrapped function was called with a "
                    "non-array argument, and this argument was not marked as static using "
                    "the static_argnums or static_argnames parameters of jax.jit."
                )
    return TypeError(f"Error interpreting an argument to {fun} as an abstract array.")


def leaf_names(fun, dyn_args, dyn_kwargs) -> list[str]:
    """A name per leaf of ``(dyn_args, dyn_kwargs)``, as JAX's messages name arguments
    (``x``, ``d['a']``, ``args[1]``): the parameter's name and the path inside it."""
    try:
        params = [
            p.name
            for p in inspect.signature(fun).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(dyn_args):
        prefix = params[i] if i < len(params) else f"args[{i}]"
        names += [prefix + tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(a)[0]]
    for k in sorted(dyn_kwargs):
        leaves = tree_util.tree_flatten_with_path(dyn_kwargs[k])[0]
        names += [k + tree_util.keystr(p) for p, _ in leaves]
    return names


def check_ref_aliasing(fun, debug: str, leaves, dyn_args, dyn_kwargs) -> None:
    """JAX's ``ValueError`` when one ``Ref`` is passed twice to a jitted function."""
    seen: dict[int, int] = {}
    for i, x in enumerate(leaves):
        if type(getattr(x, "aval", None)) is not AbstractRef:
            continue
        if id(x) in seen:
            names = leaf_names(fun, dyn_args, dyn_kwargs)
            first, second = seen[id(x)], i
            if len(names) == len(leaves):
                where = f"{names[first]} and {names[second]}"
            else:
                where = f"argument positions {first} and {second}"
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a "
                f"function, but when tracing {debug} for jit the mutable array reference "
                f"of type {x.aval.str_short()} appeared at both {where}."
            )
        seen[id(x)] = i


def _name_of(signature, index):
    names = list(signature.parameters)
    return names[index] if 0 <= index < len(names) else None


def _abstractify(x):
    if type(x) is ArrayImpl:
        return typed_value_aval(x, x.aval)  # laid out over an explicit mesh: in the type
    return shaped_abstractify(x)
