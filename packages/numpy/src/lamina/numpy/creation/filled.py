"""Arrays filled with one value: ``zeros``, ``ones``, ``empty``, ``full`` and their
``_like`` forms, and :func:`canonical_shape`, the shape argument check the creation
functions share."""

from __future__ import annotations

import operator

import numpy as np
from lamina import lax
from lamina.interpreters import Tracer
from lamina.ir import (
    AbstractRef,
    ShapedArray,
    canonicalize_dim,
    dtypes,
    is_symbolic_dim,
    physical_aval,
)
from lamina.lax import to_dtype, wrap_key_data
from lamina.numpy.base.arguments import aval_of, check_arraylike, from_jax_array, is_arraylike
from lamina.numpy.creation.conversion import asarray, chosen_sharding, place

__all__ = [
    "empty",
    "empty_like",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]


def _shape_error(sizes, fun_name: str, arg_name: str | None) -> TypeError:
    where = f" argument of '{arg_name}' {fun_name}()." if arg_name else "."
    return TypeError(
        "Shapes must be 1D sequences of concrete values of integer type, got "
        f"{tuple(sizes)}{where}\nIf using `jit`, try using `static_argnums` or applying "
        "`jit` to smaller subfunctions."
    )


def canonical_shape(shape, fun_name: str, arg_name: str | None = None) -> tuple[int, ...]:
    """``shape`` (an int, a sequence of ints, or a concrete integer array) as a tuple of
    ints; JAX's TypeError for anything else (floats, None, tracers)."""
    if isinstance(shape, (list, tuple)):
        sizes = tuple(shape)
    elif isinstance(shape, (np.ndarray, np.generic)) or hasattr(shape, "aval"):
        if isinstance(shape, Tracer):
            sizes = (shape,) if shape.ndim == 0 else tuple(shape)
        else:
            sizes = tuple(np.asarray(shape).reshape(-1)) if np.ndim(shape) else (shape,)
    else:
        sizes = (shape,)
    out = []
    if any(is_symbolic_dim(d) for d in sizes):  # shape polymorphism
        return tuple(canonicalize_dim(d) for d in sizes)
    for size in sizes:
        if isinstance(size, (Tracer, float, complex)) or size is None:
            raise _shape_error(sizes, fun_name, arg_name)
        try:
            out.append(operator.index(size))
        except TypeError:
            raise _shape_error(sizes, fun_name, arg_name) from None
    if any(d < 0 for d in out):
        raise TypeError(
            f"broadcast_in_dim shape must have every element be nonnegative, got {tuple(out)}."
        )
    return tuple(out)


