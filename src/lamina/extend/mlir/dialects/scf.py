"""The ``scf`` MLIR dialect (jaxlib's bindings)."""

from jaxlib.mlir.dialects.scf import *  # noqa: F403
