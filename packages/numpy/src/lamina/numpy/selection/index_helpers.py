"""Index helpers: the indices of triangles and diagonals (``tril_indices``,
``triu_indices`` and their ``_from`` forms, ``diag_indices``, ``diag_indices_from``,
``mask_indices``), index grids (``indices``, ``ix_``), conversions between flat and
multi-dimensional indices (``ravel_multi_index``, ``unravel_index``), and bit packing
(``packbits``, ``unpackbits``).

Shapes and offsets are static (Python ints); index arrays come out in the default
integer dtype, as in JAX.
"""

from __future__ import annotations

import math
import operator

import lamina.lax as lax
import numpy as np
from lamina.interpreters import device_put_value, jit
from lamina.ir import dtypes
from lamina.numpy.base.arguments import aval_of, check_arraylike, from_jax_array, to_array
from lamina.numpy.base.shaping import moveaxis, ravel
from lamina.numpy.base.static_values import concrete_value, static_int
from lamina.numpy.selection.choosing import nonzero
from lamina.numpy.selection.plumbing import default_index_dtype, where3

__all__ = [
    "diag_indices",
    "diag_indices_from",
    "indices",
    "ix_",
    "mask_indices",
    "packbits",
    "ravel_multi_index",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
    "unpackbits",
    "unravel_index",
]


def _index_arrays(*arrays):
    dtype = dtypes.default_int_dtype()
    return tuple(device_put_value(np.asarray(a, dtype)) for a in arrays)


def _triangle(lower: bool, n, k, m, name):
    n = static_int(n, f"n argument of jnp.{name}")
    k = static_int(k, f"k argument of jnp.{name}")
    m = n if m is None else static_int(m, f"m argument of jnp.{name}")
    # The indices depend only on the static sizes, so they are constants.
    rows, cols = (np.tril_indices if lower else np.triu_indices)(n, k, m)
    return _index_arrays(rows, cols)


def tril_indices(n, k=0, m=None):
    return _triangle(True, n, k, m, "tril_indices")


def triu_indices(n, k=0, m=None):
    return _triangle(False, n, k, m, "triu_indices")


def _shape_of(arr, name):
    if hasattr(arr, "shape"):
        return tuple(arr.shape)
    check_arraylike(name, arr)
    return aval_of(to_array(arr)).shape


def tril_indices_from(arr, k=0):
    arr = from_jax_array(arr)
    shape = _shape_of(arr, "tril_indices_from")
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(shape[0], k=k, m=shape[1])


def triu_indices_from(arr, k=0):
    arr = from_jax_array(arr)
    shape = _shape_of(arr, "triu_indices_from")
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(shape[0], k=k, m=shape[1])


def diag_indices(n, ndim=2):
    n = static_int(n, "'n' argument of jnp.diag_indices()")
    ndim = static_int(ndim, "'ndim' argument of jnp.diag_indices()")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax.iota(default_index_dtype(n), n),) * ndim


def diag_indices_from(arr):
    check_arraylike("diag_indices_from", arr)
    shape = aval_of(to_array(arr)).shape
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], ndim=len(shape))


def mask_indices(n, mask_func, k=0, *, size=None):
    n = static_int(n, "n argument of jnp.mask_indices")
    ones = lax.full((n, n), 1.0, dtypes.default_float_dtype())
    rows, cols = nonzero(mask_func(ones, k), size=size)
    return rows, cols


def indices(dimensions, dtype=None, sparse=False):
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype, "indices")
    dimensions = tuple(static_int(d, "dimensions argument of jnp.indices") for d in dimensions)
    count = len(dimensions)
    grids = []
    for i, size in enumerate(dimensions):
        shape = tuple(size if j == i else 1 for j in range(count)) if sparse else dimensions
        grids.append(lax.broadcast_in_dim(lax.iota(dtype, size), shape, (i,)))
    if sparse:
        return tuple(grids)
    if not grids:
        return lax.full((0,), 0, dtype)
    return lax.concatenate([lax.expand_dims(g, (0,)) for g in grids], 0)


def ix_(*args):
    check_arraylike("ix", *args)
    count = len(args)
    out = []
    for i, a in enumerate(args):
        a = to_array(a)
        shape = aval_of(a).shape
        if len(shape) != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {shape}")
        if aval_of(a).dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        target = tuple(shape[0] if j == i else 1 for j in range(count))
        if shape[0] == 0:
            out.append(lax.full(target, 0, dtypes.default_int_dtype()))
        else:
            out.append(lax.broadcast_in_dim(a, target, (i,)))
    return tuple(out)


def unravel_index(indices, shape):
    check_arraylike("unravel_index", indices)
    flat = to_array(indices)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    return _unravel(flat, shape=tuple(operator.index(s) for s in shape))


def _unravel_impl(flat, *, shape):
    out = [None] * len(shape)
    rest = flat
    for i in reversed(range(len(shape))):
        rest, out[i] = rest // shape[i], rest % shape[i]
    # Out of range: past the end gives the last index, before -size the first one.
    too_big = rest > 0
    unsigned = dtypes.issubdtype(aval_of(flat).dtype, np.unsignedinteger)
    result = []
    for size, index in zip(shape, out, strict=True):
        if not unsigned:
            index = where3(rest < -1, 0, index)
        result.append(where3(too_big, size - 1, index))
    return tuple(result)


