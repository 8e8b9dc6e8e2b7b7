"""The methods of ``jax.Array`` (``x.sum()``, ``x[i]``, ``x.at[i].set(v)``, operators,
...), installed on arrays and tracers; the top tier of lamina.numpy."""
