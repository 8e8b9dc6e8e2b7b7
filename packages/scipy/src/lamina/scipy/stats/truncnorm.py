"""The normal distribution truncated to [a, b] standard deviations
(``jax.scipy.stats.truncnorm``); nan where ``a >= b``."""

import numpy as np

from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.scipy.special import log_ndtr, logsumexp, ndtr
from lamina.scipy.stats import norm

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_sub_exp(x, y):
    """log(exp(x) - exp(y))."""
    return logsumexp(jnp.array([x, y]), b=jnp.array([jnp.ones_like(x), -jnp.ones_like(y)]), axis=0)


def _log_gauss_mass(a, b):
    """log(ndtr(b) - ndtr(a)), computed in the tail where the interval lies on one side
    of zero and from the two outer masses where it straddles zero."""
    a, b = jnp.broadcast_arrays(jnp.asarray(a), jnp.asarray(b))
    right = a > 0
    central = ~((b <= 0) | right)
    # On the right, mirror the interval into the left tail, where log_ndtr is accurate.
    lo, hi = jnp.where(right, -b, a), jnp.where(right, -a, b)
    tail = _log_sub_exp(log_ndtr(hi), log_ndtr(lo))
    return jnp.where(central, jnp.log1p(-ndtr(a) - ndtr(-b)), tail)


@jit
def logpdf(x, a, b, loc=0, scale=1):
    """Log density at ``x``."""
    x, a, b, loc, scale = jnp.promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = (x - loc) / scale
    val = jnp.where((z < a) | (z > b), -np.inf, val)
    return jnp.where(a >= b, np.nan, val)


def pdf(x, a, b, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


@jit
def logcdf(x, a, b, loc=0, scale=1):
    """Log of the cumulative distribution."""
    x, a, b, loc, scale = jnp.promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    z = (x - loc) / scale
    log_mass = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, z) - log_mass
    log_sf = _log_gauss_mass(z, b) - log_mass
    # Near 1 the cdf is more accurate as the complement of the sf.
    log_cdf = jnp.select(
        [z >= b, z <= a, log_cdf > -0.1, z > a],
        [0, -np.inf, jnp.log1p(-jnp.exp(log_sf)), log_cdf],
    )
    return jnp.where(a >= b, np.nan, log_cdf)


@jit
def cdf(x, a, b, loc=0, scale=1):
    """Cumulative distribution at ``x``."""
    return jnp.exp(logcdf(x, a, b, loc, scale))


@jit
def logsf(x, a, b, loc=0, scale=1):
    """Log of the survival function: the log cdf of the mirrored distribution."""
    x, a, b, loc, scale = jnp.promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


@jit
def sf(x, a, b, loc=0, scale=1):
    """Survival function ``1 - cdf``."""
    return jnp.exp(logsf(x, a, b, loc, scale))
