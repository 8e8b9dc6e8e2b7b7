"""Key entries: the steps of a key path from the root of a pytree down to one leaf.

A key path is a tuple of entries. Built-in nodes name their children with
``SequenceKey`` (tuples, lists), ``DictKey`` (dicts), ``GetAttrKey`` (named tuples,
dataclasses); a custom node registered without keys gets ``FlattenedIndexKey``.
Entries are immutable, hashable and compare equal only to entries of the same class.
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "SequenceKey", "keystr"]


class _KeyEntry:
    """Shared machinery: one value in slot ``_v``, exposed by a read-only property."""

    __slots__ = ("_v",)
    _field = ""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._v == self._v

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._v))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._field}={self._v!r})"

    def __reduce__(self):
        return (type(self), (self._v,))


class SequenceKey(_KeyEntry):
    """Position ``idx`` in a tuple or list; prints as ``[idx]``."""

    __slots__ = ()
    __match_args__ = ("idx",)
    _field = "idx"

    def __init__(self, idx: int):
        try:
            self._v = operator.index(idx)
        except TypeError:
            raise TypeError(f"SequenceKey index must be an int, got {idx!r}") from None

    @property
    def idx(self) -> int:
        return self._v

    def __str__(self) -> str:
        return f"[{self._v!r}]"


class DictKey(_KeyEntry):
    """Key ``key`` of a dict-like node; prints as ``[repr(key)]``."""

    __slots__ = ()
    __match_args__ = ("key",)
    _field = "key"

    def __init__(self, key: Any):
        self._v = key

    @property
    def key(self) -> Any:
        return self._v

    def __str__(self) -> str:
        return f"[{self._v!r}]"


class GetAttrKey(_KeyEntry):
    """Attribute ``name`` of a node (named tuple field, dataclass field); prints ``.name``."""

    __slots__ = ()
    __match_args__ = ("name",)
    _field = "name"

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"GetAttrKey name must be a str, got {name!r}")
        self._v = name

    @property
    def name(self) -> str:
        return self._v

    def __str__(self) -> str:
        return f".{self._v}"


class FlattenedIndexKey(_KeyEntry):
    """Position ``key`` among the children of a custom node registered without keys."""

    __slots__ = ()
    __match_args__ = ("key",)
    _field = "key"

    def __init__(self, key: int):
        try:
            self._v = operator.index(key)
        except TypeError:
            raise TypeError(f"FlattenedIndexKey index must be an int, got {key!r}") from None

    @property
    def key(self) -> int:
        return self._v

    def __str__(self) -> str:
        return f"[<flat index {self._v}>]"


def _simple_str(entry: Any) -> str:
    if isinstance(entry, _KeyEntry):
        return str(entry._v)
    return str(entry)


def keystr(keys: tuple[Any, ...], *, simple: bool = False, separator: str | None = "") -> str:
    """Renders a key path as text.

    By default each entry prints as Python would index it (``['a'][0].x``); with
    ``simple=True`` only the bare key, index or name is printed (``a0x``). ``separator``
    goes between entries.
    """
    to_str = _simple_str if simple else str
    return (separator or "").join([to_str(k) for k in keys])
