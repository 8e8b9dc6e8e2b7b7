"""Explaining where two pytrees differ in structure.

``prefix_errors`` backs the messages of ``tree_map`` and ``tree_broadcast`` when a tree
is not a prefix of another; ``equality_errors`` lists the places where two trees that
should have the same structure do not (for messages of higher layers such as ``jit``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from typing import Any

from lamina.ir.trees.keys import _KeyEntry, keystr
from lamina.ir.trees.pytree import PyTreeDef, default_registry

__all__ = ["equality_errors", "equality_errors_pytreedef", "prefix_errors"]

_ErrorMaker = Callable[[str], ValueError]


def _is_strict_leaf(x: Any, is_leaf: Callable[[Any], bool] | None) -> bool:
    return (is_leaf is not None and bool(is_leaf(x))) or default_registry._kind_of(x) is None


def _key_value(key: Any) -> Any:
    return key._v if isinstance(key, _KeyEntry) else key


def _key_names(keys) -> str:
    return " ".join(str(_key_value(k)) for k in keys)


def _key_difference(keys1, keys2) -> list | None:
    try:
        set1, set2 = set(keys1), set(keys2)
    except TypeError:
        return None
    return [k for k in keys1 if k not in set2] + [k for k in keys2 if k not in set1]


def prefix_errors(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list[_ErrorMaker]:
    """For each place where ``prefix_tree`` is not a prefix of ``full_tree``, a function
    that takes a name for the prefix tree (used in the message) and returns the
    ``ValueError`` to raise. Empty when ``prefix_tree`` is a prefix of ``full_tree``."""
    return list(_prefix_errors((), prefix_tree, full_tree, is_leaf))


def _prefix_errors(path, prefix, full, is_leaf) -> Iterator[_ErrorMaker]:
    if _is_strict_leaf(prefix, is_leaf):
        return
    if type(prefix) is not type(full):
        yield _maker(
            "different types",
            path,
            f"has a subtree of type\n    {type(prefix)}\nbut at the same key path the full "
            f"pytree has a subtree of different type\n    {type(full)}.",
        )
        return
    keyed1, meta1 = default_registry.flatten_one_level_with_keys(prefix)
    keyed2, meta2 = default_registry.flatten_one_level_with_keys(full)
    keys1 = [k for k, _ in keyed1]
    keys2 = [k for k, _ in keyed2]
    if isinstance(prefix, (list, tuple)):
        if len(prefix) != len(full):
            name = type(prefix).__name__
            yield _maker(
                f"different lengths of {name}",
                path,
                f"has a subtree of type {name} of length {len(prefix)}, but the full pytree "
                f"has a subtree of the same type but of length {len(full)}.",
            )
            return
    elif len(keys1) != len(keys2):
        text = (
            f"has a subtree of type\n    {type(prefix)}\nwith {len(keys1)} child keys\n"
            f"    {_key_names(keys1)}\nbut at the same key path the full pytree has a subtree "
            f"of the same type but with {len(keys2)} child keys\n    {_key_names(keys2)}\n"
        )
        diff = _key_difference(keys1, keys2)
        if diff is not None:
            text += f"so the symmetric difference on key sets is\n    {_key_names(diff)}"
        yield _maker("different numbers of pytree children", path, text)
        return
    if meta1 != meta2:
        str1, str2 = str(meta1), str(meta2)
        import difflib  # only error messages need it

        delta = "\n".join(difflib.ndiff(str1.splitlines(), str2.splitlines()))
        yield _maker(
            "different pytree metadata",
            path,
            f"has a subtree of type\n    {type(prefix)}\nwith metadata\n    {str1}\nbut at "
            "the same key path the full pytree has a subtree of the same type but with "
            f"metadata\n    {str2}\nso the diff in the metadata at these pytree nodes is\n"
            + textwrap.indent(delta, "    "),
        )
        return
    for k, (_, c1), (_, c2) in zip(keys1, keyed1, keyed2, strict=True):
        yield from _prefix_errors((*path, k), c1, c2, is_leaf)


def _maker(what: str, path: tuple, rest: str) -> _ErrorMaker:
    """An error maker; ``rest`` continues "At that key path, the prefix pytree NAME "."""

    def make(name: str) -> ValueError:
        return ValueError(
            f"pytree structure error: {what} at key path\n    {name}{keystr(path)}\n"
            f"At that key path, the prefix pytree {name} {rest}"
        )

    return make


def equality_errors(
    tree1: Any, tree2: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Iterator[tuple[tuple, str, str, str]]:
    """Yields ``(key path, what tree1 has, what tree2 has, why they differ)`` for each
    place where the two trees differ in structure, outermost first."""
    yield from _equality_errors((), tree1, tree2, is_leaf)


def _children_text(x, n: int) -> str:
    return f"{type(x)} with {n} child{'ren' if n > 1 else ''}"


def _equality_errors(path, t1, t2, is_leaf):
    if _is_strict_leaf(t1, is_leaf) and _is_strict_leaf(t2, is_leaf):
        return
    if type(t1) is not type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        name = type(t1).__name__
        yield (
            path,
            f"{name} of length {len(t1)}",
            f"{name} of length {len(t2)}",
            "the lengths do not match",
        )
        return
    keyed1, meta1 = default_registry.flatten_one_level_with_keys(t1)
    keyed2, meta2 = default_registry.flatten_one_level_with_keys(t2)
    keys1 = [k for k, _ in keyed1]
    keys2 = [k for k, _ in keyed2]
    if len(keys1) != len(keys2):
        why = "the numbers of children do not match"
        diff = _key_difference(keys1, keys2)
        if diff:
            names = " ".join(repr(_key_value(k)) for k in diff)
            why += f", with the symmetric difference of key sets: {{{names}}}"
        yield path, _children_text(t1, len(keys1)), _children_text(t2, len(keys2)), why
        return
    if meta1 != meta2:
        yield (
            path,
            f"{type(t1)} with pytree metadata {meta1}",
            f"{type(t2)} with pytree metadata {meta2}",
            "the pytree node metadata does not match",
        )
        return
    for k, (_, c1), (_, c2) in zip(keys1, keyed1, keyed2, strict=True):
        yield from _equality_errors((*path, k), c1, c2, is_leaf)


class _LeafMarker:
    def __repr__(self) -> str:
        return "pytree leaf"


def equality_errors_pytreedef(
    treedef1: PyTreeDef, treedef2: PyTreeDef
) -> Iterator[tuple[tuple, str, str, str]]:
    """``equality_errors`` for two structures."""
    leaf = _LeafMarker()
    return equality_errors(
        treedef1.unflatten([leaf] * treedef1.num_leaves),
        treedef2.unflatten([leaf] * treedef2.num_leaves),
    )
