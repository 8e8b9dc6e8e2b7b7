"""Helpers shared by the reduction, statistics, histogram and signal modules: argument
checks (``out``, ``where``, ``axis``, user dtypes), the dtype rules of reductions
(integer promotion, float16 upcasting, init values) and small array utilities written
on lax (``promoting_select``, slicing, ...) that these modules use without
depending on other lamina.numpy modules (shape plumbing and static values come from
:mod:`lamina.numpy.base`)."""

from __future__ import annotations

import operator

import numpy as np
from lamina import lax
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.lax import to_dtype
from lamina.numpy.base.arguments import aval_of, canonicalize_axis, to_array
from lamina.numpy.base.shaping import broadcast_to
from lamina.numpy.base.static_values import as_array, concrete


def check_out(fun_name: str, out) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{fun_name} is not supported.")


def check_where(fun_name: str, where):
    """``where`` as a boolean array, or None; JAX refuses masks of other dtypes."""
    if where is None:
        return None
    where = as_array(fun_name, where)
    if where.dtype != np.bool_:
        raise ValueError(
            f"jnp.{fun_name}: where must be None or a boolean array; got where.dtype="
            f"dtype('{where.dtype}')."
        )
    return where


def static_axis(axis, fun_name: str):
    """``axis`` (None, an int or a sequence of ints) as None, an int or a tuple of ints;
    it must be known while tracing."""
    axis = concrete(axis, f"The axis argument to jnp.{fun_name} must be known statically.")
    if axis is None:
        return None
    try:
        return operator.index(axis)
    except TypeError:
        return tuple(operator.index(concrete(a, "axis")) for a in axis)


def reduction_axes(axis, ndim: int) -> tuple[int, ...]:
    """Non-negative axes named by ``axis`` (None: all), in the order given."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list, np.ndarray)) else (axis,)
    out = tuple(canonicalize_axis(a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return out


def user_dtype(dtype, fun_name: str):
    return None if dtype is None else dtypes.check_and_canonicalize_user_dtype(dtype, fun_name)


def upcast_f16(dtype) -> np.dtype:
    """Half-precision floats accumulate in float32, as JAX's reductions do."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype in (np.float16, dtypes.bfloat16) else dtype


def promote_integer_dtype(dtype) -> np.dtype:
    """bool and integers narrower than the default integer widen to it (unsigned ones to
    the default unsigned integer), the dtype rule of ``sum``/``prod``."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return dtypes.default_int_dtype()
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        wide = dtypes.default_uint_dtype()
    elif dtypes.issubdtype(dtype, np.integer):
        wide = dtypes.default_int_dtype()
    else:
        return dtype
    return wide if dtype.itemsize < np.dtype(wide).itemsize else dtype


def init_value(dtype, value) -> np.ndarray:
    """``value`` (0, 1, +-inf, True...) as a scalar of ``dtype``: infinities become the
    dtype's extreme values where it has no infinity (integers, some float8s)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.array(value > 0, dtype)
    if np.isinf(value):
        if dtypes.issubdtype(dtype, np.integer):
            info = dtypes.iinfo(dtype)
            return np.array(info.min if value < 0 else info.max, dtype)
        if not dtypes.supports_inf(dtype) and not dtypes.issubdtype(dtype, np.complexfloating):
            info = dtypes.finfo(dtype)
            return np.array(info.min if value < 0 else info.max, dtype)
    return np.array(value, dtype)


def convert(x, dtype):
    """``x`` as a (strongly typed) array of ``dtype``."""
    dtype = np.dtype(dtype)
    aval = aval_of(x)
    if aval.dtype == dtype and not aval.weak_type and not isinstance(x, (np.ndarray, np.generic)):
        return to_array(x)
    return lax.convert_element_type(x, dtype)


def isnan(x):
    return lax.ne(x, x)


def broadcast_shapes(*shapes):
    return lax.broadcast_shapes(*shapes)


def promoting_select(pred, on_true, on_false):
    """Elementwise ``on_true if pred else on_false`` with NumPy broadcasting; the values
    take their common dtype with JAX's promotion (weak scalars included)."""
    on_true, on_false = to_array(on_true), to_array(on_false)
    dtype, weak = dtypes.result_type(
        aval_of(on_true), aval_of(on_false), return_weak_type_flag=True
    )
    pred = to_array(pred)
    shape = broadcast_shapes(pred.shape, on_true.shape, on_false.shape)
    values = []
    for value in (on_false, on_true):
        if value.dtype != dtype or value.weak_type != weak:
            value = to_dtype(value, dtype, weak_type=weak)
        values.append(broadcast_to(value, shape))
    return lax.select_n(broadcast_to(pred, shape), *values)


def full(shape, value, dtype):
    return lax.full(tuple(shape), value, np.dtype(dtype))


def slice_axis(x, start, stop, axis: int):
    """``x[..., start:stop, ...]`` along ``axis`` (Python slice bounds, negatives too)."""
    start, stop, _ = slice(start, stop).indices(x.shape[axis])
    return lax.slice_in_dim(x, start, max(start, stop), axis=axis)


def take_index(x, index: int, axis: int = 0):
    """``x[..., index, ...]`` (static ``index``) with ``axis`` dropped."""
    index = index % x.shape[axis]
    return lax.squeeze(lax.slice_in_dim(x, index, index + 1, axis=axis), (axis,))


def expand_axes(x, axes):
    return lax.expand_dims(x, tuple(sorted(axes))) if axes else x


def staged(*static_argnums: int):
    """Decorator: the function runs under ``jit`` (arguments at ``static_argnums``
    static, so hashable), compiling one XLA program per signature rather than one per
    primitive, as JAX's own jnp functions do; inlined when traced, so Jaxprs show the
    reduction itself, as JAX's do. Checks that need concrete values belong before the
    call."""

    def wrap(fun):
        return jit(fun, static_argnums=static_argnums, inline=True)

    return wrap
