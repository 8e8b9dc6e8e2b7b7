"""The pytree engine: registries, ``PyTreeDef``, flattening and unflattening.

A pytree is a nest of *nodes* (values whose types are registered) with *leaves*
(anything else) at the bottom. Flattening a pytree gives its leaves, left to right,
and a ``PyTreeDef`` describing the nest of nodes.

Inside a ``PyTreeDef`` a tree is stored as nested plain tuples, so that building,
comparing and walking them is cheap:

* a leaf is ``None``;
* a node is ``(kind, data, children, num_leaves, flat)``: ``kind`` is a node kind from
  ``trees.kinds`` (compared by identity), ``data`` what the kind needs to rebuild the
  node (dict keys, a named tuple's class, a custom node's auxiliary data),
  ``children`` a tuple of such trees, and ``flat`` is true when every child is a leaf
  (unflattening then takes the children in one slice).

Two ``PyTreeDef`` objects are equal when these tuples are equal, so equality runs at C
speed. This module is the one place that knows that layout; ``tree_util`` builds the
public API on top of it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from typing import Any

from lamina.ir.trees.keys import GetAttrKey
from lamina.ir.trees.kinds import (
    _CUSTOM_KINDS,
    _DICT,
    _LIST,
    _NAMEDTUPLE,
    _NONE,
    _TUPLE,
    _CustomKind,
    _is_namedtuple_type,
    _Kind,
    _NoneType,
    _sorted_keys,
)

__all__ = ["PyTreeDef", "PyTreeRegistry", "default_registry", "treedef_tuple"]

_NONE_NODE = (_NONE, None, (), 0, True)
_LEAF: Any = False  # what a registry's type cache holds for leaf types
_ALL_REGISTRIES: list[PyTreeRegistry] = []
_CACHE_LIMIT = 4096


# ------------------------------------------------------------------------- registries


class PyTreeRegistry:
    """A table from node types to node kinds. Exact types only: a subclass of a
    registered type is a leaf (named tuples excepted, which are recognised by their
    ``_fields``)."""

    def __init__(
        self,
        enable_none: bool = True,
        enable_tuple: bool = True,
        enable_namedtuple: bool = True,
        enable_list: bool = True,
        enable_dict: bool = True,
    ):
        kinds: dict[type, _Kind] = {}
        if enable_none:
            kinds[_NoneType] = _NONE
        if enable_tuple:
            kinds[tuple] = _TUPLE
        if enable_list:
            kinds[list] = _LIST
        if enable_dict:
            kinds[dict] = _DICT
        kinds.update(_CUSTOM_KINDS)
        self._kinds = kinds
        self._namedtuple = enable_namedtuple
        # type -> kind, or _LEAF; filled as types are met, emptied on registration.
        self._cache: dict[type, Any] = dict(kinds)
        _ALL_REGISTRIES.append(self)

    def _classify(self, t: type) -> Any:
        """The kind of values of type ``t``, or ``_LEAF``; remembered in ``_cache``."""
        kind = self._kinds.get(t)
        if kind is None:
            kind = _NAMEDTUPLE if self._namedtuple and _is_namedtuple_type(t) else _LEAF
        cache = self._cache
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
            cache.update(self._kinds)
        cache[t] = kind
        return kind

    def _kind_of(self, x: Any) -> _Kind | None:
        kind = self._cache.get(type(x))
        if kind is None:
            kind = self._classify(type(x))
        return kind or None

    def _add(self, kind: _CustomKind) -> None:
        self._kinds[kind.type] = kind
        self._cache.clear()  # in place: flatteners hold a reference to it
        self._cache.update(self._kinds)

    def register_node(self, nodetype, flatten, unflatten, flatten_with_keys=None) -> None:
        """Registers ``nodetype`` in this registry only (see ``register_node_everywhere``)."""
        if nodetype in self._kinds:
            raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype!r}.")
        self._add(_CustomKind(nodetype, flatten, unflatten, flatten_with_keys))

    def register_dataclass_node(self, nodetype, data_fields, meta_fields) -> None:
        """Registers ``nodetype`` in this registry only, as ``register_dataclass``
        does: children the attributes ``data_fields``, auxiliary data ``meta_fields``."""
        functions = dataclass_node_functions(nodetype, tuple(data_fields), tuple(meta_fields))
        flatten, unflatten, flatten_with_keys = functions
        self.register_node(nodetype, flatten, unflatten, flatten_with_keys)

    def is_node(self, nodetype: type) -> bool:
        return nodetype in self._kinds or (self._namedtuple and _is_namedtuple_type(nodetype))

    def flatten(
        self, tree: Any, leaf_predicate: Callable[[Any], bool] | None = None
    ) -> tuple[list, PyTreeDef]:
        leaves: list = []
        return leaves, _wrap(self._flatten(tree, leaves, leaf_predicate))

    def _flatten(self, tree: Any, leaves: list, is_leaf: Callable[[Any], bool] | None):
        """Appends the leaves of ``tree`` to ``leaves`` and returns its tree tuple."""
        if is_leaf is not None:
            return _flatten_pred(tree, leaves, is_leaf, self)
        cache = self._cache
        kind = cache.get(type(tree))
        if kind is None:
            kind = self._classify(type(tree))
        if kind is _LEAF:
            leaves.append(tree)
            return None
        if kind is _NONE:
            return _NONE_NODE
        return _flatten_node(kind, tree, leaves, cache, self)

    def flatten_with_path(
        self, tree: Any, leaf_predicate: Callable[[Any, Any], bool] | None = None
    ) -> tuple[list, PyTreeDef]:
        """Like ``flatten``, but the leaves come as ``(key path, leaf)`` pairs and
        ``leaf_predicate`` is called as ``leaf_predicate(key_path, subtree)``."""
        pairs: list = []
        return pairs, _wrap(_flatten_path(tree, (), pairs, leaf_predicate, self))

    def flatten_one_level(self, tree: Any) -> tuple[Iterable, Any] | None:
        """``(children, data)`` of a node, or ``None`` if ``tree`` is a leaf."""
        kind = self._kind_of(tree)
        return None if kind is None else kind.children(tree)

    def flatten_one_level_with_keys(self, tree: Any) -> tuple[Iterable, Any] | None:
        """``([(key, child), ...], data)`` of a node, or ``None`` for a leaf."""
        kind = self._kind_of(tree)
        return None if kind is None else kind.keyed_children(tree)

    def __repr__(self) -> str:
        return "<PyTreeRegistry>"


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    """``x -> tuple(getattr(x, n) for n in names)``, fast."""
    if not names:
        return lambda x: ()
    if len(names) == 1:
        get_one = operator.attrgetter(names[0])
        return lambda x: (get_one(x),)
    return operator.attrgetter(*names)


def dataclass_node_functions(nodetype, data_fields: tuple, meta_fields: tuple):
    """``(flatten, unflatten, flatten_with_keys)`` of a class whose children are the
    attributes ``data_fields`` and whose auxiliary data is the tuple of ``meta_fields``,
    rebuilt by ``nodetype(**fields)``."""
    get_data = _getter(data_fields)
    get_meta = _getter(meta_fields)
    data_keys = tuple(GetAttrKey(n) for n in data_fields)

    def flatten(x):
        return get_data(x), get_meta(x)

    def flatten_with_keys(x):
        return list(zip(data_keys, get_data(x), strict=True)), get_meta(x)

    def unflatten(meta, data):
        kwargs = dict(zip(meta_fields, meta, strict=True))
        kwargs.update(zip(data_fields, data, strict=True))
        return nodetype(**kwargs)

    return flatten, unflatten, flatten_with_keys


def register_node_everywhere(nodetype, flatten, unflatten, flatten_with_keys=None) -> None:
    """Registers ``nodetype`` once for all registries, present and future."""
    if nodetype in _CUSTOM_KINDS or any(nodetype in r._kinds for r in _ALL_REGISTRIES):
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype!r}.")
    kind = _CustomKind(nodetype, flatten, unflatten, flatten_with_keys)
    _CUSTOM_KINDS[nodetype] = kind
    for registry in _ALL_REGISTRIES:
        registry._add(kind)


# ----------------------------------------------------------------------- flattening


def _flatten_node(kind, x, leaves, cache, registry):
    """The tree tuple of node ``x`` of ``kind``; its leaves go to ``leaves``. The hot
    loop: children that are leaves are handled here, without a call."""
    if kind is _TUPLE or kind is _LIST:
        children, data = x, None
    elif kind is _DICT:
        data = _sorted_keys(x)
        children = [x[k] for k in data]
    elif kind is _NAMEDTUPLE:
        children, data = x, type(x)
    else:
        children, data = kind.children(x)
    start = len(leaves)
    sub = []
    for c in children:
        k = cache.get(type(c))
        if k is None:
            k = registry._classify(type(c))
        if k is _LEAF:
            leaves.append(c)
            sub.append(None)
        elif k is _NONE:
            sub.append(_NONE_NODE)
        else:
            sub.append(_flatten_node(k, c, leaves, cache, registry))
    return (kind, data, tuple(sub), len(leaves) - start, not any(sub))


def _flatten_pred(x, leaves, is_leaf, registry):
    """Like ``_flatten_node`` for any ``x``, asking ``is_leaf`` about every subtree."""
    if is_leaf(x):
        leaves.append(x)
        return None
    kind = registry._kind_of(x)
    if kind is None:
        leaves.append(x)
        return None
    children, data = kind.children(x)
    start = len(leaves)
    sub = tuple([_flatten_pred(c, leaves, is_leaf, registry) for c in children])
    return (kind, data, sub, len(leaves) - start, not any(sub))


def _flatten_path(x, path, pairs, is_leaf, registry):
    if is_leaf is not None and is_leaf(path, x):
        pairs.append((path, x))
        return None
    kind = registry._kind_of(x)
    if kind is None:
        pairs.append((path, x))
        return None
    keyed, data = kind.keyed_children(x)
    start = len(pairs)
    sub = tuple([_flatten_path(c, (*path, k), pairs, is_leaf, registry) for k, c in keyed])
    return (kind, data, sub, len(pairs) - start, not any(sub))


# ------------------------------------------------------------- walking tree tuples


def _unflatten(node, leaves: list | tuple, pos: int):
    """Builds the pytree of tree tuple ``node`` (a node, not a leaf) from
    ``leaves[pos:]``; returns it and the position after its last leaf."""
    kind, data, sub, n, flat = node
    if flat:
        children = leaves[pos : pos + n]
        pos += n
    else:
        children = []
        for c in sub:
            if c is None:
                children.append(leaves[pos])
                pos += 1
            else:
                value, pos = _unflatten(c, leaves, pos)
                children.append(value)
    if kind is _TUPLE:
        return tuple(children), pos
    if kind is _LIST:
        return (children if type(children) is list else list(children)), pos
    if kind is _DICT:
        return dict(zip(data, children, strict=False)), pos  # lengths agree by construction
    return kind.rebuild(data, children), pos


def _show(node) -> str:
    if node is None:
        return "*"
    kind, data, sub = node[:3]
    return kind.show(data, [_show(c) for c in sub])


def _count_nodes(node) -> int:
    if node is None:
        return 1
    return 1 + sum([_count_nodes(c) for c in node[2]])


def _skeleton(node):
    """A hashable summary of a tree that leaves out custom nodes' auxiliary data (which
    need not be hashable). Equal trees have equal skeletons."""
    if node is None:
        return None
    kind, data, sub, n, _ = node
    if type(kind) is _CustomKind:
        data = None
    return (kind, data, n, tuple([_skeleton(c) for c in sub]))


def _make_node(kind, data, sub: tuple):
    n = sum([1 if s is None else s[3] for s in sub])
    return (kind, data, sub, n, not any(sub))


def _compose(node, inner):
    if node is None:
        return inner
    kind, data, sub = node[:3]
    return _make_node(kind, data, tuple([_compose(c, inner) for c in sub]))


def _up_to(node, x, out: list) -> None:
    if node is None:
        out.append(x)
        return
    kind, data, sub = node[:3]
    children = kind.match(data, len(sub), x)
    for c, y in zip(sub, children, strict=True):
        _up_to(c, y, out)


def _num_leaves(node) -> int:
    return 1 if node is None else node[3]


# -------------------------------------------------------------------------- PyTreeDef


def _wrap(node) -> PyTreeDef:
    td = object.__new__(PyTreeDef)
    td._node = node
    td._hash = None
    return td


class PyTreeDef:
    """The structure of a pytree: its nodes, without its leaves.

    Made by flattening (``tree_structure``, ``tree_flatten``) or by ``treedef_tuple``
    and ``PyTreeDef.from_node_data_and_children``; not constructed directly. Equal
    structures compare and hash equal; a ``PyTreeDef`` pickles when the node types in
    it can be pickled by reference.
    """

    __slots__ = ("__weakref__", "_hash", "_node")

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "PyTreeDef has no public constructor; get one from tree_structure(tree), "
            "tree_flatten(tree) or treedef_tuple(treedefs)."
        )

    @property
    def num_leaves(self) -> int:
        return _num_leaves(self._node)

    @property
    def num_nodes(self) -> int:
        return _count_nodes(self._node)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Builds the pytree of this structure with ``leaves``, in order."""
        node = self._node
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        n = _num_leaves(node)
        if len(leaves) != n:
            if len(leaves) < n:
                raise ValueError(f"Too few leaves for PyTreeDef; expected {n}, got {len(leaves)}")
            raise ValueError(f"Too many leaves for PyTreeDef; expected {n}.")
        if node is None:
            return leaves[0]
        return _unflatten(node, leaves, 0)[0]

    def flatten_up_to(self, tree: Any) -> list:
        """The subtrees of ``tree`` found where this structure has its leaves.

        ``tree`` must have this structure down to those leaves; below them it may hold
        anything. Raises ``ValueError`` describing the first difference.
        """
        out: list = []
        _up_to(self._node, tree, out)
        return out

    def children(self) -> list[PyTreeDef]:
        node = self._node
        return [] if node is None else [_wrap(c) for c in node[2]]

    def node_data(self) -> tuple[type, Any] | None:
        """``None`` for a leaf, else ``(node type, auxiliary data)``."""
        node = self._node
        if node is None:
            return None
        kind, data = node[0], node[1]
        return kind.node_type(data), kind.aux(data)

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with ``inner`` put in place of each of its leaves."""
        return _wrap(_compose(self._node, inner._node))

    def walk(
        self,
        f_node: Callable[[tuple, Any], Any],
        f_leaf: Callable[[Any], Any] | None,
        leaves: Iterable[Any],
    ) -> Any:
        """Folds the tree bottom-up: each leaf becomes ``f_leaf(leaf)`` (the leaf itself
        if ``f_leaf`` is None), each node ``f_node(tuple_of_child_results, node_data)``."""
        it = iter(leaves)
        done = object()

        def go(node):
            if node is None:
                x = next(it, done)
                if x is done:
                    raise ValueError("Too few leaves for PyTreeDef")
                return x if f_leaf is None else f_leaf(x)
            kind, data, sub = node[:3]
            if kind is _DICT:
                data = list(data)
            return f_node(tuple([go(c) for c in sub]), data)

        out = go(self._node)
        if next(it, done) is not done:
            raise ValueError("Too many leaves for PyTreeDef")
        return out

    def from_iterable_tree(self, tree: Any) -> Any:
        """Rebuilds a pytree of this structure from nested iterables of its children."""

        def go(node, x):
            if node is None:
                return x
            kind, data, sub = node[:3]
            xs = list(x)
            if len(xs) != len(sub):
                raise ValueError("Arity mismatch between trees")
            return kind.rebuild(data, [go(c, y) for c, y in zip(sub, xs, strict=True)])

        return go(self._node, tree)

    @staticmethod
    def from_node_data_and_children(
        registry: PyTreeRegistry, node_data: tuple[type, Any] | None, children: Iterable
    ) -> PyTreeDef:
        """Inverse of ``node_data()`` and ``children()``."""
        sub = tuple(c._node for c in children)
        if node_data is None:
            if sub:
                raise RuntimeError("A leaf PyTreeDef (node_data None) has no children.")
            return _wrap(None)
        nodetype, data = node_data
        kind = registry._kinds.get(nodetype)
        if kind is None:
            if not (registry._namedtuple and _is_namedtuple_type(nodetype)):
                raise RuntimeError(f"Could not find type: {nodetype!r}.")
            kind, data = _NAMEDTUPLE, nodetype
        elif kind is _DICT:
            data = tuple(data)
            if len(data) != len(sub):
                raise ValueError(f"{len(data)} dict keys given for {len(sub)} children.")
        elif kind is _NONE:
            if sub:
                raise ValueError("A None node has no children.")
            return _wrap(_NONE_NODE)
        return _wrap(_make_node(kind, data, sub))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self._node == other._node

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self._node != other._node

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            try:
                h = hash(self._node)
            except TypeError:  # auxiliary data that cannot be hashed
                h = hash(_skeleton(self._node))
            self._hash = h
        return h

    def __repr__(self) -> str:
        return f"PyTreeDef({_show(self._node)})"

    def __reduce__(self):
        return (_wrap, (self._node,))


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have the given structures."""
    return _wrap(_make_node(_TUPLE, None, tuple(t._node for t in treedefs)))


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True for a single leaf and for a node without children (``None``, ``()``...)."""
    node = treedef._node
    return node is None or not node[2]


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
    """True only for the structure of a single leaf."""
    return treedef._node is None


default_registry = PyTreeRegistry()
