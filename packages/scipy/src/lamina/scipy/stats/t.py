"""Student's t distribution (``jax.scipy.stats.t``)."""

import numpy as np

from lamina import lax
from lamina import numpy as jnp

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    """Log density at ``x`` with ``df`` degrees of freedom."""
    x, df, loc, scale = jnp.promote_args_inexact("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half_df = df / 2
    half_df_plus_half = half_df + 0.5
    log_norm = (
        lax.lgamma(half_df)
        + jnp.log(scale * scale * np.pi * df) / 2
        - lax.lgamma(half_df_plus_half)
    )
    return -(log_norm + half_df_plus_half * jnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, df, loc, scale))
