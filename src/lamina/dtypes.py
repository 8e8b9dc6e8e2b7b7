"""`lamina.dtypes`: the public face of `lamina.ir.dtypes` (JAX's `jax.dtypes`)."""

from lamina.ir.dtypes import *  # noqa: F403
from lamina.ir.dtypes import __all__  # noqa: F401
