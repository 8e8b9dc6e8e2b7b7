"""``mode``: the most common value along an axis, with its count."""

import math
from functools import partial
from typing import NamedTuple

import numpy as np

from lamina import numpy as jnp
from lamina.interpreters import jit, vmap
from lamina.ir import dtypes
from lamina.scipy.stats.nan_policy import check_nan_policy


class ModeResult(NamedTuple):
    mode: object
    count: object


def _mode_1d(x):
    """The smallest most common value of the 1-D ``x`` and how often it occurs."""
    if x.size == 0:
        float_dtype = dtypes.default_float_dtype()
        return jnp.array(np.nan, float_dtype), jnp.array(0, float_dtype)
    values, counts = jnp.unique(x, return_counts=True, size=x.size)
    return values[jnp.argmax(counts)], counts.max()


@partial(jit, static_argnames=("axis", "nan_policy", "keepdims"))
def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value of ``a`` along ``axis`` (all of it if None), the smallest
    on ties, and its count, as a ``ModeResult``."""
    jnp.check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    check_nan_policy("mode", nan_policy)
    if axis is not None:
        axis = jnp.canonicalize_axes(axis, x.ndim)[0]
    if axis is None:
        out_shape = (1,) * x.ndim if keepdims else ()
        x, axis = x.ravel(), 0
    else:
        kept = [(1 if i == axis else s) for i, s in enumerate(x.shape)]
        out_shape = tuple(kept) if keepdims else tuple(kept[:axis] + kept[axis + 1 :])
    x = jnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    values, counts = vmap(_mode_1d, in_axes=1)(x)
    return ModeResult(values.reshape(out_shape), counts.reshape(out_shape))
