"""Array plumbing shared by the sorting, set, selection and index-helper modules:
elementwise choice with promotion, positions of true entries padded to a static size,
gathers of rows, weak types kept. Flattening, moving and broadcasting axes, and the
concrete sizes that data-dependent output shapes need, come from
:mod:`lamina.numpy.base`.

Written on lax alone, so that these modules need none of the other lamina.numpy
modules at import time.
"""

from __future__ import annotations

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit
from lamina.ir import dtypes, is_symbolic_dim
from lamina.lax import to_dtype
from lamina.numpy.base.arguments import aval_of, promote_dtypes, to_array
from lamina.numpy.base.shaping import broadcast_arrays, ravel

__all__ = [
    "count_true",
    "default_index_dtype",
    "flat_true_positions",
    "gather_rows",
    "keep_weak_type",
    "scalar_like",
    "where3",
]


def _where(condition, x, y):
    """``x`` where ``condition`` else ``y``, with JAX's promotion and broadcasting."""
    ax, ay = getattr(x, "aval", None), getattr(y, "aval", None)
    same = (
        ax is not None and ay is not None and (ax.dtype, ax.weak_type) == (ay.dtype, ay.weak_type)
    )
    if not same:
        x, y = promote_dtypes(x, y)
    condition = to_array(condition)
    if aval_of(condition).dtype != np.bool_:
        condition = condition != 0
    condition, x, y = broadcast_arrays(condition, x, y)
    return lax.select_n(condition, y, x)


# A jitted program named as JAX's (``jit[name=_where]`` in Jaxprs): one dispatch eagerly.
where3 = jit(_where)


def scalar_like(value, dtype):
    """``value`` as a 0-d array of ``dtype`` (not weakly typed)."""
    return lax.convert_element_type(to_array(value), dtype)


def default_index_dtype(size: int):
    """The dtype JAX gives indices into an axis of ``size``: the default integer,
    unless the axis is too long for int32."""
    if not is_symbolic_dim(size) and size > np.iinfo(np.int32).max:
        return np.dtype(np.int64)
    return dtypes.default_int_dtype()


def count_true(mask, dtype=None):
    """How many entries of the boolean ``mask`` are true (a 0-d integer array)."""
    dtype = dtypes.default_int_dtype() if dtype is None else dtype
    flat = ravel(mask)
    return lax.reduce_sum(lax.convert_element_type(flat, dtype), (0,))


def flat_true_positions(mask, size: int, dtype=None):
    """The positions of the first ``size`` true entries of the 1-d boolean ``mask``,
    in order; positions past the number of true entries hold ``len(mask)``.

    Each true entry's running count says which output slot it fills; counting the
    entries whose running count is at most ``j`` gives the position of the ``j``-th
    true entry, so a scatter-add and a cumulative sum do it in linear time."""
    n = aval_of(mask).shape[0]
    dtype = default_index_dtype(n) if dtype is None else dtype
    if size == 0:
        return lax.full((0,), 0, dtype)
    if n == 0:
        return lax.full((size,), 0, dtype)
    running = lax.cumsum(lax.convert_element_type(mask, dtype), axis=0)
    numbers = lax.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    per_slot = lax.scatter_add(
        lax.full((size,), 0, dtype),
        lax.reshape(running, (n, 1)),
        lax.full((n,), 1, dtype),
        numbers,
        mode="drop",
    )
    return lax.cumsum(per_slot, axis=0)


def gather_rows(x, rows, *, mode="fill", fill_value=None):
    """``x[rows]`` along axis 0 for a 1-d integer ``rows`` (out-of-range rows give
    ``fill_value`` in the default mode)."""
    shape = aval_of(x).shape
    numbers = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape))),
        collapsed_slice_dims=(0,),
        start_index_map=(0,),
    )
    return lax.gather(
        x,
        lax.reshape(rows, (*aval_of(rows).shape, 1)),
        numbers,
        (1, *shape[1:]),
        mode=mode,
        fill_value=fill_value,
    )


def keep_weak_type(result, like):
    """``result`` weakly typed when ``like`` is (as JAX's result would be), for lax
    operations that drop the flag."""
    if not aval_of(like).weak_type or aval_of(result).weak_type:
        return result
    return to_dtype(result, aval_of(result).dtype, weak_type=True)
