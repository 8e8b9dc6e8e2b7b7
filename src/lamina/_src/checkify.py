"""``jax._src.checkify``: ``jax.experimental.checkify`` with its error base class and
the type variable of checked functions' outputs."""

from typing import TypeVar

from lamina.experimental.checkify import Error, checkify, user_checks
from lamina.experimental.checkify.failures import JaxException

__all__ = ["Error", "JaxException", "Out", "checkify", "user_checks"]

Out = TypeVar("Out")
