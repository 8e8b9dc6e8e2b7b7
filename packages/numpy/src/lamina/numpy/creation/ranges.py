"""Evenly spaced values: ``arange``, ``linspace``, ``logspace`` and ``geomspace``.

``arange`` needs concrete bounds (its length depends on them); the other three take
traced ``start``/``stop`` and are differentiable in them, with static ``num``.
"""

from __future__ import annotations

import math

import numpy as np
from lamina import lax
from lamina.interpreters import jit
from lamina.ir import dtypes, is_symbolic_dim
from lamina.lax import to_dtype
from lamina.numpy.base.arguments import aval_of, check_arraylike, is_arraylike, to_array
from lamina.numpy.base.static_values import concrete, concrete_index
from lamina.numpy.creation.conversion import asarray, chosen_sharding

__all__ = ["arange", "geomspace", "linspace", "logspace"]


def _python_number(x):
    """A concrete scalar bound as a Python number, for computing the length."""
    if type(x) in (bool, int, float, complex):
        return x
    return np.asarray(x).item()


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Values from ``start`` (default 0) up to, not including, ``stop`` by ``step``
    (default 1). The bounds must be concrete scalars; the dtype is their promoted dtype
    unless given, and never weak."""
    if dtype is not None:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "arange")
    if start is None:
        raise TypeError(
            "jnp.arange: start (or the single argument stop) must be a number, not None"
        )
    for position, x in enumerate((start, stop, step)):
        if x is not None and not is_arraylike(x):
            raise TypeError(
                f"arange requires ndarray, scalar, or None arguments, got {type(x)} at "
                f"position {position}."
            )
    if is_symbolic_dim(start) and stop is None and step is None:  # shape polymorphism
        dt = dtypes.result_type(start) if dtype is None else dtypes.canonicalize_dtype(dtype)
        positions = lax.mul(to_dtype(1, dt), lax.iota(dt, start))
        return _placed(lax.add(to_dtype(0, dt), positions), device)
    start_name = "stop" if stop is None and step is None else "start"
    named = [(start_name, start), ("stop", stop), ("step", step)]
    values = [concrete(v, f"It arose in the jnp.arange argument '{n}'") for n, v in named]
    for name, value in zip(("start", "stop", "step"), values, strict=True):
        if value is not None and np.ndim(value) != 0:
            shown = np.asarray(value) if hasattr(value, "aval") else value
            label = start_name if name == "start" else name
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {label}={shown}")
    start, stop, step = values
    if dtype is None:
        dtype = dtypes.result_type(*(v for v in values if v is not None))
    if any(
        v is not None and dtypes.issubdtype(aval_of(v).dtype, np.complexfloating) for v in values
    ):
        raise ValueError(
            "Passing complex start/stop/step to jnp.arange is no longer supported starting "
            "in JAX v0.10.0."
        )
    if stop is None:
        start, stop = 0, start
    sharding = chosen_sharding(device, out_sharding, "jnp.arange")
    first, last = _python_number(start), _python_number(stop)
    if step is not None:
        size = max(0, math.ceil((last - first) / _python_number(step)))
        # Narrow floats would lose the positions; count in float32 and round at the end.
        narrow = dtypes.issubdtype(dtype, np.floating) and dtypes.finfo(dtype).bits < 32
        working = np.dtype(np.float32) if narrow else dtype
        positions = lax.mul(to_dtype(step, working), _iota(working, size, sharding))
        out = to_dtype(lax.add(to_dtype(start, working), positions), dtype)
    elif first == 0:
        out = _iota(dtype, max(0, math.ceil(last)), sharding)
    else:
        size = max(0, math.ceil(last - first))
        out = lax.add(to_dtype(start, dtype), _iota(dtype, size, sharding))
    return _placed(out, device)


def _iota(dtype, size, sharding):
    """``0, 1, ..., size - 1``, typed by ``sharding`` (an ``out_sharding=``) if given."""
    return lax.broadcasted_iota(dtype, (size,), 0, out_sharding=sharding)


def _placed(out, device):
    if device is None:
        return out
    return asarray(out, device=device)


def _broadcast_to(x, shape):
    return lax.broadcast_in_dim(x, tuple(shape), tuple(range(len(shape) - x.ndim, len(shape))))


def _output_dtype(fun_name, start, stop, dtype):
    if dtype is None:
        return dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    return dtypes.check_and_canonicalize_user_dtype(dtype, fun_name)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless
    ``endpoint=False``) along a new axis ``axis``; with ``retstep``, also the spacing.
    Integer dtypes get the floor of the float values."""
    num = concrete_index(num, "'num' argument of jnp.linspace")
    axis = concrete_index(axis, "'axis' argument of jnp.linspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike("linspace", start, stop)
    dtype = _output_dtype("linspace", start, stop, dtype)
    out, delta = _linspace(to_array(start), to_array(stop), num, bool(endpoint), dtype, axis)
    out = _placed(out, device)
    return (out, delta) if retstep else out


@jit(static_argnames=("num", "endpoint", "dtype", "axis"))
def _linspace(start, stop, num, endpoint, dtype, axis):
    computation = dtypes.to_inexact_dtype(dtype)
    start = to_dtype(start, computation)
    stop = to_dtype(stop, computation)
    bounds_shape = list(lax.broadcast_shapes(start.shape, stop.shape))
    start, stop = _broadcast_to(start, bounds_shape), _broadcast_to(stop, bounds_shape)
    axis = len(bounds_shape) + axis + 1 if axis < 0 else axis
    if not 0 <= axis <= len(bounds_shape):
        raise ValueError(
            f"axis {axis} is out of bounds for array of dimension {len(bounds_shape) + 1}"
        )
    with_axis = [*bounds_shape[:axis], 1, *bounds_shape[axis:]]
    intervals = num - 1 if endpoint else num
    nan = lax.full((), np.nan, computation)
    if num > 1:
        delta = (stop - start) / lax.full((), intervals, computation)
        real = dtypes.finfo(computation).dtype
        fractions = lax.iota(real, intervals) / lax.full((), intervals, real)
        iota_shape = [1] * len(with_axis)
        iota_shape[axis] = intervals
        fractions = to_dtype(lax.reshape(fractions, iota_shape), computation)
        start_b, stop_b = lax.reshape(start, with_axis), lax.reshape(stop, with_axis)
        out = start_b * (1 - fractions) + stop_b * fractions
        if endpoint:
            out = lax.concatenate([out, stop_b], axis)
    elif num == 1:
        delta = nan if endpoint else stop - start
        out = lax.reshape(start, with_axis)
    else:
        delta = nan
        with_axis[axis] = 0
        out = lax.full(with_axis, 0, computation)
    if dtypes.issubdtype(dtype, np.integer) and not dtypes.issubdtype(out.dtype, np.integer):
        out = lax.floor(out)
    return to_dtype(out, dtype), delta


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``."""
    num = concrete_index(num, "'num' argument of jnp.logspace")
    axis = concrete_index(axis, "'axis' argument of jnp.logspace")
    check_arraylike("logspace", start, stop, base)
    dtype = _output_dtype("logspace", start, stop, dtype)
    return _logspace(
        to_array(start), to_array(stop), num, bool(endpoint), to_array(base), dtype, axis
    )


@jit(static_argnames=("num", "endpoint", "dtype", "axis"))
def _logspace(start, stop, num, endpoint, base, dtype, axis):
    computation = dtypes.to_inexact_dtype(dtype)
    start = to_dtype(start, computation)
    stop = to_dtype(stop, computation)
    exponents = _linspace(start, stop, num, endpoint, computation, axis)[0]
    return to_dtype(base**exponents, dtype)


def _log10(x):
    return lax.log(x) * lax.full((), 1 / np.log(10), x.dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` values from ``start`` to ``stop`` in geometric progression (NaN when the
    two have different signs or one is zero)."""
    num = concrete_index(num, "'num' argument of jnp.geomspace")
    axis = concrete_index(axis, "'axis' argument of jnp.geomspace")
    check_arraylike("geomspace", start, stop)
    dtype = _output_dtype("geomspace", start, stop, dtype)
    return _geomspace(to_array(start), to_array(stop), num, bool(endpoint), dtype, axis)


@jit(static_argnames=("num", "endpoint", "dtype", "axis"))
def _geomspace(start, stop, num, endpoint, dtype, axis):
    computation = dtypes.to_inexact_dtype(dtype)
    start = to_dtype(start, computation)
    stop = to_dtype(stop, computation)
    sign = lax.sign(start)
    exponents = _linspace(_log10(start / sign), _log10(stop / sign), num, endpoint, computation, 0)
    out = sign * to_dtype(10.0 ** exponents[0], computation)
    if out.ndim > 1 and axis % out.ndim != 0:
        axis = axis % out.ndim
        out = lax.transpose(out, (*range(1, axis + 1), 0, *range(axis + 1, out.ndim)))
    return to_dtype(out, dtype)
