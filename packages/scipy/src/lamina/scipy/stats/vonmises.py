"""The von Mises distribution (``jax.scipy.stats.vonmises``)."""

import numpy as np

from lamina import lax
from lamina import numpy as jnp

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    """Log density at the angle ``x`` with concentration ``kappa``; nan where
    ``kappa <= 0``."""
    x, kappa = jnp.promote_args_inexact("vonmises.logpdf", x, kappa)
    # log I0(kappa) = log i0e(kappa) + kappa, folded into the cosine term.
    log_probs = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return jnp.where(kappa > 0, log_probs, np.nan)


def pdf(x, kappa):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, kappa))
