"""The ``sdy`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.sdy import *  # noqa: F403
