"""`lamina.tree`: the public face of `lamina.ir.tree` (JAX's `jax.tree`)."""

from lamina.ir import __all__  # noqa: F401
from lamina.ir.tree import *  # noqa: F403
