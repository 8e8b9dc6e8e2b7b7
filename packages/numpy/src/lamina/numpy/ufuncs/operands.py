"""Small pieces shared by the elementwise functions of lamina.numpy (the modules of
:mod:`lamina.numpy.ufuncs`): compiling a function like ``jax.numpy`` does, constants
that keep an operand's weak type, broadcasting ``where``, and dtype predicates."""

from __future__ import annotations

import functools

import numpy as np
from lamina import lax
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.lax import aval_of, broadcast_in_dim, promote_args, select_n, to_dtype
from lamina.numpy.base.arguments import check_arraylike, to_array
from lamina.numpy.base.shaping import broadcast_to

__all__ = [
    "INT_OF_BITS",
    "checked_promote",
    "compare",
    "const_like",
    "dtype_of",
    "full_like",
    "is_bool",
    "is_complex",
    "is_floating",
    "is_integer",
    "is_unsigned",
    "jitted",
    "literal_like",
    "select",
    "weak_like_inputs",
    "where",
]


# The signed integer type of each float width, for reading a float's bits.
INT_OF_BITS = {16: np.int16, 32: np.int32, 64: np.int64}


def jitted(fun=None, *, static_argnames=None, inline=True):
    """``fun`` compiled as ``jax.numpy`` compiles its functions: one executable per
    input signature when called eagerly, inlined into an enclosing trace. Keeps the
    function's name, docstring and signature."""
    if fun is None:
        return functools.partial(jitted, static_argnames=static_argnames, inline=inline)
    return jit(fun, static_argnames=static_argnames, inline=inline)


def dtype_of(x) -> np.dtype:
    return aval_of(x).dtype


def is_bool(x) -> bool:
    return dtype_of(x) == np.bool_


def is_integer(x) -> bool:
    return dtypes.issubdtype(dtype_of(x), np.integer)


def is_unsigned(x) -> bool:
    return dtypes.issubdtype(dtype_of(x), np.unsignedinteger)


def is_floating(x) -> bool:
    return dtypes.issubdtype(dtype_of(x), np.floating)


def is_complex(x) -> bool:
    return dtypes.issubdtype(dtype_of(x), np.complexfloating)


def checked_promote(name, *args):
    """Arguments checked, promoted to their common dtype and rank (``promote_args``),
    as arrays."""
    check_arraylike(name, *args)
    return [to_array(a) for a in promote_args(name, *args)]


def const_like(x, value, dtype=None):
    """``value`` as a scalar of ``x``'s dtype (or ``dtype``): weakly typed when ``x`` is
    a weakly typed scalar, else strongly typed, as JAX's constants are (so ``jnp.sinc``
    of a Python float stays weak and of a weak array does not)."""
    aval = aval_of(x)
    dtype = aval.dtype if dtype is None else np.dtype(dtype)
    if aval.weak_type and aval.ndim == 0:
        return _weak_scalar(value, dtype)
    return np.asarray(value, dtype)


def literal_like(x, value):
    """``value`` as a Python literal would enter arithmetic with ``x``: weakly typed
    when ``x`` is (whatever its shape), else a strongly typed scalar of its dtype."""
    aval = aval_of(x)
    if aval.weak_type:
        return _weak_scalar(value, aval.dtype)
    return np.asarray(value, aval.dtype)


def _weak_scalar(value, dtype):
    """``value`` as a weakly typed scalar of ``dtype``: a Python number where one has
    that dtype (a device scalar would become a strongly typed literal when traced)."""
    for python_type in (int, float, complex):
        if dtypes.dtype(python_type(0)) == dtype:
            return python_type(np.asarray(value, dtype).item())
    return to_dtype(np.asarray(value, dtype), dtype, weak_type=True)


def weak_like_inputs(out, *operands):
    """``out`` (a comparison's result) weakly typed when every operand is, as JAX's
    comparisons propagate weak types even to their boolean results."""
    if all(aval_of(x).weak_type for x in operands) and not aval_of(out).weak_type:
        return to_dtype(out, aval_of(out).dtype, weak_type=True)
    return out


def compare(lax_op, x, y):
    """``lax_op(x, y)`` for a lax comparison, with JAX's weak type of the result."""
    return weak_like_inputs(lax_op(x, y), x, y)


def full_like(x, value):
    """An array like ``x`` (shape, dtype and weak type) filled with ``value``."""
    aval = aval_of(x)
    fill = _weak_scalar(value, aval.dtype) if aval.weak_type else np.asarray(value, aval.dtype)
    return broadcast_in_dim(fill, aval.shape, ())


def select(condition, on_true, on_false):
    """``on_true`` where ``condition`` holds, else ``on_false``; all three broadcast."""
    shape = lax.broadcast_shapes(*(aval_of(v).shape for v in (condition, on_true, on_false)))
    condition, on_true, on_false = (broadcast_to(v, shape) for v in (condition, on_true, on_false))
    return select_n(condition, on_false, on_true)


where = select
