"""The Pareto distribution (``jax.scipy.stats.pareto``)."""

import numpy as np

from lamina import numpy as jnp

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, b, loc=0, scale=1):
    """Log density at ``x`` with shape ``b``; support [loc + scale, inf)."""
    x, b, loc, scale = jnp.promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    z = (x - loc) / scale
    log_probs = -(jnp.log(scale / b) + (b + 1) * jnp.log(z))
    return jnp.where(x < loc + scale, -np.inf, log_probs)


def pdf(x, b, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    x, b, loc, scale = jnp.promote_args_inexact("pareto.cdf", x, b, loc, scale)
    z = (x - loc) / scale
    return jnp.where(x < loc + scale, 0, 1 - z ** (-b)).astype(x.dtype)


def logcdf(x, b, loc=0, scale=1):
    """Log of the cumulative distribution."""
    x, b, loc, scale = jnp.promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    z = (x - loc) / scale
    return jnp.where(x < loc + scale, -np.inf, jnp.log1p(-(z ** (-b))))


def logsf(x, b, loc=0, scale=1):
    """Log of the survival function."""
    x, b, loc, scale = jnp.promote_args_inexact("pareto.logsf", x, b, loc, scale)
    z = (x - loc) / scale
    return jnp.where(x < loc + scale, 0, -(b * jnp.log(z))).astype(x.dtype)


def sf(x, b, loc=0, scale=1):
    """Survival function ``1 - cdf``."""
    return jnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    """Quantile function; nan outside [0, 1]."""
    q, b, loc, scale = jnp.promote_args_inexact("pareto.ppf", q, b, loc, scale)
    quantile = loc + scale * (1 - q) ** -(1 / b)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, quantile)