def _filled(fun_name, shape, value, dtype, device, out_sharding):
    shape = canonical_shape(shape, fun_name)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, fun_name)
    sharding = chosen_sharding(device, out_sharding, f"jnp.{fun_name}")
    return place(lax.full(shape, value, dtype, sharding=sharding), device)


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of zeros (default dtype: float32, or float64 with x64 on)."""
    return _filled("zeros", shape, 0, dtype, device, out_sharding)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of ones."""
    return _filled("ones", shape, 1, dtype, device, out_sharding)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of ``shape``; XLA arrays are never uninitialized, so it holds zeros."""
    return _filled("empty", shape, 0, dtype, device, out_sharding)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    """An array of ``shape`` filled with ``fill_value`` (a scalar, or an array that
    broadcasts to ``shape``). Without ``dtype``, the fill value's dtype, weak for a
    Python scalar."""
    check_arraylike("full", fill_value)
    shape = canonical_shape(shape, "full")
    if dtype is not None:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "full")
    sharding = chosen_sharding(device, out_sharding, "jnp.full")
    if dtype == dtypes.float0 and np.ndim(fill_value):  # float0 holds no data to broadcast
        fill_value = 0
    if np.ndim(fill_value) == 0:
        out = lax.full(shape, _wrapped_scalar(fill_value, dtype), dtype, sharding=sharding)
        return place(out, device)
    return place(_broadcast_fill(asarray(fill_value, dtype=dtype), shape, sharding), device)


def _wrapped_scalar(value, dtype):
    # NumPy wraps out-of-range Python ints modulo 2**bits when casting; lax.full would
    # raise instead, and JAX's full wraps (jnp.full(2, 300, 'int8') is 44).
    if type(value) is int and dtype is not None and dtypes.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        if info.min <= value <= info.max:
            return value
        return np.asarray(value % (1 << info.bits) if value < 0 else value).astype(dtype)
    if type(value) is int and dtype is None:
        info = np.iinfo(dtypes.default_int_dtype())
        if not info.min <= value <= info.max:
            wrapped = np.asarray(value, np.int64).astype(info.dtype)
            return to_dtype(wrapped, info.dtype, weak_type=True)
    return value


def _broadcast_fill(fill, shape, sharding=None):
    if fill.ndim > len(shape) or any(
        d not in (1, s) for d, s in zip(fill.shape, shape[len(shape) - fill.ndim :], strict=True)
    ):
        raise ValueError(
            f"Incompatible types for broadcasting: input type={fill.aval.str_short()} and "
            f"requested type={fill.aval.update(shape=shape).str_short()}"
        )
    dims = tuple(range(len(shape) - fill.ndim, len(shape)))
    return lax.broadcast_in_dim(fill, shape, dims, out_sharding=sharding)


def _like(fun_name, a, fill_value, dtype, shape, device, out_sharding=None):
    is_ref = type(getattr(a, "aval", None)) is AbstractRef
    if (is_ref or not is_arraylike(a)) and hasattr(a, "shape") and hasattr(a, "dtype"):
        # A ShapeDtypeStruct, eval_shape's output, or a reference: anything with a shape
        # and a dtype (never weakly typed, as in JAX, whatever its weak_type says).
        a = ShapedArray(tuple(a.shape), dtypes.canonicalize_dtype(a.dtype))
        aval = a
    else:
        check_arraylike(fun_name, a)
        aval = aval_of(a)
    if fill_value is not None:
        check_arraylike(fun_name, 0, fill_value)  # reported at position 1, as in JAX
    if dtype is not None:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, fun_name)
    out_shape = tuple(aval.shape) if shape is None else canonical_shape(shape, fun_name)
    if dtype is None and dtypes.issubdtype(aval.dtype, dtypes.prng_key):
        return place(_keys_like(aval.dtype, fill_value, out_shape), device)
    out_dtype = aval.dtype if dtype is None else dtype
    weak = dtype is None and aval.weak_type
    sharding = chosen_sharding(device, out_sharding, fun_name)
    if np.ndim(fill_value) == 0:
        given = None if shape is None else out_shape
        fill = _wrapped_scalar(fill_value, out_dtype)
        out = lax.full_like(a, fill, dtype, given, sharding=sharding)
    else:
        fill = to_dtype(asarray(fill_value), out_dtype, weak)
        out = _broadcast_fill(fill, out_shape, sharding)
    return place(out, device)


def _keys_like(key_dtype, fill_value, shape):
    """PRNG keys of ``shape`` whose key data holds ``fill_value``, as JAX fills them
    (``zeros_like(keys)`` is keys whose data is zeros)."""
    physical = physical_aval(ShapedArray(shape, key_dtype))
    data = lax.full(physical.shape, fill_value, physical.dtype)
    return wrap_key_data(data, impl=key_dtype)


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Zeros with the shape and dtype of ``a`` (weak if ``a`` is), unless given."""
    a = from_jax_array(a)
    return _like("zeros_like", a, 0, dtype, shape, device, out_sharding)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Ones with the shape and dtype of ``a`` (weak if ``a`` is), unless given."""
    a = from_jax_array(a)
    return _like("ones_like", a, 1, dtype, shape, device, out_sharding)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """An array like ``prototype``; it holds zeros. (A refused dtype is reported as
    ``ones_like``'s, as JAX does.)"""
    prototype = from_jax_array(prototype)
    return _like("ones_like", prototype, 0, dtype, shape, device)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """``fill_value`` (a scalar or an array broadcasting to the shape) in an array with
    the shape and dtype of ``a``, unless given."""
    a = from_jax_array(a)
    return _like("full_like", a, fill_value, dtype, shape, device, out_sharding)
