"""``jit``'s ``in_shardings`` and ``out_shardings``: checked when ``jit`` is called,
and spread over the flat arguments and results of each call.

Each is a pytree prefix of what it describes: ``in_shardings`` of the tuple of
positional (non-static) arguments, ``out_shardings`` of the result. A leaf is a
``Sharding`` or None (unspecified: the argument's own placement, or XLA's choice for a
result); one sharding alone applies to everything.
"""

from __future__ import annotations

from typing import Any

from lamina.interpreters.core.tracing import Tracer
from lamina.interpreters.jaxprs.calls import UNSPECIFIED
from lamina.interpreters.runtime.sharding import Sharding
from lamina.ir import device_count_error, tree_util

__all__ = [
    "PytreeLeaf",
    "check_shardings",
    "check_type_devices",
    "flat_shardings",
    "is_unspecified",
]


def _is_leaf(x) -> bool:
    return x is None or x is UNSPECIFIED


def is_unspecified(value) -> bool:
    """Whether ``value`` asks for nothing (None, ``UnspecifiedValue``, or pytrees of
    them, which flax's ``nnx.jit`` passes)."""
    leaves = tree_util.tree_leaves(value, is_leaf=_is_leaf)
    return all(leaf is None or leaf is UNSPECIFIED for leaf in leaves)


def check_shardings(what: str, value) -> Any:
    """``value`` (a pytree of shardings) with lists made tuples, or None when it asks
    for nothing; JAX's errors for leaves that are not shardings."""
    if is_unspecified(value):
        return None
    if isinstance(value, list):
        value = tuple(value)
    for leaf in tree_util.tree_leaves(value, is_leaf=_is_leaf):
        if leaf is None or leaf is UNSPECIFIED or isinstance(leaf, Sharding):
            continue
        if type(leaf).__name__ == "PartitionSpec":
            raise RuntimeError(
                "jit requires a non-empty mesh in context if you are passing "
                f"`PartitionSpec`s to {what}. You can define a context mesh via "
                "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to "
                f"{what} and then the mesh context manager is not required."
            )
        raise TypeError(
            f"{what} leaf specifications are expected to be PartitionSpec instances or "
            f"None, but got {leaf}"
        )
    return value


class PytreeLeaf:
    """Stands for one leaf of the arguments or results in prefix-mismatch messages."""

    def __repr__(self) -> str:
        return "pytree leaf"


def _prefix_error(name: str, prefix, full) -> ValueError:
    shape = tree_util.tree_map(lambda _: PytreeLeaf(), full)
    errors = [make(name) for make in tree_util.prefix_errors(prefix, shape, is_leaf=_is_leaf)]
    details = "\n\n".join(str(e) for e in errors)
    return ValueError(f"Mismatch details ({len(errors)} found):\n{details}")


def flat_shardings(what: str, shardings, tree_value) -> tuple:
    """One sharding (or None) per leaf of ``tree_value``, from the prefix
    ``shardings``; ``what`` is ``in_shardings`` or ``out_shardings``."""
    if isinstance(shardings, Sharding):
        return (shardings,) * len(tree_util.tree_leaves(tree_value))
    if (
        what == "in_shardings"
        and isinstance(shardings, tuple)
        and len(shardings) != len(tree_value)
    ):
        raise ValueError(
            "pjit in_shardings specification must be a tree prefix of the positional "
            "arguments tuple. In particular, pjit in_shardings must either be a "
            "Sharding, a PartitionSpec, or a tuple of length equal to the number of "
            "positional arguments. But pjit in_shardings is the wrong length: got a tuple "
            f"or list of length {len(shardings)} for an args tuple of length "
            f"{len(tree_value)}."
        )
    try:
        flat = tree_util.broadcast_prefix(shardings, tree_value, is_leaf=_is_leaf)
    except ValueError:
        raise _prefix_error(f"pjit {what}", shardings, tree_value) from None
    return tuple(None if s is UNSPECIFIED else s for s in flat)


def check_type_devices(avals, args) -> None:
    """JAX's error for results typed over a mesh of more devices than the call runs on
    (no mesh in force, arguments on one device)."""
    typed = [a for a in avals if getattr(a, "type_sharding", None) is not None]
    if not typed:
        return
    leaves = tree_util.tree_leaves(args)
    if any(isinstance(x, Tracer) for x in leaves):
        return
    placed = [x.sharding.num_devices for x in leaves if getattr(x, "committed", False)]
    count = max(placed, default=1)
    for aval in typed:
        if aval.type_sharding.mesh.size != count:
            raise device_count_error(aval, count)
