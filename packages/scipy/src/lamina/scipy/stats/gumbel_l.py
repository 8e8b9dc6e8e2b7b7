"""The left-skewed Gumbel distribution (``jax.scipy.stats.gumbel_l``); nan where
``scale <= 0``."""

import numpy as np

from lamina import numpy as jnp

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log density at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("gumbel_l.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(scale > 0, z - jnp.exp(z) - jnp.log(scale), np.nan)


def pdf(x, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Log of the cumulative distribution."""
    x, loc, scale = jnp.promote_args_inexact("gumbel_l.logcdf", x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(scale > 0, jnp.log(-jnp.expm1(-jnp.exp(z))), np.nan)


def cdf(x, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    return jnp.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    x, loc, scale = jnp.promote_args_inexact("gumbel_l.logsf", x, loc, scale)
    return jnp.where(scale > 0, -jnp.exp((x - loc) / scale), np.nan)


def sf(x, loc=0, scale=1):
    """Survival function ``1 - cdf``."""
    return jnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """Quantile function; nan outside (0, 1)."""
    p, loc, scale = jnp.promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    quantile = loc + scale * jnp.log(-jnp.log1p(-p))
    return jnp.where((p > 0) & (p < 1), quantile, np.nan)
