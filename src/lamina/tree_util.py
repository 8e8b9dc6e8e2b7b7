"""`lamina.tree_util`: the public face of `lamina.ir.tree_util` (JAX's `jax.tree_util`)."""

from lamina.ir.tree_util import *  # noqa: F403
from lamina.ir.tree_util import __all__  # noqa: F401
