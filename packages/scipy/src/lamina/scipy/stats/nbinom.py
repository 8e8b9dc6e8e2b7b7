"""The negative binomial distribution (``jax.scipy.stats.nbinom``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.scipy.special import gammaln, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """Log of the probability of ``k`` failures before the ``n``-th success."""
    k, n, p, loc = jnp.promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    log_choose = gammaln(y + n) - gammaln(n) - gammaln(y + 1)
    log_probs = log_choose + (xlogy(n, p) + xlogy(y, 1 - p))
    return jnp.where(k < loc, -np.inf, log_probs)


def pmf(k, n, p, loc=0):
    """Probability mass at ``k``."""
    return jnp.exp(logpmf(k, n, p, loc))
