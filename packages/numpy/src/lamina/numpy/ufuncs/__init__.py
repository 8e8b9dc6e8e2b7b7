"""Elementwise functions of lamina.numpy (``jnp.sin``, ``jnp.floor_divide``,
``jnp.power``, ``jnp.gcd``, ...), with JAX's type promotion, broadcasting, special
values and derivatives, the comparisons, and the ufunc objects (``jnp.add``,
``jnp.logaddexp``, ...) with their ``reduce``/``accumulate``/``at`` methods."""
