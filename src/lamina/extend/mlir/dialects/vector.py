"""The ``vector`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.vector import *  # noqa: F403
