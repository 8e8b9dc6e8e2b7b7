"""Functions that make or widen arrays from the core shape primitives: ``full``,
``full_like``, ``broadcast``, ``broadcast_to_rank``, ``broadcast_like``,
``broadcast_shapes`` and ``collapse``."""

from __future__ import annotations

import math
import operator

import numpy as np

from lamina.interpreters import Sharding, Tracer, device_put, device_put_value
from lamina.ir import ShapedArray, canonicalize_dim, dtypes, is_symbolic_dim, typed_value_aval
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import broadcast_in_dim, reshape, to_dtype

__all__ = [
    "broadcast",
    "broadcast_like",
    "broadcast_shapes",
    "broadcast_to_rank",
    "collapse",
    "full",
    "full_like",
]


def _shape(shape) -> tuple[int, ...]:
    if is_symbolic_dim(shape):
        return (shape,)
    return (operator.index(shape),) if np.ndim(shape) == 0 else tuple(map(canonicalize_dim, shape))


def broadcast(operand, sizes, *, out_sharding=None):
    """``operand`` with new leading axes of ``sizes``."""

    sizes = _shape(sizes)
    shape = aval_of(operand).shape
    dims = tuple(range(len(sizes), len(sizes) + len(shape)))
    return broadcast_in_dim(operand, sizes + tuple(shape), dims, out_sharding=out_sharding)


def broadcast_to_rank(x, rank):
    """``x`` with leading axes of size 1 added until it has ``rank`` axes."""
    ndim = aval_of(x).ndim
    if ndim >= rank and hasattr(x, "aval"):
        return x
    return broadcast(x, (1,) * max(rank - ndim, 0))


def broadcast_shapes(*shapes):
    """The NumPy broadcast of ``shapes`` (trailing axes aligned; size 1 stretches)."""
    shapes = [_shape(s) for s in shapes]
    if not shapes:
        raise ValueError("broadcast_shapes needs at least one shape")
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + s for s in shapes]
    out = []
    for sizes in zip(*padded, strict=True):
        big = {d for d in sizes if d != 1}
        if len(big) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
        out.append(big.pop() if big else 1)
    return tuple(out)


def broadcast_like(arr, like_arr):
    """``arr`` broadcast NumPy-style to the shape of ``like_arr``."""

    shape, target = aval_of(arr).shape, aval_of(like_arr).shape
    if len(shape) > len(target):
        raise ValueError(
            "Cannot broadcast to shape with fewer dimensions: "
            f"arr_shape={tuple(shape)} shape={tuple(target)}"
        )
    offset = len(target) - len(shape)
    if any(d not in (1, t) for d, t in zip(shape, target[offset:], strict=True)):
        raise ValueError(
            f"Incompatible shapes for broadcasting: {tuple(shape)} and requested shape "
            f"{tuple(target)}"
        )
    return broadcast_in_dim(arr, tuple(target), tuple(range(offset, len(target))))


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with axes ``start_dimension`` up to ``stop_dimension`` merged into one."""

    shape = tuple(aval_of(operand).shape)
    ndim = len(shape)
    start = operator.index(start_dimension)
    stop = ndim if stop_dimension is None else operator.index(stop_dimension)
    start, stop = start + ndim if start < 0 else start, stop + ndim if stop < 0 else stop
    if not 0 <= start <= stop <= ndim:
        raise ValueError(
            f"Invalid dimension range passed to collapse: {shape}[{start_dimension}:"
            f"{stop_dimension}]"
        )
    new_shape = (*shape[:start], math.prod(shape[start:stop]), *shape[stop:])
    return reshape(operand, new_shape)


def _fill_scalar(name, fill_value, dtype, weak_type):
    """``fill_value`` as a scalar of ``dtype`` (host values converted on the host)."""

    aval = aval_of(fill_value)
    if aval.ndim:
        raise TypeError(
            f"{name} must be called with scalar fill_value, got fill_value.shape {aval.shape}."
        )
    if isinstance(fill_value, Tracer) or hasattr(fill_value, "aval"):
        if dtype is None:
            return fill_value
        return to_dtype(fill_value, dtype, weak_type)
    if dtype is None:
        if dtypes.is_python_scalar(fill_value):
            return fill_value  # stays weakly typed
        return np.asarray(fill_value, aval.dtype)
    if dtype == dtypes.float0:  # float0 holds no data: any fill value is its one value
        return np.zeros((), dtype)
    if dtypes.canonicalize_dtype(dtype) != dtype:  # an allowed explicit 64-bit dtype
        return to_dtype(fill_value, dtype, weak_type)
    value = np.asarray(fill_value, dtype)
    if weak_type:
        return device_put_value(value, weak_type=True)
    return value


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of ``shape`` filled with the scalar ``fill_value`` (of ``dtype``, or of
    the fill value's type, weak for Python scalars)."""

    shape = _shape(shape)
    if dtype is not None:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "full")
    scalar = _fill_scalar("full", fill_value, dtype, False)
    if _is_concrete(sharding):
        return _laid_out(scalar, shape, sharding)
    return broadcast_in_dim(scalar, shape, (), out_sharding=sharding)


def _laid_out(scalar, shape, sharding):
    """``scalar`` broadcast to ``shape`` and placed by the concrete ``sharding`` (not
    weakly typed, as JAX makes it); under ``jit`` the sharding is left to XLA, as in
    JAX."""
    out = broadcast_in_dim(scalar, shape, ())
    if isinstance(out, Tracer):
        return out
    return device_put(to_dtype(out, aval_of(out).dtype), sharding)


def _is_concrete(sharding) -> bool:
    """A sharding over devices (not over an abstract mesh, not a bare spec)."""
    if not isinstance(sharding, Sharding):
        return False
    mesh = getattr(sharding, "mesh", None)
    return mesh is None or getattr(mesh, "abstract_mesh", None) is not mesh


def _prototype_aval(x) -> ShapedArray:
    """The abstract value of ``full_like``'s prototype: any array, or any object with a
    ``shape`` and a ``dtype`` (a ``ShapeDtypeStruct``, ``eval_shape``'s output), which
    is never weakly typed, as in JAX."""
    if isinstance(getattr(x, "aval", None), ShapedArray) or dtypes.is_python_scalar(x):
        return aval_of(x)
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype))
    return aval_of(x)


def _keeps_layout(x, aval, shape, weak_type) -> bool:
    """Whether ``full_like`` lays its result out as ``x``'s type, as JAX does: a traced
    ``x`` when no shape is given; an array when the shape is its own and not weak."""
    if aval.type_sharding is None:
        return False
    if isinstance(x, Tracer):
        return shape is None
    return not weak_type and (shape is None or _shape(shape) == tuple(aval.shape))


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like ``x`` (its shape and dtype, unless given; weakly typed when ``x``
    is and no ``dtype`` is given) filled with ``fill_value``."""

    aval = _prototype_aval(x)
    if hasattr(x, "aval") and not isinstance(x, Tracer):  # an array: typed by its layout
        aval = typed_value_aval(x, aval)
    weak_type = dtype is None and aval.weak_type
    if dtype is None:
        dtype = aval.dtype
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "full_like")
    if sharding is None and _keeps_layout(x, aval, shape, weak_type):
        sharding = aval.type_sharding if isinstance(x, Tracer) else x.sharding
    shape = tuple(aval.shape) if shape is None else _shape(shape)
    scalar = _fill_scalar("full_like", fill_value, dtype, weak_type)
    if _is_concrete(sharding):
        return _laid_out(scalar, shape, sharding)
    return broadcast_in_dim(scalar, shape, (), out_sharding=sharding)
