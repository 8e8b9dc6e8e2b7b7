"""The ``chlo`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.chlo import *  # noqa: F403
