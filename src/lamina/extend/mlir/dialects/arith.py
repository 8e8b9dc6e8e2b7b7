"""The ``arith`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.arith import *  # noqa: F403
