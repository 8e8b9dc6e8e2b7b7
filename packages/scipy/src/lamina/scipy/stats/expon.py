"""The exponential distribution (``jax.scipy.stats.expon``)."""

import numpy as np

from lamina import numpy as jnp

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log density at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("expon.logpdf", x, loc, scale)
    log_probs = -((x - loc) / scale + jnp.log(scale))
    return jnp.where(x < loc, -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("expon.cdf", x, loc, scale)
    neg_z = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(neg_z), -jnp.expm1(neg_z))


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    x, loc, scale = jnp.promote_args_inexact("expon.sf", x, loc, scale)
    neg_z = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(neg_z), neg_z)


def sf(x, loc=0, scale=1):
    """Survival function ``1 - cdf``."""
    return jnp.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Log of the cumulative distribution."""
    return jnp.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """Quantile function; nan outside [0, 1]."""
    q, loc, scale = jnp.promote_args_inexact("expon.ppf", q, loc, scale)
    invalid = jnp.isnan(q) | (q < 0) | (q > 1)
    return jnp.where(invalid, np.nan, loc - scale * jnp.log1p(-q))
