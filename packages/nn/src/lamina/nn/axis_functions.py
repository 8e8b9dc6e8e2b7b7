"""The functions of ``jax.nn`` that work along an axis: ``logmeanexp``, ``standardize``,
and ``one_hot``, beside ``logsumexp``, ``softmax`` and ``log_softmax``, which lamina.numpy
holds (``jax.scipy.special`` shares them) and this module re-exports. Each follows
JAX 0.10.2's definition, including how masked (``where``) entries and infinite inputs
come out."""

from __future__ import annotations

import functools
import math
import operator
import warnings

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, Tracer, jit
from lamina.ir import dtypes
from lamina.numpy import (
    canonicalize_axes,
    check_arraylike,
    log_softmax,
    logsumexp,
    softmax,
)

__all__ = ["log_softmax", "logmeanexp", "logsumexp", "one_hot", "softmax", "standardize"]


def _static_axis(axis):
    """``axis`` in a hashable form, for ``jit``'s static arguments."""
    return tuple(axis) if isinstance(axis, list) else axis


def _reduced_dims(ndim: int, axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return canonicalize_axes(axis, ndim)


def _count(x, axis, where, keepdims, dtype):
    """How many entries of ``x`` each reduction over ``axis`` sees."""
    shape = jnp.shape(x)
    dims = _reduced_dims(len(shape), axis)
    if where is None:
        kept_shape = tuple(1 if i in dims else n for i, n in enumerate(shape))
        if not keepdims:
            kept_shape = tuple(n for i, n in enumerate(shape) if i not in dims)
        total = math.prod(shape[i] for i in dims)
        return jnp.full(kept_shape, total, dtype=dtype)
    mask = jnp.broadcast_to(jnp.asarray(where), shape)
    return jnp.sum(mask, axis=dims, keepdims=keepdims, dtype=dtype)


@functools.partial(jit, static_argnames=("axis", "keepdims"))
def _logmeanexp(x, axis, where, keepdims):
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    return lse - jnp.log(_count(x, axis, where, keepdims, lse.dtype))


def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """``log(mean(exp(x)))`` over ``axis``, counting only the entries ``where`` selects."""
    return _logmeanexp(x, axis=_static_axis(axis), where=where, keepdims=keepdims)


@functools.partial(jit, static_argnames=("axis", "algorithm"))
def _standardize(x, axis, mean, variance, epsilon, where, algorithm):
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True, where=where)
        else:
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where)
            # E[x^2] - E[x]^2 can round below zero.
            variance = jnp.clip(variance - jnp.square(mean), 0)
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


def standardize(
    x, axis=-1, mean=None, variance=None, epsilon=1e-05, where=None, *, algorithm: str = "fast"
):
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis``, with the mean and variance
    computed from ``x`` (over the entries ``where`` selects) unless given.
    ``algorithm='fast'`` uses ``E[x^2] - E[x]^2``; ``'stable'`` uses ``E[(x - mean)^2]``."""
    check_arraylike("standardize", x)
    for value in (mean, variance, where):
        if value is not None:
            check_arraylike("standardize", value)
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return _standardize(x, _static_axis(axis), mean, variance, epsilon, where, algorithm=algorithm)


def _concrete_num_classes(num_classes) -> int:
    if isinstance(num_classes, Tracer):
        raise ConcretizationTypeError(
            num_classes, "The error arose in jax.nn.one_hot argument `num_classes`."
        )
    return operator.index(num_classes)


@functools.partial(jit, static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x, num_classes: int, *, dtype, axis):
    if not isinstance(axis, (int, np.integer)):
        # A named axis of an enclosing vmap: the classes are that axis's positions.
        axis_size = lax.axis_size(axis)
        if num_classes != axis_size:
            raise ValueError(
                f"Expected num_classes to match the size of axis {axis}, "
                f"but {num_classes} != {axis_size}"
            )
        return jnp.asarray(x == lax.axis_index(axis), dtype=dtype)
    out_axis = canonicalize_axes(axis, x.ndim + 1)[0]
    classes_shape = [1] * x.ndim
    classes_shape.insert(out_axis, num_classes)
    classes = lax.broadcasted_iota(x.dtype, classes_shape, out_axis)
    return (lax.expand_dims(x, (out_axis,)) == classes).astype(dtype)


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
    """``x == arange(num_classes)`` along a new axis ``axis``, as ``dtype`` (the default
    float type unless given). Entries outside ``[0, num_classes)`` give all-zero rows."""
    num_classes = _concrete_num_classes(num_classes)
    x_arr = jnp.asarray(x)
    if not dtypes.issubdtype(x_arr.dtype, np.integer):
        warnings.warn(
            f"jax.nn.one_hot input should be integer-typed; got dtype={x_arr.dtype}",
            DeprecationWarning,
            stacklevel=2,
        )
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    return _one_hot(x_arr, num_classes, dtype=dtype, axis=axis)
