"""The right-skewed Gumbel distribution (``jax.scipy.stats.gumbel_r``); nan where
``scale <= 0``."""

import math

import numpy as np

from lamina import numpy as jnp
from lamina.interpreters import custom_jvp

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log density at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(scale > 0, -(z + jnp.exp(-z)) - jnp.log(scale), np.nan)


def pdf(x, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Log of the cumulative distribution."""
    x, loc, scale = jnp.promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
    return jnp.where(scale > 0, -jnp.exp(-(x - loc) / scale), np.nan)


def cdf(x, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    return jnp.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """Survival function ``1 - cdf``."""
    x, loc, scale = jnp.promote_args_inexact("gumbel_r.sf", x, loc, scale)
    return jnp.where(scale > 0, 1 - jnp.exp(-jnp.exp((loc - x) / scale)), np.nan)


@custom_jvp
def _log1mexp(x):
    """log(1 - exp(-x)) for x > 0, by the branch accurate at each end."""
    return jnp.where(x < math.log(2), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


_log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    x, loc, scale = jnp.promote_args_inexact("gumbel_r.logsf", x, loc, scale)
    return jnp.where(scale > 0, _log1mexp(jnp.exp((loc - x) / scale)), np.nan)


def ppf(p, loc=0, scale=1):
    """Quantile function; nan outside (0, 1)."""
    p, loc, scale = jnp.promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    quantile = loc - scale * jnp.log(-jnp.log(p))
    return jnp.where((p > 0) & (p < 1), quantile, np.nan)
