"""The Bernoulli distribution (``jax.scipy.stats.bernoulli``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.scipy.special import xlog1py, xlogy

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    """Log of the probability mass at ``k`` of a Bernoulli(``p``) shifted by ``loc``."""
    k, p, loc = jnp.promote_args_inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1 - x, -p)
    return jnp.where((x < 0) | (x > 1), -np.inf, log_probs)


def pmf(k, p, loc=0):
    """Probability mass at ``k``."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """Cumulative distribution at ``k``; nan where ``p`` lies outside [0, 1]."""
    k, p = jnp.promote_args_inexact("bernoulli.cdf", k, p)
    invalid = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
    value = jnp.where(k < 0, 0, jnp.where(k < 1, 1 - p, 1)).astype(k.dtype)
    return jnp.where(invalid, np.nan, value)


def ppf(q, p):
    """Quantile function: the smallest ``k`` in {0, 1} with ``cdf(k) >= q``."""
    q, p = jnp.promote_args_inexact("bernoulli.ppf", q, p)
    invalid = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return jnp.where(invalid, np.nan, jnp.where(q <= 1 - p, 0, 1).astype(q.dtype))
