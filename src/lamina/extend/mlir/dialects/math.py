"""The ``math`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.math import *  # noqa: F403
