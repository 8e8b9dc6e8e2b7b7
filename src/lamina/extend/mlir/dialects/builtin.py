"""The ``builtin`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.builtin import *  # noqa: F403
