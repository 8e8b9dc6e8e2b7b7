"""The geometric distribution (``jax.scipy.stats.geom``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.scipy.special import xlog1py

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    """Log of the probability mass at ``k`` (the trial of the first success)."""
    k, p, loc = jnp.promote_args_inexact("geom.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlog1py(x - 1, -p) + jnp.log(p)
    return jnp.where(x <= 0, -np.inf, log_probs)


def pmf(k, p, loc=0):
    """Probability mass at ``k``."""
    return jnp.exp(logpmf(k, p, loc))
