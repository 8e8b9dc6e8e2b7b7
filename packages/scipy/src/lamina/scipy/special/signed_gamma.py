"""The real gamma function as its sign times ``exp(lgamma)``, for the hypergeometric
functions (nan at the poles x = 0, -1, -2, ... except +-0, whose sign is kept)."""

import numpy as np

from lamina import lax
from lamina import numpy as jnp

__all__ = ["signed_gamma"]


def signed_gamma(x):
    floor = lax.floor(x)
    negative = x < 0
    nan = (negative & (x == floor)) | lax.ne(x, x)
    minus = (negative & (lax.rem(floor, lax.full_like(x, 2.0)) != 0)) | ((x == 0) & jnp.signbit(x))
    sign = lax.select(
        nan,
        lax.full_like(x, np.nan),
        lax.select(minus, lax.full_like(x, -1.0), lax.full_like(x, 1.0)),
    )
    return sign * lax.exp(lax.lgamma(x))
