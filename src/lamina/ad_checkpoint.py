"""`lamina.ad_checkpoint`: rematerialisation (`jax.ad_checkpoint`)."""

import lamina.lax  # noqa: F401  (array operators inside checkpointed functions)
from lamina.interpreters import (
    Offloadable,
    Recompute,
    Saveable,
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    print_saved_residuals,
    remat,
)

__all__ = [
    "Offloadable",
    "Recompute",
    "Saveable",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",
]
