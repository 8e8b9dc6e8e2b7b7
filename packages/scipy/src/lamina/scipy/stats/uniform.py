"""The uniform distribution on [loc, loc + scale] (``jax.scipy.stats.uniform``)."""

import numpy as np

from lamina import numpy as jnp

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """Log density at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("uniform.logpdf", x, loc, scale)
    outside = (x > loc + scale) | (x < loc)
    return jnp.where(outside, -np.inf, -jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    x, loc, scale = jnp.promote_args_inexact("uniform.cdf", x, loc, scale)
    zero, one = jnp.zeros((), x.dtype), jnp.ones((), x.dtype)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.select([x < loc, x > loc + scale, inside], [zero, one, (x - loc) / scale])


def ppf(q, loc=0, scale=1):
    """Quantile function; nan outside [0, 1]."""
    q, loc, scale = jnp.promote_args_inexact("uniform.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)
