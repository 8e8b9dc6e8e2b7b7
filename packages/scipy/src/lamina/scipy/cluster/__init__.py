"""JAX's `jax.scipy.cluster`: vector quantization (`vq`)."""

from lamina.scipy.cluster import vq

__all__ = ["vq"]
