"""Rearranging the elements of an array (``jax.numpy``): ``flip``, ``fliplr``,
``flipud``, ``rot90``, ``roll`` (static or traced shifts), ``resize`` and
``trim_zeros``."""

from __future__ import annotations

import operator
from functools import partial

import numpy as np
from lamina import lax
from lamina.interpreters import jit
from lamina.numpy.base.arguments import canonicalize_axis, from_jax_array
from lamina.numpy.base.static_values import as_array, concrete_value, is_unknown
from lamina.numpy.manipulation.static import (
    axis_tuple,
    shape_of,
    size_of,
    slice_along,
    static_shape,
)

__all__ = ["flip", "fliplr", "flipud", "resize", "roll", "rot90", "trim_zeros"]


def flip(m, axis=None):
    """``m`` with the order of its elements reversed along ``axis`` (every axis when
    None)."""
    m = from_jax_array(m)
    x = as_array("flip", m)
    ndim = len(shape_of(x))
    if axis is None:
        dims = tuple(range(ndim))
    else:
        dims = tuple(canonicalize_axis(a, ndim) for a in axis_tuple(axis))
        if len(set(dims)) != len(dims):
            raise TypeError(f"rev dimensions must be unique, got {dims}.")
    return lax.rev(x, dims) if dims else x


def fliplr(m):
    """``m`` reversed along axis 1 (left to right)."""
    m = from_jax_array(m)
    return flip(as_array("fliplr", m), 1)


