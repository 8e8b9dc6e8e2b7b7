"""The ``jax.tree`` API: short names for the ``tree_util`` functions, and ``static``."""

from __future__ import annotations

import dataclasses
from typing import Any

from lamina.ir.tree_util import tree_all as all
from lamina.ir.tree_util import tree_broadcast as broadcast
from lamina.ir.tree_util import tree_flatten as flatten
from lamina.ir.tree_util import tree_flatten_with_path as flatten_with_path
from lamina.ir.tree_util import tree_leaves as leaves
from lamina.ir.tree_util import tree_leaves_with_path as leaves_with_path
from lamina.ir.tree_util import tree_map as map
from lamina.ir.tree_util import tree_map_with_path as map_with_path
from lamina.ir.tree_util import tree_reduce as reduce
from lamina.ir.tree_util import tree_reduce_associative as reduce_associative
from lamina.ir.tree_util import tree_structure as structure
from lamina.ir.tree_util import tree_transpose as transpose
from lamina.ir.tree_util import tree_unflatten as unflatten

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]


def static(**kwargs: Any) -> Any:
    """``dataclasses.field(**kwargs)`` marked ``static=True`` in its metadata, so that
    ``register_dataclass`` makes the field part of the structure, not a child."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
