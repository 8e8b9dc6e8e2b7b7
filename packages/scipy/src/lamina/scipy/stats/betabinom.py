"""The beta-binomial distribution (``jax.scipy.stats.betabinom``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.scipy.special import betaln

__all__ = ["logpmf", "pmf"]


@jit
def logpmf(k, n, a, b, loc=0):
    """Log of the probability mass at ``k`` (floored) of BetaBinom(``n``, ``a``, ``b``)."""
    k, n, a, b, loc = jnp.promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = jnp.floor(k) - loc
    log_choose = -(jnp.log1p(n) + betaln(n - y + 1, y + 1))
    log_probs = log_choose + betaln(y + a, n - y + b) - betaln(a, b)
    log_probs = jnp.where((y == 0) & (n == 0), 0.0, log_probs)
    outside = (y < -loc) | (y > n) | (y + a <= 0)
    log_probs = jnp.where(outside, -np.inf, log_probs)
    return jnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, log_probs)


def pmf(k, n, a, b, loc=0):
    """Probability mass at ``k``."""
    return jnp.exp(logpmf(k, n, a, b, loc))
