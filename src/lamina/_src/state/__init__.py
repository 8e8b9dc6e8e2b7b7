"""``jax._src.state``: only ``types`` (see :mod:`lamina._src.state.types`)."""
