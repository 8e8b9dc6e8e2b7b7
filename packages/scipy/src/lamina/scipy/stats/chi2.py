"""The chi-squared distribution (``jax.scipy.stats.chi2``)."""

import math

import numpy as np

from lamina import lax
from lamina import numpy as jnp
from lamina.scipy.special import gammainc, gammaincc

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, df, loc=0, scale=1):
    """Log density at ``x`` with ``df`` degrees of freedom."""
    x, df, loc, scale = jnp.promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2
    kernel = (half_df - 1) * jnp.log(y) - y / 2
    log_norm = -(lax.lgamma(half_df) + math.log(2) * df / 2)
    log_probs = log_norm - jnp.log(scale) + kernel
    return jnp.where(x < loc, -np.inf, log_probs)


def pdf(x, df, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, df, loc, scale))


def _half_standardized(x, loc, scale):
    return jnp.clip((x - loc) / (scale * 2), 0, np.inf)


def cdf(x, df, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    x, df, loc, scale = jnp.promote_args_inexact("chi2.cdf", x, df, loc, scale)
    return gammainc(df / 2, _half_standardized(x, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    """Log of the cumulative distribution."""
    return jnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    """Survival function ``1 - cdf``."""
    x, df, loc, scale = jnp.promote_args_inexact("chi2.sf", x, df, loc, scale)
    return gammaincc(df / 2, _half_standardized(x, loc, scale))


def logsf(x, df, loc=0, scale=1):
    """Log of the survival function."""
    return jnp.log(sf(x, df, loc, scale))
