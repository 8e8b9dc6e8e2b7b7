"""What every lamina.numpy function does first: check its arguments are array-like,
turn them into arrays, and promote them to a common dtype (JAX's promotion table, weak
Python scalars included) and, where it broadcasts, a common rank; and axis
canonicalization. The base tier of the layer: every module imports it, it imports no
other lamina.numpy module. ``canonicalize_axes``, ``canonicalize_axis``,
``check_arraylike``, ``promote_args_inexact``, ``promote_dtypes_complex``,
``promote_dtypes_inexact`` and ``to_array`` are exported by :mod:`lamina.numpy` for the
layers above; the rest is internal.
"""

from __future__ import annotations

import operator

import numpy as np
from lamina.interpreters import JAX_ARRAY_ABSTRACTIFY, ArrayImpl, Tracer, device_put_value
from lamina.ir import dtypes, tree_util
from lamina.lax import aval_of, promote_args, promote_args_no_broadcast, to_dtype

__all__ = [
    "aval_of",
    "canonicalize_axes",
    "canonicalize_axis",
    "check_arraylike",
    "from_jax_array",
    "is_arraylike",
    "promote_args",
    "promote_args_inexact",
    "promote_args_numeric",
    "promote_dtypes",
    "promote_dtypes_complex",
    "promote_dtypes_inexact",
    "promote_dtypes_numeric",
    "to_array",
]

_PY_SCALARS = (bool, int, float, complex)


def is_arraylike(x) -> bool:
    """True for what jax.numpy accepts as an array argument: arrays, tracers, NumPy
    arrays and scalars, Python scalars and objects with ``__jax_array__``."""
    return (
        type(x) is ArrayImpl
        or isinstance(x, (Tracer, np.ndarray, np.generic, *_PY_SCALARS))
        or hasattr(x, "aval")
        or hasattr(x, "__jax_array__")
    )


def check_arraylike(fun_name: str, *args) -> None:
    """JAX's TypeError for arguments that are not arrays or scalars (lists, strings,
    None, ...): jax.numpy does not convert lists implicitly, because a list of tracers
    would silently become many small operations."""
    for position, arg in enumerate(args):
        if not is_arraylike(arg):
            raise TypeError(
                f"{fun_name} requires ndarray or scalar arguments, got {type(arg)} at "
                f"position {position}."
            )


def from_jax_array(x):
    """``x.__jax_array__()`` for an object that defines it, else ``x``: the explicit
    conversion of the few functions JAX runs outside ``jit`` (``asarray``, ``zeros_like``,
    ``transpose``, ...); everywhere else such an object is refused, as in JAX."""
    if hasattr(x, "__jax_array__") and not isinstance(x, Tracer) and type(x) is not ArrayImpl:
        return x.__jax_array__()
    return x


def to_array(x):
    """``x`` as a lamina array or tracer. A Python scalar stays weakly typed; NumPy
    values take their canonical dtype (float64 becomes float32 with x64 off)."""
    if isinstance(x, Tracer):
        return x
    if hasattr(x, "__jax_array__"):
        # As in JAX, where every jnp function is a jit: a leaf that converts itself
        # fails there; a pytree that does (a flax Variable) gives its array, even when
        # it forwards ``aval`` to that array.
        if tree_util.all_leaves([x]):
            raise ValueError(JAX_ARRAY_ABSTRACTIFY)
        return to_array(x.__jax_array__())
    if hasattr(x, "aval"):
        return x
    if type(x) in _PY_SCALARS:  # not NumPy scalars: np.float64 subclasses float
        return to_dtype(x, dtypes.dtype(x), weak_type=type(x) is not bool)
    value = np.asarray(x)
    return device_put_value(value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False))


def promote_dtypes(*args) -> list:
    """``args`` as arrays of their common dtype (no broadcasting)."""
    if len(args) < 2:
        return [to_array(x) for x in args]
    return [to_array(x) for x in promote_args_no_broadcast("promote_dtypes", *args)]


def _promote_to(args, convert) -> list:
    avals = [aval_of(x) for x in args]
    dtype, weak = dtypes.result_type(*avals, return_weak_type_flag=True)
    dtype = convert(dtype)
    return [
        to_array(
            x if (a.dtype, a.weak_type) == (dtype, weak) else to_dtype(x, dtype, weak_type=weak)
        )
        for x, a in zip(args, avals, strict=True)
    ]


def _numeric(dtype):
    return dtypes.default_int_dtype() if dtype == np.bool_ else dtype


def promote_dtypes_inexact(*args) -> list:
    """``args`` in their common inexact dtype: integers and bools go to the default
    float (float32 with x64 off), as ``jnp.sin(1)`` does."""
    return _promote_to(args, dtypes.to_inexact_dtype)


def promote_dtypes_numeric(*args) -> list:
    """``args`` in their common dtype, with bool promoted to the default integer."""
    return _promote_to(args, _numeric)


def promote_dtypes_complex(*args) -> list:
    return _promote_to(args, dtypes.to_complex_dtype)


def _broadcast_ranks(fun_name, args):
    return promote_args(fun_name, *args) if len(args) > 1 else list(args)


def promote_args_inexact(fun_name: str, *args) -> list:
    """Checked, promoted to a common inexact dtype, and ranks matched for broadcasting."""
    check_arraylike(fun_name, *args)
    return _broadcast_ranks(fun_name, promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args) -> list:
    check_arraylike(fun_name, *args)
    return _broadcast_ranks(fun_name, promote_dtypes_numeric(*args))


def canonicalize_axis(axis, ndim: int) -> int:
    """``axis`` as a non-negative int below ``ndim``; JAX's ValueError otherwise."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


def canonicalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence of ints) as a sorted tuple of distinct
    non-negative axes; None means every axis."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 and not isinstance(axis, (tuple, list)) else axis
    out = tuple(canonicalize_axis(a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return tuple(sorted(out))
