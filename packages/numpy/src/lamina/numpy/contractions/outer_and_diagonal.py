"""The elementwise-product relatives of the contractions (:mod:`.products`):
``outer``, ``kron``, ``cross``, and the diagonal reductions ``trace`` and
``diagonal``."""

from __future__ import annotations

import operator

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit
from lamina.ir import dtypes, spec_of, typed_value_aval
from lamina.numpy.base.arguments import aval_of, canonicalize_axis, check_arraylike, promote_dtypes
from lamina.numpy.base.shaping import moveaxis, ravel
from lamina.numpy.indexing.subscripting import getitem

__all__ = ["cross", "diagonal", "kron", "outer", "trace"]


@jit(inline=True)
def outer(a, b, out=None):
    """The outer product of ``a`` and ``b`` flattened: ``out[i, j] = a[i] * b[j]``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    check_arraylike("outer", a, b)
    a, b = (ravel(x) for x in promote_dtypes(a, b))
    shape = (aval_of(a).size, aval_of(b).size)
    a, b = lax.broadcast_in_dim(a, shape, (0,)), lax.broadcast_in_dim(b, shape, (1,))
    # jnp.multiply's boolean product is a logical and
    return lax.bitwise_and(a, b) if aval_of(a).dtype == np.bool_ else lax.mul(a, b)


@jit(inline=True)
def kron(a, b):
    """The Kronecker product: blocks ``a[i, j, ..] * b``, ranks matched from the left
    with size-1 axes."""
    check_arraylike("kron", a, b)
    a, b = promote_dtypes(a, b)
    a_shape, b_shape = aval_of(a).shape, aval_of(b).shape
    ndim = max(len(a_shape), len(b_shape))
    a_shape = (1,) * (ndim - len(a_shape)) + a_shape
    b_shape = (1,) * (ndim - len(b_shape)) + b_shape
    a, b = lax.reshape(a, a_shape), lax.reshape(b, b_shape)
    # interleaved axes, each operand size 1 along the other's (lax.mul broadcasts them)
    a = lax.expand_dims(a, tuple(range(1, 2 * ndim, 2)))
    b = lax.expand_dims(b, tuple(range(0, 2 * ndim, 2)))
    out_shape = tuple(m * n for m, n in zip(a_shape, b_shape, strict=True))
    return lax.reshape(lax.mul(a, b), out_shape)


def _component(x, i):
    return lax.index_in_dim(x, i, axis=aval_of(x).ndim - 1, keepdims=False)


@jit(static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross products of the 2- or 3-vectors along ``axisa`` of ``a`` and ``axisb`` of
    ``b`` (``axis`` sets all three), placed along ``axisc``; two 2-vectors give the
    scalar z component. The other axes broadcast."""
    check_arraylike("cross", a, b)
    a, b = promote_dtypes(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(a, (axisa,), (-1,)), moveaxis(b, (axisb,), (-1,))
    a_len, b_len = aval_of(a).shape[-1], aval_of(b).shape[-1]
    if a_len not in (2, 3) or b_len not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    a0, a1, b0, b1 = _component(a, 0), _component(a, 1), _component(b, 0), _component(b, 1)
    if a_len == 2 and b_len == 2:
        return a0 * b1 - a1 * b0
    a2 = _component(a, 2) if a_len == 3 else None
    b2 = _component(b, 2) if b_len == 3 else None
    parts = [
        a1 * b2 if a2 is None else (-(a2 * b1) if b2 is None else a1 * b2 - a2 * b1),
        -(a0 * b2) if a2 is None else (a2 * b0 if b2 is None else a2 * b0 - a0 * b2),
        a0 * b1 - a1 * b0,
    ]
    shape = lax.broadcast_shapes(*(aval_of(p).shape for p in parts))
    dims = tuple(range(1, len(shape) + 1))
    parts = [lax.broadcast_in_dim(p, (1, *shape), dims) for p in parts]
    return moveaxis(lax.concatenate(parts, 0), (0,), (axisc,))


def _sum_dtype(dtype):
    """The dtype ``jnp.sum`` gives: booleans and narrow integers widen to the default
    integer of their signedness."""
    if dtype == np.bool_:
        return dtypes.default_int_dtype()
    defaults = {np.signedinteger: dtypes.default_int_dtype(),
                np.unsignedinteger: dtypes.default_uint_dtype()}  # fmt: skip
    for kind, default in defaults.items():
        if dtypes.issubdtype(dtype, kind) and np.dtype(dtype).itemsize < default.itemsize:
            return default
    return dtype


@jit(static_argnames=("axis1", "axis2", "dtype", "out"), inline=True)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sums along the ``offset`` diagonal of the ``axis1``/``axis2`` planes of ``a``."""
    check_arraylike("trace", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    (a,) = promote_dtypes(a)
    ndim = aval_of(a).ndim
    if canonicalize_axis(axis1, ndim) == canonicalize_axis(axis2, ndim):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    if dtype is None:
        dtype = _sum_dtype(aval_of(a).dtype)
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "trace")
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    shape = aval_of(a).shape
    plane = shape[-2:]
    offset = lax.convert_element_type(offset, np.int32)
    on_diagonal = lax.eq(
        lax.sub(lax.broadcasted_iota(np.int32, plane, 1), lax.broadcasted_iota(np.int32, plane, 0)),
        lax.broadcast_in_dim(offset, plane, ()),
    )
    on_diagonal = lax.broadcast_in_dim(on_diagonal, shape, (len(shape) - 2, len(shape) - 1))
    a = lax.select_n(on_diagonal, lax.full(shape, 0, aval_of(a).dtype), a)
    a = lax.convert_element_type(a, dtype)
    axes = (len(shape) - 2, len(shape) - 1)
    return lax.reduce_or(a, axes) if dtype == np.bool_ else lax.reduce_sum(a, axes)


@jit(static_argnames=("offset", "axis1", "axis2"), inline=True)
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the ``axis1``/``axis2`` planes of ``a``, as a last
    axis (above the main diagonal for positive ``offset``)."""
    check_arraylike("diagonal", a)
    (a,) = promote_dtypes(a)
    if aval_of(a).ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = operator.index(offset)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    *batch, rows, cols = aval_of(a).shape
    size = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    if any(e is not None for e in spec_of(typed_value_aval(a, aval_of(a)))[-2:]):
        # a plane split over mesh axes: indexed as JAX indexes it (a gather)
        i = np.arange(size, dtype=np.int32)
        j = np.arange(abs(offset), abs(offset) + size, dtype=np.int32)
        return getitem(a, (Ellipsis, i, j) if offset >= 0 else (Ellipsis, j, i))
    # In the flattened plane, (i, i + offset) is i * (cols + 1) + offset: a strided slice.
    start = offset if offset >= 0 else -offset * cols
    limit = start + (size - 1) * (cols + 1) + 1 if size else start
    flat = lax.reshape(a, (*batch, rows * cols))
    zeros, ones = [0] * len(batch), [1] * len(batch)
    return lax.slice(flat, [*zeros, start], [*batch, limit], [*ones, cols + 1])
