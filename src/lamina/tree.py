"""`lamina.tree`: the public face of `lamina.ir.tree` (JAX's `jax.tree`)."""

from lamina.ir.tree import *  # noqa: F403
from lamina.ir.tree import __all__  # noqa: F401
