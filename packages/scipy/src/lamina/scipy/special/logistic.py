"""The logistic sigmoid ``expit`` and its inverse ``logit``."""

from __future__ import annotations

import lamina.lax as lax
from lamina.interpreters import custom_jvp
from lamina.numpy import promote_args_inexact

__all__ = ["expit", "logit"]


@custom_jvp
def logit(x):
    """``log(x / (1 - x))``; its derivative is ``1 / (x (1 - x))``."""
    (x,) = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(lax.full_like(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(lax.full_like(x, 1), x))))


def expit(x):
    """``1 / (1 + exp(-x))`` (lax's ``logistic``)."""
    (x,) = promote_args_inexact("expit", x)
    return lax.logistic(x)
