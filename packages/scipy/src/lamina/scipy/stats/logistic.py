"""The logistic distribution (``jax.scipy.stats.logistic``)."""

from lamina import numpy as jnp
from lamina.scipy.special import expit, logit

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log density at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("logistic.logpdf", x, loc, scale)
    half_z = (x - loc) / scale / 2
    return -2 * jnp.logaddexp(half_z, -half_z) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("logistic.cdf", x, loc, scale)
    return expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """Survival function ``1 - cdf``."""
    x, loc, scale = jnp.promote_args_inexact("logistic.sf", x, loc, scale)
    return expit(-((x - loc) / scale))


def ppf(x, loc=0, scale=1):
    """Quantile function."""
    x, loc, scale = jnp.promote_args_inexact("logistic.ppf", x, loc, scale)
    return logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    """Inverse survival function."""
    x, loc, scale = jnp.promote_args_inexact("logistic.isf", x, loc, scale)
    return -logit(x) * scale + loc
