"""Array plumbing shared by the sorting, set, selection and index-helper modules:
flattening, moving and broadcasting axes, elementwise choice with promotion, positions
of true entries padded to a static size, and turning traced values into the concrete
sizes that data-dependent output shapes need.

Written on lax alone, so that these modules need none of the other lamina.numpy
modules at import time.
"""

from __future__ import annotations

import math
import operator

import lamina.lax as lax
import numpy as np
from lamina.interpreters import ConcretizationTypeError, Tracer, jit
from lamina.ir import dtypes
from lamina.lax import to_dtype
from lamina.numpy.base.arguments import aval_of, canonicalize_axis, promote_dtypes, to_array

__all__ = [
    "broadcast_arrays",
    "broadcast_to",
    "concrete_int",
    "concrete_value",
    "count_true",
    "default_index_dtype",
    "flat_true_positions",
    "gather_rows",
    "keep_weak_type",
    "moveaxis",
    "ravel",
    "scalar_like",
    "static_int",
    "where3",
]


def ravel(x):
    x = to_array(x)
    shape = aval_of(x).shape
    return x if len(shape) == 1 else lax.reshape(x, (math.prod(shape),))


def moveaxis(x, source: int, destination: int):
    ndim = len(aval_of(x).shape)
    source, destination = canonicalize_axis(source, ndim), canonicalize_axis(destination, ndim)
    if source == destination:
        return x
    order = [d for d in range(ndim) if d != source]
    order.insert(destination, source)
    return lax.transpose(x, tuple(order))


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` by NumPy's rules (ValueError when it can't be)."""
    x = to_array(x)
    shape = tuple(int(d) for d in shape)
    old = aval_of(x).shape
    if old == shape:
        return x
    lead = len(shape) - len(old)
    if lead < 0 or any(o not in (1, n) for o, n in zip(old, shape[lead:], strict=True)):
        raise ValueError(f"Incompatible shapes for broadcasting: {old} and requested shape {shape}")
    kept = [i for i, (o, n) in enumerate(zip(old, shape[lead:], strict=True)) if o == n]
    squeezed = lax.reshape(x, tuple(old[i] for i in kept)) if len(kept) != len(old) else x
    return lax.broadcast_in_dim(squeezed, shape, tuple(lead + i for i in kept))


def broadcast_arrays(*xs):
    xs = [to_array(x) for x in xs]
    shapes = {aval_of(x).shape for x in xs}
    if len(shapes) == 1:  # the common case: nothing to broadcast
        return xs
    shape = lax.broadcast_shapes(*shapes)
    return [broadcast_to(x, shape) for x in xs]


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
    if size > np.iinfo(np.int32).max:
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


def concrete_value(x, context: str):
    """The value of ``x`` as a NumPy array; a ConcretizationTypeError carrying
    ``context`` when ``x`` is only known abstractly (inside jit, say)."""
    if isinstance(x, Tracer):
        return np.asarray(x._concrete(ConcretizationTypeError(x, context)))
    return np.asarray(x)


def concrete_int(x, context: str) -> int:
    return int(concrete_value(x, context))


def static_int(value, what: str) -> int:
    """A Python int for a static argument such as ``size`` (the error for traced ones
    says the argument must be static)."""
    if isinstance(value, Tracer):
        return operator.index(
            value._concrete(ConcretizationTypeError(value, f"The {what} must be static."))
        )
    return operator.index(value)


def keep_weak_type(result, like):
    """``result`` weakly typed when ``like`` is (as JAX's result would be), for lax
    operations that drop the flag."""
    if not aval_of(like).weak_type or aval_of(result).weak_type:
        return result
    return to_dtype(result, aval_of(result).dtype, weak_type=True)
