"""``sem``: the standard error of the mean."""

from functools import partial

from lamina import numpy as jnp
from lamina.interpreters import jit


@partial(jit, static_argnames=("axis", "nan_policy", "keepdims"))
def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """Standard error of the mean of ``a`` along ``axis`` (all of it if None) with
    ``ddof`` degrees of freedom removed; 'omit' leaves nans out."""
    (b,) = jnp.promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        present = jnp.ones(b.shape, bool)
        total = jnp.sum
    elif nan_policy == "omit":
        present = ~jnp.isnan(b)
        total = jnp.nansum
    else:
        raise ValueError(f"{nan_policy} is not supported")
    count = present.sum(axis, keepdims=True)
    mean = total(b, axis, keepdims=True) / count.astype(b.dtype)
    squares = total(jnp.square(jnp.abs(b - mean)), axis, keepdims=keepdims)
    count = count if keepdims else jnp.squeeze(count, axis)
    variance = squares / (count - ddof).astype(b.dtype)
    return jnp.sqrt(variance) / jnp.sqrt(count).astype(b.dtype)
