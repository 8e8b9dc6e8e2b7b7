"""The ``stablehlo`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.stablehlo import *  # noqa: F403
