"""Declaring pytree node types: the ``register_*`` functions, and ``Partial``.

Every registration goes through ``pytree.register_node_everywhere``: a type is
registered once, for every registry, and registering it again is a ``ValueError``.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

from lamina.ir.trees.pytree import dataclass_node_functions, register_node_everywhere

__all__ = [
    "Partial",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
]

Typ = TypeVar("Typ", bound=type)


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_with_keys_func: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Hashable]]
    | None = None,
) -> None:
    """Makes values of exactly type ``nodetype`` pytree nodes.

    ``flatten_func(x)`` returns ``(children, aux_data)``; ``aux_data`` must be hashable
    and comparable, and is kept in the structure. ``unflatten_func(aux_data, children)``
    rebuilds the value (``children`` is a tuple). ``flatten_with_keys_func(x)``, if
    given, returns ``([(key, child), ...], aux_data)`` for key paths; without it,
    children get ``FlattenedIndexKey`` keys. Registering a type twice is a ValueError.
    """
    register_node_everywhere(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_node_class(cls: Typ) -> Typ:
    """Class decorator: registers ``cls`` using its ``tree_flatten()`` method and its
    ``tree_unflatten(aux_data, children)`` classmethod."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Hashable]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """Like ``register_pytree_node``, with the keyed flatten first; the plain flatten is
    derived from it when not given."""
    if flatten_func is None:

        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux

    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls: Typ) -> Typ:
    """Class decorator: registers ``cls`` using its ``tree_flatten_with_keys()`` method
    (and ``tree_flatten()`` if it has one) and its ``tree_unflatten`` classmethod."""
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(
        cls, operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten, flatten
    )
    return cls


def _set_text(names: set) -> str:
    return "{" + ", ".join(sorted(repr(n) for n in names)) + "}"


def register_dataclass(
    nodetype: Typ,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> Typ:
    """Registers a class whose children are the attributes ``data_fields`` and whose
    auxiliary data is the tuple of the attributes ``meta_fields``; it is rebuilt by
    calling ``nodetype(**fields)``.

    For a dataclass both lists may be left out (usable as a class decorator): fields
    whose metadata has ``static=True`` are meta fields, the others data fields. For a
    dataclass, data and meta fields together must be its ``init=True`` fields, less
    ``drop_fields``. Key paths use ``GetAttrKey``. Returns ``nodetype``.
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields must both be specified"
                f" when either is specified. Got {data_fields=} {meta_fields=}."
            )
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when"
                f" nodetype is not a dataclass. Got {nodetype=}."
            )
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields = tuple(data_fields)
    meta_fields = tuple(meta_fields)
    named = {*data_fields, *meta_fields}
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        if named != init_fields:
            msg = (
                "data_fields and meta_fields must include all dataclass fields with"
                " ``init=True`` and only them."
            )
            if missing := init_fields - named:
                msg += (
                    f" Missing fields: {_set_text(missing)}. Add them to drop_fields to"
                    " suppress this error."
                )
            if unexpected := named - init_fields:
                msg += f" Unexpected fields: {_set_text(unexpected)}."
            raise ValueError(msg)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError(
            "data_fields and meta_fields must not overlap. Overlapping fields:"
            f" {_set_text(overlap)}."
        )

    flatten, unflatten, flatten_with_keys = dataclass_node_functions(
        nodetype, data_fields, meta_fields
    )
    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def register_static(cls: Typ) -> Typ:
    """Registers ``cls`` as a node without children whose value is its auxiliary data:
    instances are kept in the structure rather than treated as leaves. Instances must be
    hashable and comparable. Returns ``cls``."""

    def flatten(x):
        return (), x

    def unflatten(x, _children):
        return x

    register_pytree_node(cls, flatten, unflatten, flatten)
    return cls


# -------------------------------------------------------------------------- Partial


class _HashableCallableShim:
    """Stands in for a ``functools.partial`` given to ``Partial`` as its function.

    ``functools.partial`` would merge the inner partial's arguments into the outer one,
    making them pytree leaves; behind this wrapper the inner partial stays part of the
    (static) function. Compares and hashes like the wrapped object and exposes its
    ``func``, ``args`` and ``keywords``.
    """

    def __init__(self, fun: Callable):
        self.fun = fun
        self.func = fun.func
        self.args = fun.args
        self.keywords = fun.keywords

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self) -> str:
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: the function is static (auxiliary data,
    compared by equality) and the bound positional and keyword arguments are children.

    It can be passed through transformations as an argument or result::

        >>> add_one = Partial(operator.add, 1)
        >>> tree_map(lambda x: 10 * x, add_one)(2)
        12
    """

    def __new__(cls, func, *args, **kwargs):
        if isinstance(func, functools.partial):
            func = _HashableCallableShim(func)
        return super().__new__(cls, func, *args, **kwargs)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)
