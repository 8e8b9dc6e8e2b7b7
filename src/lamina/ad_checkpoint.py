"""`lamina.ad_checkpoint`: rematerialisation (`jax.ad_checkpoint`)."""

import lamina.lax  # noqa: F401  (array operators inside checkpointed functions)
from lamina.interpreters import checkpoint, checkpoint_name, checkpoint_policies, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
