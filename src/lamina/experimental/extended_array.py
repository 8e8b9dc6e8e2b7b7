"""``EArray``: JAX's array of a user-defined extended dtype, over its physical data."""

from lamina.interpreters import EArray

__all__ = ["EArray"]
