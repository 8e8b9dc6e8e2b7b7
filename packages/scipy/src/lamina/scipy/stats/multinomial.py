"""The multinomial distribution (``jax.scipy.stats.multinomial``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.scipy.special import gammaln, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    """Log of the probability of the integer counts ``x`` (last axis: the categories)
    in ``n`` trials with category probabilities ``p``."""
    (p,) = jnp.promote_args_inexact("multinomial.logpmf", p)
    jnp.check_arraylike("multinomial.logpmf", x, n)
    x, n = jnp.asarray(x), jnp.asarray(n)
    if not (jnp.issubdtype(x.dtype, np.integer) and jnp.issubdtype(n.dtype, np.integer)):
        dtype = jnp.result_type(x, n)
        raise ValueError(f"x and n must be of integer type; got x.dtype={dtype}, n.dtype={dtype}")
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    log_probs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return jnp.where(jnp.sum(x) == n, log_probs, -np.inf)


def pmf(x, n, p):
    """Probability of the counts ``x``."""
    return jnp.exp(logpmf(x, n, p))
