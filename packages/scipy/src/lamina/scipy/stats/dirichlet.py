"""The Dirichlet distribution (``jax.scipy.stats.dirichlet``)."""

import numpy as np

from lamina import numpy as jnp
from lamina.scipy.special import gammaln, xlogy

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha):
    """Log density at the simplex points ``x`` (leading axis: the ``K`` components, or
    ``K - 1`` of them with the last implied) of Dirichlet(``alpha``)."""
    jnp.check_arraylike("dirichlet.logpdf", x, alpha)
    x, alpha = jnp.promote_dtypes_inexact(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` "
            f"or one entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}"
        )
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1 - x.sum(0, keepdims=True)], axis=0)
    log_norm = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    alpha = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    log_probs = jnp.sum(xlogy(alpha - 1, x), axis=0) - log_norm
    on_simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)
    return jnp.where(on_simplex, log_probs, -np.inf)


def pdf(x, alpha):
    """Density at ``x``."""
    return jnp.exp(logpdf(x, alpha))