_unravel = jit(_unravel_impl, static_argnames=("shape",))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(static_int(d, "`dims` argument of ravel_multi_index()") for d in dims)
    check_arraylike("ravel_multi_index", *multi_index)
    arrays = [to_array(i) for i in multi_index]
    if dtype is None:
        dtype = dtypes.result_type(int, *arrays)
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "ravel_multi_index")
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype={dtype} is not an integer type.")
    if math.prod(dims) - 1 > dtypes.iinfo(dtype).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold flattened index for "
            f"dims={dims}. Use the dtype argument to pass a suitable dtype (e.g. "
            "dtype=np.min_scalar_type(prod(dims)))."
        )
    for index in arrays:
        if not dtypes.issubdtype(aval_of(index).dtype, np.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        hint = (
            "The error occurred because ravel_multi_index was jit-compiled with mode='raise'. "
            "Use mode='wrap' or mode='clip' instead."
        )
        values = [concrete_value(i, hint) for i in arrays]
        if any(np.any((v < 0) | (v >= d)) for v, d in zip(values, dims, strict=True)):
            raise ValueError("invalid entry in coordinates array")
    elif mode not in ("clip", "wrap", "ignore"):
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order not in ("C", "F"):
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    return _ravel(tuple(arrays), dims=dims, mode=mode, order=order, dtype=np.dtype(dtype))


def _ravel_impl(arrays, *, dims, mode, order, dtype):
    if mode == "clip":
        arrays = [
            lax.clamp(lax.full((), 0, aval_of(i).dtype), i, lax.full((), d - 1, aval_of(i).dtype))
            for i, d in zip(arrays, dims, strict=True)
        ]
    elif mode == "wrap":
        arrays = [i % d for i, d in zip(arrays, dims, strict=True)]
    if order == "F":
        strides = np.cumprod((1, *dims[:-1]))
    else:
        strides = np.cumprod((1, *dims[1:][::-1]))[::-1]
    result = lax.full((), 0, dtype)
    for index, stride in zip(arrays, strides, strict=True):
        result = result + lax.convert_element_type(index, dtype) * lax.full((), int(stride), dtype)
    return result


_ravel = jit(_ravel_impl, static_argnames=("dims", "mode", "order", "dtype"))


def _check_bitorder(bitorder):
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")


def _bit_shifts(bitorder, shape):
    """The shift of each bit of a byte, along the last axis of ``shape`` (of size 8)."""
    shifts = lax.iota(np.uint8, 8)
    if bitorder == "big":
        shifts = lax.rev(shifts, (0,))
    return lax.broadcast_in_dim(shifts, shape, (len(shape) - 1,))


def packbits(a, axis=None, bitorder="big"):
    check_arraylike("packbits", a)
    arr = to_array(a)
    dtype = aval_of(arr).dtype
    if not (dtypes.issubdtype(dtype, np.integer) or dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    _check_bitorder(bitorder)
    return _packbits(arr, axis=None if axis is None else operator.index(axis), bitorder=bitorder)


def _packbits_impl(arr, *, axis, bitorder):
    bits = lax.convert_element_type(lax.ne(arr, lax.full((), 0, aval_of(arr).dtype)), np.uint8)
    if axis is None:
        bits, axis = ravel(bits), 0
    bits = moveaxis(bits, axis, -1)
    shape = aval_of(bits).shape
    padded = -(-shape[-1] // 8) * 8
    if padded != shape[-1]:
        config = [(0, 0, 0)] * (len(shape) - 1) + [(0, padded - shape[-1], 0)]
        bits = lax.pad(bits, np.uint8(0), config)
    groups = lax.reshape(bits, (*shape[:-1], padded // 8, 8))
    shifted = lax.shift_left(groups, _bit_shifts(bitorder, aval_of(groups).shape))
    packed = lax.reduce_sum(shifted, (len(shape),))
    return moveaxis(packed, -1, axis)


_packbits = jit(_packbits_impl, static_argnames=("axis", "bitorder"))


def unpackbits(a, axis=None, count=None, bitorder="big"):
    check_arraylike("unpackbits", a)
    arr = to_array(a)
    if aval_of(arr).dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    _check_bitorder(bitorder)
    return _unpackbits(
        arr,
        axis=None if axis is None else operator.index(axis),
        count=None if count is None else operator.index(count),
        bitorder=bitorder,
    )


def _unpackbits_impl(arr, *, axis, count, bitorder):
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = moveaxis(arr, axis, -1)
    shape = aval_of(arr).shape
    full_shape = (*shape, 8)
    bytes_ = lax.broadcast_in_dim(arr, full_shape, tuple(range(len(shape))))
    shifted = lax.shift_right_logical(bytes_, _bit_shifts(bitorder, full_shape))
    bits = lax.bitwise_and(shifted, lax.full((), 1, np.uint8))
    bits = lax.reshape(bits, (*shape[:-1], shape[-1] * 8))
    length = shape[-1] * 8
    if count is not None:
        if count > length:
            config = [(0, 0, 0)] * (len(shape) - 1) + [(0, count - length, 0)]
            bits = lax.pad(bits, np.uint8(0), config)
        else:
            stop = count if count >= 0 else max(length + count, 0)
            bits = lax.slice_in_dim(bits, 0, stop, axis=len(shape) - 1)
    return moveaxis(bits, -1, axis)


_unpackbits = jit(_unpackbits_impl, static_argnames=("axis", "count", "bitorder"))
