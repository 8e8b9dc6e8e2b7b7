"""The ``mpmd`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.mpmd import *  # noqa: F403
