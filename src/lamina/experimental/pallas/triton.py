"""`lamina.experimental.pallas.triton` (`jax.experimental.pallas.triton`)."""

from lamina.pallas.triton import *  # noqa: F403
from lamina.pallas.triton import __all__  # noqa: F401
