"""``jax._src.tree_util``: ``prefix_errors`` and ``_registry``, which answers
``type in _registry`` for the types lamina's default pytree registry has as nodes
(built-in containers and registered classes; named tuples are nodes by their shape, not
by registration, and are not in it, as in JAX)."""

from lamina.ir import prefix_errors
from lamina.tree_util import default_registry

__all__ = ["_registry", "prefix_errors"]


class _RegisteredTypes:
    """The node types of the default registry, for ``in`` tests."""

    def __contains__(self, nodetype) -> bool:
        if not isinstance(nodetype, type):
            return False
        if issubclass(nodetype, tuple) and hasattr(nodetype, "_fields"):
            return False
        return default_registry.is_node(nodetype)

    def __repr__(self) -> str:
        return "<the node types of lamina's default pytree registry>"


_registry = _RegisteredTypes()
