"""``jax._src.interpreters``: only ``ad`` (see :mod:`lamina._src.interpreters.ad`)."""
