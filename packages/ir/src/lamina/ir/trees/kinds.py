"""Node kinds: what each kind of pytree node means, in one class per kind.

A kind says how a node of its kind gives its children and its *data* (what is kept in
the structure to rebuild the node: a dict's sorted keys, a named tuple's class, a
custom node's auxiliary data), how it is rebuilt from data and children, how it prints
inside a ``PyTreeDef`` repr, and how a value is checked against it (``match``, used by
``flatten_up_to``). Kinds are singletons compared by identity; a custom kind exists
once per registered type, in ``_CUSTOM_KINDS``, the one table of registered types.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable

from lamina.ir.trees.keys import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

_NoneType = type(None)


class _Kind:
    """How one kind of node flattens, unflattens, prints and checks a prefix match.

    ``data`` below is the hashable description stored in the tree (see module doc).
    """

    __slots__ = ("name",)

    def children(self, x):
        """Returns ``(children, data)`` for a node ``x`` of this kind."""
        raise NotImplementedError

    def keyed_children(self, x):
        """Returns ``(sequence of (key entry, child) pairs, data)``."""
        raise NotImplementedError

    def rebuild(self, data, children: tuple):
        raise NotImplementedError

    def node_type(self, data) -> type:
        raise NotImplementedError

    def aux(self, data):
        """The second half of ``PyTreeDef.node_data()``."""
        return data

    def show(self, data, children: list[str]) -> str:
        raise NotImplementedError

    def match(self, data, n: int, x) -> Iterable:
        """Children of ``x`` if ``x`` is a node of this kind shaped like ``data``; else
        raises ``ValueError`` saying how it differs."""
        raise NotImplementedError

    def __reduce__(self):
        return (_builtin_kind, (self.name,))

    def __repr__(self) -> str:
        return f"<pytree node kind {self.name}>"


class _TupleKind(_Kind):
    __slots__ = ()

    def children(self, x):
        return x, None

    def keyed_children(self, x):
        return tuple([(SequenceKey(i), c) for i, c in enumerate(x)]), None

    def rebuild(self, data, children):
        return tuple(children)

    def node_type(self, data):
        return tuple

    def show(self, data, children):
        if len(children) == 1:
            return f"({children[0]},)"
        return "(" + ", ".join(children) + ")"

    def match(self, data, n, x):
        if type(x) is not tuple:
            raise ValueError(f"Expected tuple, got {x!r}.")
        if len(x) != n:
            raise ValueError(f"Tuple arity mismatch: {len(x)} != {n}; tuple: {x!r}.")
        return x


class _ListKind(_Kind):
    __slots__ = ()

    def children(self, x):
        return x, None

    def keyed_children(self, x):
        return tuple([(SequenceKey(i), c) for i, c in enumerate(x)]), None

    def rebuild(self, data, children):
        return list(children)

    def node_type(self, data):
        return list

    def show(self, data, children):
        return "[" + ", ".join(children) + "]"

    def match(self, data, n, x):
        if type(x) is not list:
            raise ValueError(f"Expected list, got {x!r}.")
        if len(x) != n:
            raise ValueError(f"List arity mismatch: {len(x)} != {n}; list: {x!r}.")
        return x


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError as e:
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from e


class _DictKind(_Kind):
    """Children in sorted key order; ``data`` is the tuple of sorted keys. Unflattening
    builds the dict in that sorted order."""

    __slots__ = ()

    def children(self, x):
        keys = _sorted_keys(x)
        return tuple([x[k] for k in keys]), keys

    def keyed_children(self, x):
        keys = _sorted_keys(x)
        return tuple([(DictKey(k), x[k]) for k in keys]), keys

    def rebuild(self, data, children):
        return dict(zip(data, children, strict=True))

    def node_type(self, data):
        return dict

    def aux(self, data):
        return list(data)

    def show(self, data, children):
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(data, children, strict=True)) + "}"

    def match(self, data, n, x):
        if type(x) is not dict:
            raise ValueError(f"Expected dict, got {x!r}.")
        keys = _sorted_keys(x)
        if keys != data:
            raise ValueError(
                f"Dict key mismatch; expected keys: {list(data)!r}; present keys: {list(keys)!r}."
            )
        return [x[k] for k in keys]


class _NoneKind(_Kind):
    __slots__ = ()

    def children(self, x):
        return (), None

    def keyed_children(self, x):
        return (), None

    def rebuild(self, data, children):
        return None

    def node_type(self, data):
        return _NoneType

    def show(self, data, children):
        return "None"

    def match(self, data, n, x):
        if x is not None:
            raise ValueError(
                f"Expected None, got {x!r}.\n\n"
                "In previous releases of JAX, flatten-up-to used to consider None to be a "
                "tree-prefix of non-None values. To obtain the previous behavior, you can "
                "usually write:\n"
                "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
                "is_leaf=lambda x: x is None)"
            )
        return ()


class _NamedTupleKind(_Kind):
    """Any tuple subclass with ``_fields`` that is not registered itself; ``data`` is the
    class, so named tuples of different classes have different structures."""

    __slots__ = ()

    def children(self, x):
        return list(x), type(x)

    def keyed_children(self, x):
        return [(GetAttrKey(f), c) for f, c in zip(type(x)._fields, x, strict=True)], type(x)

    def rebuild(self, data, children):
        return data(*children)

    def node_type(self, data):
        return data

    def aux(self, data):
        return None

    def show(self, data, children):
        return f"CustomNode(namedtuple[{data.__name__}], [{', '.join(children)}])"

    def match(self, data, n, x):
        if not (isinstance(x, tuple) and hasattr(x, "_fields")):
            raise ValueError(f"Expected named tuple, got {x!r}.")
        if type(x) is not data:
            raise ValueError(f"Named tuple type mismatch: expected type: {data!r}, tuple: {x!r}.")
        if len(x) != n:
            raise ValueError(f"Named tuple arity mismatch: {len(x)} != {n}; tuple: {x!r}.")
        return x


class _CustomKind(_Kind):
    """A registered node type; ``data`` is the auxiliary data its flatten returned."""

    __slots__ = ("flatten", "flatten_with_keys", "type", "unflatten")

    def __init__(self, nodetype, flatten, unflatten, flatten_with_keys):
        self.name = nodetype.__name__
        self.type = nodetype
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys

    def children(self, x):
        return self.flatten(x)

    def keyed_children(self, x):
        if self.flatten_with_keys is None:
            children, data = self.flatten(x)
            return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], data
        pairs, data = self.flatten_with_keys(x)
        return list(pairs), data

    def rebuild(self, data, children):
        return self.unflatten(data, tuple(children))

    def node_type(self, data):
        return self.type

    def show(self, data, children):
        return f"CustomNode({self.name}[{data}], [{', '.join(children)}])"

    def match(self, data, n, x):
        if type(x) is not self.type:
            raise ValueError(
                f"Custom node type mismatch: expected type: {self.type!r}, value: {x!r}."
            )
        children, x_data = self.flatten(x)
        if x_data != data:
            raise ValueError(f"Mismatch custom node data: {data!r} != {x_data!r}; value: {x!r}.")
        children = tuple(children)
        if len(children) != n:
            raise ValueError(f"Custom type arity mismatch: {len(children)} != {n}; value: {x!r}.")
        return children

    def __reduce__(self):
        return (_custom_kind, (self.type,))

    def __repr__(self) -> str:
        return f"<pytree node kind {self.name} ({self.type.__module__}.{self.type.__qualname__})>"


def _named(kind: _Kind, name: str) -> _Kind:
    kind.name = name
    return kind


_TUPLE = _named(_TupleKind(), "tuple")
_LIST = _named(_ListKind(), "list")
_DICT = _named(_DictKind(), "dict")
_NONE = _named(_NoneKind(), "None")
_NAMEDTUPLE = _named(_NamedTupleKind(), "namedtuple")
_BUILTIN_KINDS = {k.name: k for k in (_TUPLE, _LIST, _DICT, _NONE, _NAMEDTUPLE)}


# ------------------------------------------- node types of the standard library, built in


def _ordered_dict_flatten(d):
    return list(d.values()), tuple(d)


def _ordered_dict_with_keys(d):
    keys = tuple(d)
    return [(DictKey(k), d[k]) for k in keys], keys


def _ordered_dict_unflatten(keys, values):
    return collections.OrderedDict(zip(keys, values, strict=True))


def _defaultdict_flatten(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _defaultdict_with_keys(d):
    keys = _sorted_keys(d)
    return [(DictKey(k), d[k]) for k in keys], (d.default_factory, keys)


def _defaultdict_unflatten(aux, values):
    factory, keys = aux
    return collections.defaultdict(factory, zip(keys, values, strict=True))


# The kinds of all custom node types, registered once for every registry
# (see `pytree.register_node_everywhere`). An OrderedDict keeps its insertion order; a
# defaultdict is ordered like a dict and keeps its default factory.
_CUSTOM_KINDS: dict[type, _CustomKind] = {
    collections.OrderedDict: _CustomKind(
        collections.OrderedDict,
        _ordered_dict_flatten,
        _ordered_dict_unflatten,
        _ordered_dict_with_keys,
    ),
    collections.defaultdict: _CustomKind(
        collections.defaultdict,
        _defaultdict_flatten,
        _defaultdict_unflatten,
        _defaultdict_with_keys,
    ),
}


def _builtin_kind(name: str) -> _Kind:
    return _BUILTIN_KINDS[name]


def _custom_kind(nodetype: type) -> _CustomKind:
    try:
        return _CUSTOM_KINDS[nodetype]
    except KeyError:
        raise ValueError(
            f"Cannot rebuild a PyTreeDef: {nodetype!r} is not registered as a pytree node."
        ) from None


def _is_namedtuple_type(t: type) -> bool:
    return issubclass(t, tuple) and hasattr(t, "_fields")
