"""The samplers of ``jax.random``, one module per family, each public function beside its
jitted body."""
