"""The generalized normal distribution (``jax.scipy.stats.gennorm``)."""

from lamina import lax
from lamina import numpy as jnp

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, beta):
    """Log density at ``x`` with shape ``beta``."""
    x, beta = jnp.promote_args_inexact("gennorm.logpdf", x, beta)
    return jnp.log(0.5 * beta) - lax.lgamma(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """Cumulative distribution at ``x``."""
    x, beta = jnp.promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + jnp.sign(x) * lax.igamma(1 / beta, jnp.abs(x) ** beta))
