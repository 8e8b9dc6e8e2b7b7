"""The ``func`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.func import *  # noqa: F403
