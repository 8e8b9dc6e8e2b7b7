"""The normal distribution (``jax.scipy.stats.norm``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.scipy.special import log_ndtr, ndtr, ndtri

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log density at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("norm.logpdf", x, loc, scale)
    variance = jnp.square(scale)
    return (jnp.log(2 * np.pi * variance) + jnp.square(x - loc) / variance) / -2


def pdf(x, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("norm.cdf", x, loc, scale)
    return ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """Log of the cumulative distribution, accurate far in the left tail."""
    x, loc, scale = jnp.promote_args_inexact("norm.logcdf", x, loc, scale)
    return log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """Survival function: the cdf of the mirrored distribution."""
    x, loc, scale = jnp.promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    x, loc, scale = jnp.promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """Quantile function, in the default float dtype (as JAX's)."""
    return jnp.asarray(ndtri(q) * scale + loc, float)


def isf(q, loc=0, scale=1):
    """Inverse survival function."""
    return ppf(1 - jnp.asarray(q), loc, scale)
