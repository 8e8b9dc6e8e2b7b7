"""The binomial distribution (``jax.scipy.stats.binom``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.scipy.special import gammaln, xlog1py, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """Log of the probability mass at ``k`` of Binomial(``n``, ``p``) shifted by ``loc``."""
    k, n, p, loc = jnp.promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    log_choose = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
    log_powers = xlogy(y, p) + xlog1py(n - y, -p)
    log_probs = jnp.where(((y == 0) & (n == 0)) | (log_powers == 0), 0.0, log_choose + log_powers)
    return jnp.where((k >= loc) & (k < loc + n + 1), log_probs, -np.inf)


def pmf(k, n, p, loc=0):
    """Probability mass at ``k``."""
    return jnp.exp(logpmf(k, n, p, loc))
