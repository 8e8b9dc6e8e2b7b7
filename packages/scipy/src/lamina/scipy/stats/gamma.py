"""The gamma distribution (``jax.scipy.stats.gamma``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.scipy.special import gammainc, gammaincc, gammaln, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, loc=0, scale=1):
    """Log density at ``x`` of Gamma(``a``) on [loc, inf) with ``scale``."""
    x, a, loc, scale = jnp.promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    inside = x >= loc
    # Outside the support y is 1, so the masked branch stays finite for gradients.
    y = jnp.where(inside, (x - loc) / scale, 1)
    log_probs = xlogy(a - 1, y) - y - (gammaln(a) + jnp.log(scale))
    return jnp.where(inside, log_probs, -np.inf)


def pdf(x, a, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    x, a, loc, scale = jnp.promote_args_inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(a, jnp.clip((x - loc) / scale, 0, np.inf))


def logcdf(x, a, loc=0, scale=1):
    """Log of the cumulative distribution."""
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """Survival function ``1 - cdf``."""
    x, a, loc, scale = jnp.promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return jnp.where(y < 0, 1, gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    """Log of the survival function."""
    return jnp.log(sf(x, a, loc, scale))
