"""``rankdata``: ranks of the elements of an array, ties resolved by ``method``."""

from functools import partial

import numpy as np

from lamina import numpy as jnp
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.scipy.stats.nan_policy import check_nan_policy

_METHODS = ("average", "min", "max", "dense", "ordinal")


def _ranks_1d(a, method):
    """Ranks of the 1-D ``a`` in the default float dtype; all nan if ``a`` holds a nan."""
    out_dtype = dtypes.default_float_dtype()
    size = a.shape[0]
    order = jnp.argsort(a, stable=True)
    ordered = a[order]
    position = jnp.zeros_like(order).at[order].set(jnp.arange(size, dtype=order.dtype))
    if method == "ordinal":
        ranks = (position + 1).astype(out_dtype)
    else:
        starts = jnp.concatenate([jnp.array([True]), ordered[1:] != ordered[:-1]])
        group = jnp.cumsum(starts)[position]  # 1-based index of each element's tie group
        if method == "dense":
            ranks = group.astype(out_dtype)
        else:
            # bounds[g] is where group g + 1 starts: the number of elements in groups <= g.
            bounds = jnp.nonzero(starts, size=size + 1, fill_value=size)[0].astype(out_dtype)
            if method == "max":
                ranks = bounds[group]
            elif method == "min":
                ranks = bounds[group - 1] + 1
            else:
                ranks = 0.5 * (bounds[group] + bounds[group - 1] + 1)
    return jnp.where(jnp.any(jnp.isnan(a)), jnp.full_like(ranks, np.nan), ranks)


@partial(jit, static_argnames=("method", "axis", "nan_policy"))
def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks from 1 of the elements of ``a`` (flattened, or along ``axis``); ties get
    the average, min, max, dense or ordinal rank by ``method``. A slice holding a nan
    ranks as all nan."""
    jnp.check_arraylike("rankdata", a)
    check_nan_policy("rankdata", nan_policy)
    if method not in _METHODS:
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return jnp.apply_along_axis(partial(_ranks_1d, method=method), axis, a)
    return _ranks_1d(jnp.ravel(a), method)
