"""The multivariate normal distribution (``jax.scipy.stats.multivariate_normal``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.lax import linalg as lax_linalg

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean, cov, allow_singular=None):
    """Log density at ``x`` (last axis: the coordinates) with ``mean`` and covariance
    ``cov`` (a matrix, or a scalar variance shared by every coordinate)."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    jnp.check_arraylike("multivariate_normal.logpdf", x, mean, cov)
    x, mean, cov = jnp.promote_dtypes_inexact(x, mean, cov)
    if not mean.shape:
        return -1 / 2 * jnp.square(x - mean) / cov - 1 / 2 * (jnp.log(2 * np.pi) + jnp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if not cov.shape:
        return -1 / 2 * jnp.sum(y * y, axis=-1) / cov - n / 2 * (jnp.log(2 * np.pi) + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = lax_linalg.cholesky(cov)
    batch = jnp.broadcast_shapes(chol.shape[:-2], y.shape[:-1])
    chol = jnp.broadcast_to(chol, (*batch, n, n))
    y = jnp.broadcast_to(y, (*batch, n))
    # Whitened residuals: solve chol @ z = y.
    z = lax_linalg.triangular_solve(chol, y[..., None], left_side=True, lower=True)[..., 0]
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -1 / 2 * jnp.sum(z * z, axis=-1) - n / 2 * jnp.log(2 * np.pi) - log_det


def pdf(x, mean, cov):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, mean, cov))
