"""`lamina.dtypes`: the public face of `lamina.ir.dtypes` (JAX's `jax.dtypes`)."""

from lamina.ir import __all__  # noqa: F401
from lamina.ir.dtypes import *  # noqa: F403
