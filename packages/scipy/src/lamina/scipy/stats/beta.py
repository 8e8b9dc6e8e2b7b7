"""The beta distribution (``jax.scipy.stats.beta``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.scipy.special import betainc, betaln, xlog1py, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, b, loc=0, scale=1):
    """Log density at ``x`` of Beta(``a``, ``b``) on [loc, loc + scale]."""
    x, a, b, loc, scale = jnp.promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = xlogy(a - 1, y) + xlog1py(b - 1, -y) - betaln(a, b) - jnp.log(scale)
    result = jnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, result)


def pdf(x, a, b, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _standardized(x, loc, scale):
    return jnp.clip((x - loc) / scale, 0, 1)


def cdf(x, a, b, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    x, a, b, loc, scale = jnp.promote_args_inexact("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, _standardized(x, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """Log of the cumulative distribution."""
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """Survival function ``1 - cdf``, from the mirrored incomplete beta."""
    x, a, b, loc, scale = jnp.promote_args_inexact("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - _standardized(x, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """Log of the survival function."""
    return jnp.log(sf(x, a, b, loc, scale))
