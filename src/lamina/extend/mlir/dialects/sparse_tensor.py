"""The ``sparse_tensor`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.sparse_tensor import *  # noqa: F403
