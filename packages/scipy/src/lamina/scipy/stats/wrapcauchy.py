"""The wrapped Cauchy distribution (``jax.scipy.stats.wrapcauchy``)."""

import numpy as np

from lamina import numpy as jnp

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    """Log density at the angle ``x`` in [0, 2 pi]; nan unless 0 < ``c`` < 1."""
    x, c = jnp.promote_args_inexact("wrapcauchy.logpdf", x, c)
    log_probs = jnp.log(1 - c * c) - jnp.log(2 * np.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x))
    inside = jnp.where((x >= 0) & (x <= 2 * np.pi), log_probs, -np.inf)
    return jnp.where((c > 0) & (c < 1), inside, np.nan)


def pdf(x, c):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, c))
