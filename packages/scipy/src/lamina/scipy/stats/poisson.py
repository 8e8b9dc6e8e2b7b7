"""The Poisson distribution (``jax.scipy.stats.poisson``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.scipy.special import entr, gammaincc, gammaln, xlogy

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    """Log of the probability mass at ``k``; -inf at non-integer ``k``."""
    k, mu, loc = jnp.promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    """Probability mass at ``k``."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """Cumulative distribution at ``k``."""
    k, mu, loc = jnp.promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    return jnp.where(x < 0, 0, gammaincc(jnp.floor(1 + x), mu)).astype(k.dtype)


def _entropy_by_sum(mu, terms, upper_bound):
    """Entropy as the sum of ``-p log p`` over the first ``terms`` masses below
    ``upper_bound``."""
    k = jnp.arange(terms, dtype=mu.dtype)[:, None]
    probs = jnp.where(k < jnp.ceil(upper_bound)[None, :], pmf(k, mu, 0), 0.0)
    return jnp.sum(entr(probs), axis=0)


@jit
def entropy(mu, loc=0):
    """Entropy of Poisson(``mu``): exact sums for ``mu < 100``, the asymptotic
    expansion above."""
    jnp.check_arraylike("poisson.entropy", mu, loc)
    mu, loc = jnp.promote_dtypes_inexact(mu, loc)
    shape = jnp.broadcast_shapes(mu.shape, loc.shape)
    flat = jnp.ravel(mu)
    small = _entropy_by_sum(flat, 35, flat + 20)
    medium = _entropy_by_sum(flat, 250, flat + 10 * jnp.sqrt(flat) + 20)
    large = 0.5 * jnp.log(2 * np.pi * np.e * flat) - 1.0 / (12 * flat)
    result = jnp.where(flat < 10, small, jnp.where(flat < 100, medium, large))
    result = jnp.where(flat == 0, jnp.zeros_like(flat), result)
    return jnp.broadcast_to(result.reshape(mu.shape), shape)
