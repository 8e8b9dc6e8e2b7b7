"""The Box-Cox power transforms ``boxcox(x, lmbda) = (x**lmbda - 1) / lmbda`` (``log x``
at ``lmbda == 0``) and ``boxcox1p``, the same of ``1 + x``."""

from __future__ import annotations

import lamina.numpy as jnp
from lamina.numpy import promote_args_inexact

__all__ = ["boxcox", "boxcox1p"]


def _transform(log_x, lmbda):
    """``expm1(lmbda log_x) / lmbda``, or ``log_x`` where ``lmbda`` is 0 (the division
    then sees 1, so neither value nor derivative picks up a nan)."""
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox(x, lmbda):
    """The Box-Cox transform of ``x`` (nan for negative ``x``)."""
    x, lmbda = promote_args_inexact("boxcox", x, lmbda)
    return _transform(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of ``1 + x``, accurate for small ``x``."""
    x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
    return _transform(jnp.log1p(x), lmbda)
