"""Pytrees: nested containers of arrays, the ``jax.tree_util`` API.

A pytree is a leaf (anything whose type is not registered as a node) or a node whose
children are pytrees. Registered node types: ``None`` (no children), ``tuple``,
``list``, ``dict`` (children in sorted key order), named tuples, ``OrderedDict``
(insertion order), ``defaultdict`` (sorted key order), ``Partial``, and whatever is
registered with ``register_pytree_node`` and friends. Registration is by exact type,
once, for the whole process.

This module is the public face. Behind it, in ``lamina.ir.trees``: ``pytree``
(registries, ``PyTreeDef``, flattening), ``kinds`` (what each kind of node means),
``nodes`` (registration functions and ``Partial``), ``keys`` (key paths) and ``errors``
(messages about mismatched structures).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from lamina.ir.trees.errors import equality_errors as equality_errors
from lamina.ir.trees.errors import prefix_errors as prefix_errors
from lamina.ir.trees.keys import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey, keystr
from lamina.ir.trees.nodes import (
    Partial,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
)
from lamina.ir.trees.pytree import PyTreeDef, _wrap, default_registry, treedef_is_leaf
from lamina.ir.trees.pytree import treedef_is_strict_leaf as treedef_is_strict_leaf
from lamina.ir.trees.pytree import treedef_tuple as _treedef_tuple

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "default_registry",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]

# Also importable from here, for higher layers, though not among jax.tree_util's public
# names: broadcast_prefix, prefix_errors, equality_errors, treedef_is_strict_leaf.

T = TypeVar("T")
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]

_flatten = default_registry._flatten


# ----------------------------------------------------------------- flatten, unflatten


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """The leaves of ``tree``, left to right, and its structure.

    ``is_leaf(subtree)`` returning true makes that subtree a leaf (it is called on every
    subtree, nodes included, before looking inside it).
    """
    leaves: list = []
    return leaves, _wrap(_flatten(tree, leaves, is_leaf))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """The pytree of structure ``treedef`` holding ``leaves``; inverse of ``tree_flatten``."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree``, left to right."""
    leaves: list = []
    _flatten(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of ``tree``, without its leaves."""
    return _wrap(_flatten(tree, [], is_leaf))


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple of trees with structures ``treedefs``."""
    return _treedef_tuple(treedefs)


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the children of the root node (empty for a leaf)."""
    return treedef.children()


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every element of ``iterable`` is a leaf."""
    if is_leaf is None:
        return all(default_registry._kind_of(x) is None for x in iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves, strict=True))


def is_tree_node(typ: type) -> bool:
    """True if values of type ``typ`` are pytree nodes rather than leaves."""
    return default_registry.is_node(typ)


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """``(children, auxiliary data)`` of the root node of ``tree``."""
    out = default_registry.flatten_one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def flatten_one_level_with_keys(tree: Any) -> tuple[list[tuple[Any, Any]], Hashable]:
    """``([(key, child), ...], auxiliary data)`` of the root node of ``tree``."""
    out = default_registry.flatten_one_level_with_keys(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


# -------------------------------------------------------------------------- mapping


def _explained(error: ValueError, prefix: Any, full: Any, is_leaf, name: str) -> ValueError:
    """The clearest error for ``prefix`` not being a prefix of ``full``."""
    makers = prefix_errors(prefix, full, is_leaf)
    return makers[0](name) if makers else error


def tree_map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Applies ``f`` to the leaves of ``tree`` (and the matching subtrees of each tree in
    ``rest``), building a tree of the results with the structure of ``tree``.

    Each tree in ``rest`` must have the structure of ``tree``, or be deeper where
    ``tree`` has leaves: ``f`` then gets those whole subtrees.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    columns = [leaves]
    for other in rest:
        try:
            columns.append(treedef.flatten_up_to(other))
        except ValueError as e:
            raise _explained(e, tree, other, is_leaf, "tree_map tree") from None
    return treedef.unflatten([f(*xs) for xs in zip(*columns, strict=True)])


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like ``tree_flatten``, with each leaf paired with its key path.

    ``is_leaf`` is called as ``is_leaf(subtree)``, or ``is_leaf(key_path, subtree)``
    when ``is_leaf_takes_path`` is true.
    """
    predicate = is_leaf
    if is_leaf is not None and not is_leaf_takes_path:

        def predicate(_path, x):
            return is_leaf(x)

    return default_registry.flatten_with_path(tree, predicate)


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """The ``(key path, leaf)`` pairs of ``tree``, left to right."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Like ``tree_map``, but ``f`` is called as ``f(key_path, leaf, *others)``."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    columns = [[p for p, _ in pairs], [x for _, x in pairs]]
    for other in rest:
        try:
            columns.append(treedef.flatten_up_to(other))
        except ValueError as e:
            plain_is_leaf = None if is_leaf_takes_path else is_leaf
            raise _explained(e, tree, other, plain_is_leaf, "tree_map_with_path tree") from None
    return treedef.unflatten([f(*xs) for xs in zip(*columns, strict=True)])


def broadcast_prefix(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list:
    """One entry per leaf of ``full_tree``: the leaf of ``prefix_tree`` above it."""
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    try:
        subtrees = treedef.flatten_up_to(full_tree)
    except ValueError as e:
        raise _explained(
            e, prefix_tree, full_tree, is_leaf, "broadcast_prefix prefix_tree"
        ) from None
    out: list = []
    for leaf, subtree in zip(leaves, subtrees, strict=True):
        out.extend([leaf] * len(tree_leaves(subtree)))
    return out


def tree_broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """``full_tree``'s structure, each leaf replaced by the leaf of ``prefix_tree`` above
    it: ``tree_broadcast([1, {'a': 2}], [(3, 4), {'a': [5, 6]}])`` is
    ``[(1, 1), {'a': [2, 2]}]``."""
    return tree_structure(full_tree).unflatten(broadcast_prefix(prefix_tree, full_tree, is_leaf))


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turns a tree of structure ``outer`` of trees of structure ``inner`` into a tree of
    structure ``inner`` of trees of structure ``outer``. ``inner_treedef=None`` takes it
    from the first outer leaf."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    rows = [flat[i * inner_size : (i + 1) * inner_size] for i in range(outer_size)]
    return inner_treedef.unflatten(
        [outer_treedef.unflatten(col) for col in zip(*rows, strict=True)]
    )


# ------------------------------------------------------------------------- reducing


class _Unspecified:
    def __repr__(self) -> str:
        return "<unspecified>"


_UNSPECIFIED: Any = _Unspecified()


def tree_reduce(
    function: Callable[[T, Any], T],
    tree: Any,
    initializer: Any = _UNSPECIFIED,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """``functools.reduce(function, tree_leaves(tree), initializer)``."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def _halving_reduce(xs: list, operation: Callable) -> Any:
    if len(xs) == 1:
        return xs[0]
    mid = len(xs) // 2
    return operation(_halving_reduce(xs[:mid], operation), _halving_reduce(xs[mid:], operation))


def tree_reduce_associative(
    operation: Callable[[T, T], T],
    tree: Any,
    *,
    identity: Any = _UNSPECIFIED,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """Combines the leaves with an associative ``operation`` as a balanced tree of calls
    (each half reduced first); ``identity`` is the result for a tree without leaves."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _UNSPECIFIED:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return _halving_reduce(leaves, operation)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every leaf is truthy."""
    return all(tree_leaves(tree, is_leaf))