def flipud(m):
    """``m`` reversed along axis 0 (up to down)."""
    m = from_jax_array(m)
    return flip(as_array("flipud", m), 0)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by ``k`` quarter turns in the plane of ``axes``, from the first
    axis towards the second."""
    x = as_array("rot90", m)
    shape = shape_of(x)
    if len(shape) < 2:
        raise ValueError(
            "rot90 requires its first argument to have ndim at least two, but got first "
            f"argument of shape {shape}, which has ndim {len(shape)}"
        )
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90 needs exactly two axes, got axes={axes}")
    first, second = (canonicalize_axis(a, len(shape)) for a in axes)
    if first == second:
        raise ValueError("Axes must be different")
    return _rot90_compiled(x, operator.index(k) % 4, first, second)


@partial(jit, static_argnums=(1, 2, 3))
def _rot90_compiled(x, turns: int, first: int, second: int):
    if turns == 0:
        return x
    if turns == 2:
        return lax.rev(x, (first, second))
    perm = list(range(len(shape_of(x))))
    perm[first], perm[second] = second, first
    if turns == 1:
        return lax.transpose(lax.rev(x, (second,)), tuple(perm))
    return lax.rev(lax.transpose(x, tuple(perm)), (second,))


def _roll_static(x, shift: int, axis: int):
    size = shape_of(x)[axis]
    if size == 0 or shift % size == 0:
        return x
    shift %= size
    tail = slice_along(x, size - shift, size, axis)
    return lax.concatenate([tail, slice_along(x, 0, size - shift, axis)], axis)


def _roll_traced(x, shift, axis: int):
    size = shape_of(x)[axis]
    if size == 0:
        return x
    dtype = lax.dtype(shift)
    if not np.issubdtype(dtype, np.integer):
        shift = lax.convert_element_type(shift, np.int32)
        dtype = np.dtype(np.int32)
    # lax.rem keeps the dividend's sign: bring negative shifts into [0, size).
    size_value = lax.convert_element_type(size, dtype)
    offset = lax.rem(lax.add(lax.rem(shift, size_value), size_value), size_value)
    doubled = lax.concatenate([x, x], axis)
    return lax.dynamic_slice_in_dim(doubled, lax.sub(size_value, offset), size, axis=axis)


def roll(a, shift, axis=None):
    """``a`` with its elements shifted by ``shift`` along ``axis`` (the flattened array
    when None); elements shifted off one end come back at the other. ``shift`` may be
    traced."""
    x = as_array("roll", a)
    flatten = axis is None
    ndim = 1 if flatten else len(shape_of(x))
    axes = (0,) if flatten else tuple(canonicalize_axis(d, ndim) for d in axis_tuple(axis))
    if is_unknown(shift):
        return _roll_traced_compiled(x, shift, _traced_steps(shift, axes), flatten)
    shifts = concrete_value(shift, "shift argument of jnp.roll").reshape(-1).tolist()
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    elif len(shifts) != len(axes):
        raise _shift_count_error(len(shifts), len(axes))
    steps = tuple((int(s), d) for s, d in zip(shifts, axes, strict=True))
    return _roll_static_compiled(x, steps, flatten)


def _shift_count_error(count: int, axes: int) -> ValueError:
    return ValueError(
        f"shape mismatch: roll got {count} shifts for {axes} axes; give one shift per "
        "axis, or one shift for all of them."
    )


def _flattened(fun):
    """``fun(x, steps)`` applied to ``x`` itself, or to its flattened form and reshaped
    back."""

    def apply(x, steps, flatten):
        if not flatten:
            return fun(x, steps)
        return lax.reshape(fun(lax.reshape(x, (size_of(x),)), steps), shape_of(x))

    return apply


@partial(jit, static_argnums=(1, 2))
@_flattened
def _roll_static_compiled(x, steps):
    """Rolls by known shifts (one compiled computation, as in JAX)."""
    for shift, axis in steps:
        x = _roll_static(x, shift, axis)
    return x


def _traced_steps(shift, axes) -> tuple[tuple[int, int], ...]:
    """``(index into the shifts, axis)`` pairs for a traced scalar or 1-D shift."""
    shift_shape = shape_of(shift)
    if len(shift_shape) > 1:
        raise ValueError(f"roll shift must be a scalar or 1-D, got shape {shift_shape}")
    count = shift_shape[0] if shift_shape else 1
    if count not in (1, len(axes)) and len(axes) != 1:
        raise _shift_count_error(count, len(axes))
    return tuple((i % count, axes[i % len(axes)]) for i in range(max(count, len(axes))))


@partial(jit, static_argnums=(2, 3))
def _roll_traced_compiled(x, shift, steps, flatten):
    def roll_all(x, steps):
        flat = lax.reshape(shift, (size_of(shift),))
        for index, axis in steps:
            amount = lax.reshape(lax.slice(flat, (index,), (index + 1,)), ())
            x = _roll_traced(x, amount, axis)
        return x

    return _flattened(roll_all)(x, steps, flatten)


def resize(a, new_shape):
    """An array of ``new_shape`` filled with the elements of ``a`` in order, repeated
    as often as needed (zeros when ``a`` is empty)."""
    x = as_array("resize", a)
    new_shape = static_shape(new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    total = int(np.prod(new_shape, dtype=np.int64))
    flat = lax.reshape(x, (size_of(x),))
    size = size_of(x)
    if size == 0:
        zero = lax.convert_element_type(0, lax.dtype(x))
        return lax.broadcast_in_dim(zero, new_shape, ())
    copies = -(-total // size)
    if copies > 1:
        flat = lax.reshape(lax.broadcast_in_dim(flat, (copies, size), (1,)), (copies * size,))
    return lax.reshape(slice_along(flat, 0, total, 0), new_shape)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``'f'`` in ``trim``) and trailing (``'b'``) zeros,
    along ``axis`` (every axis when None: the bounding box of the non-zeros). The
    result's shape depends on the values, so ``filt`` cannot be traced."""
    filt = from_jax_array(filt)
    x = as_array("trim_zeros", filt)
    if is_unknown(x):
        concrete_value(x, "Error arose in the `filt` argument of trim_zeros()")
    shape = shape_of(x)
    if not shape:
        return x
    axes = range(len(shape)) if axis is None else axis_tuple(axis)
    axes = sorted({canonicalize_axis(d, len(shape)) for d in axes})
    nonzero = lax.ne(x, lax.convert_element_type(0, lax.dtype(x)))
    trim = trim.lower()
    for ax in axes:
        others = tuple(d for d in range(len(shape)) if d != ax)
        present = np.asarray(lax.reduce_or(nonzero, others) if others else nonzero)
        hits = np.flatnonzero(present)
        start = int(hits[0]) if "f" in trim and len(hits) else 0
        stop = int(hits[-1]) + 1 if "b" in trim and len(hits) else shape[ax]
        if not len(hits) and ("f" in trim or "b" in trim):
            start = stop = 0
        x = slice_along(x, start, stop, ax)
        nonzero = slice_along(nonzero, start, stop, ax)
    return x
