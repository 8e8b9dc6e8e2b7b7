"""lamina.scipy.linalg: JAX's ``jax.scipy.linalg``."""

from lamina.scipy.linalg.matrix_exponential import expm, expm_frechet  # noqa: F401
