"""The ``memref`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.memref import *  # noqa: F403
