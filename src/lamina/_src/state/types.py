"""``jax._src.state.types``: ``AbstractRef``, the abstract value of a mutable array
reference (``lamina.ref``'s)."""

from lamina.ref import AbstractRef

__all__ = ["AbstractRef"]
