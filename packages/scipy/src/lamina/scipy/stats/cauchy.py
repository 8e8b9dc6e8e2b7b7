"""The Cauchy distribution (``jax.scipy.stats.cauchy``)."""

import numpy as np

from lamina import numpy as jnp

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log density at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -(jnp.log(np.pi * scale) + jnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("cauchy.cdf", x, loc, scale)
    return 0.5 + jnp.arctan((x - loc) / scale) / np.pi


def logcdf(x, loc=0, scale=1):
    """Log of the cumulative distribution."""
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """Survival function: the cdf of the mirrored distribution."""
    x, loc, scale = jnp.promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    x, loc, scale = jnp.promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """Quantile function."""
    q, loc, scale = jnp.promote_args_inexact("cauchy.ppf", q, loc, scale)
    return jnp.tan(np.pi * q - np.pi / 2) * scale + loc


def isf(q, loc=0, scale=1):
    """Inverse survival function."""
    q, loc, scale = jnp.promote_args_inexact("cauchy.isf", q, loc, scale)
    return jnp.tan(np.pi / 2 - np.pi * q) * scale + loc
