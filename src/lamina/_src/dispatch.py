"""``jax._src.dispatch``: ``wait_for_tokens`` waits for every pending effect of the
programs dispatched so far (``jax.effects_barrier``)."""

from lamina.interpreters import effects_barrier as wait_for_tokens

__all__ = ["wait_for_tokens"]
