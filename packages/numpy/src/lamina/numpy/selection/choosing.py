"""Choosing elements: ``where``, ``select``, ``choose``, ``piecewise``, the positions
of non-zero entries (``nonzero``, ``argwhere``, ``flatnonzero``), ``compress`` and
``extract`` (``take``, ``put`` and their relatives are in :mod:`.taking`).

Results whose length depends on the data (the positions of non-zero entries, the
selected rows) are computed outside ``jit`` from the concrete values; inside ``jit``
they need ``size=``, and shorter results are padded with ``fill_value``.
"""

from __future__ import annotations

import math

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit, vmap
from lamina.ir import dtypes, typed_value_aval
from lamina.numpy.base.arguments import (
    aval_of,
    canonicalize_axis,
    check_arraylike,
    from_jax_array,
    is_arraylike,
    promote_dtypes,
    to_array,
)
from lamina.numpy.base.shaping import broadcast_arrays, broadcast_to, moveaxis, ravel
from lamina.numpy.base.static_values import concrete_int, concrete_value, static_int
from lamina.numpy.reductions.cumulative import check_flattenable
from lamina.numpy.selection.plumbing import (
    count_true,
    flat_true_positions,
    gather_rows,
    keep_weak_type,
    scalar_like,
    where3,
)

__all__ = [
    "argwhere",
    "choose",
    "compress",
    "extract",
    "flatnonzero",
    "nonzero",
    "piecewise",
    "select",
    "where",
]

_NONZERO_SIZE_HINT = (
    "The size argument of jnp.nonzero must be statically specified to use jnp.nonzero "
    "within JAX transformations."
)


def _as_mask(x):
    x = to_array(x)
    return x if aval_of(x).dtype == np.bool_ else x != 0


def _count_nonzero(arr):
    return count_true(_as_mask(arr))


_count_nonzero = jit(_count_nonzero)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    if x is None and y is None:
        check_arraylike("where", condition)
        return nonzero(condition, size=size, fill_value=fill_value)
    check_arraylike("where", condition, x, y)
    if size is not None or fill_value is not None:
        raise ValueError(
            "size and fill_value arguments cannot be used in three-term where function."
        )
    if x is None or y is None:
        raise ValueError(
            "Either both or neither of the x and y arguments should be provided to "
            f"jax.numpy.where, got {x} and {y}."
        )
    return where3(condition, x, y)


def _nonzero_padded(arr, fill_value, *, size):
    """The coordinates of the first ``size`` non-zero entries (padded with
    ``fill_value``, else 0), and the number of non-zero entries."""
    shape = aval_of(arr).shape
    index_dtype = dtypes.default_int_dtype()
    if 0 in shape or size == 0:
        zeros = tuple(lax.full((size,), 0, index_dtype) for _ in shape)
        return (*zeros, _count_nonzero(arr))
    mask = ravel(_as_mask(arr))
    count = count_true(mask, index_dtype)
    flat = flat_true_positions(mask, size, index_dtype)
    strides = np.cumprod((1, *shape[::-1]))[-2::-1]
    out = [
        lax.rem(lax.div(flat, lax.full((), int(s), index_dtype)), lax.full((), d, index_dtype))
        for s, d in zip(strides, shape, strict=True)
    ]
    if fill_value is not None:
        padding = lax.ge(lax.iota(index_dtype, size), count)
        out = [
            lax.select_n(padding, o, broadcast_to(scalar_like(f, index_dtype), (size,)))
            for o, f in zip(out, fill_value, strict=True)
        ]
    return (*out, count)


_nonzero_padded = jit(_nonzero_padded, static_argnames=("size",))


def nonzero(a, *, size=None, fill_value=None):
    a = from_jax_array(a)
    check_arraylike("nonzero", a)
    arr = to_array(a)
    shape = aval_of(arr).shape
    if not shape:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() "
            "instead."
        )
    if fill_value is not None:
        fill_value = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(shape)
        if len(fill_value) != len(shape) or any(np.shape(f) != () for f in fill_value):
            raise ValueError(
                f"fill_value must be a scalar or a tuple of length {len(shape)}; got {fill_value}"
            )
    # JAX counts the non-zero entries with a running sum over the flattened mask
    check_flattenable("cumsum", typed_value_aval(arr, aval_of(arr)).update(dtype=np.bool_))
    if size is not None:
        size = static_int(size, "size argument of jnp.nonzero")
        return _nonzero_padded(arr, fill_value, size=size)[:-1]
    # Computed at the largest possible length, so one compilation serves all data of
    # this shape, then cut to the number of non-zero entries.
    *coordinates, count = _nonzero_padded(arr, None, size=math.prod(shape))
    count = concrete_int(count, _NONZERO_SIZE_HINT)
    return tuple(lax.slice_in_dim(c, 0, count) for c in coordinates)


def flatnonzero(a, *, size=None, fill_value=None):
    check_arraylike("flatnonzero", a)
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    a = from_jax_array(a)
    check_arraylike("argwhere", a)
    arr = to_array(a)
    ndim = len(aval_of(arr).shape)
    columns = nonzero(arr if ndim else lax.reshape(arr, (1,)), size=size, fill_value=fill_value)
    count = aval_of(columns[0]).shape[0]
    if ndim == 0:
        return lax.full((count, 0), 0, aval_of(columns[0]).dtype)
    return lax.concatenate([lax.reshape(c, (count, 1)) for c in columns], 1)


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})"
        )
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    default, *choices = promote_dtypes(default, *choicelist)
    conditions = [_as_mask(c) for c in condlist]
    default, *rest = broadcast_arrays(default, *choices, *conditions)
    choices, conditions = rest[: len(choices)], rest[len(choices) :]
    out = default
    # The first true condition wins: apply them from the last to the first.
    for condition, choice in zip(conditions[::-1], choices[::-1], strict=True):
        out = lax.select_n(condition, out, choice)
    return out


def choose(a, choices, out=None, mode="raise"):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    if is_arraylike(choices):
        stacked = to_array(choices)
        choices = [
            lax.index_in_dim(stacked, i, 0, keepdims=False)
            for i in range(aval_of(stacked).shape[0])
        ]
    check_arraylike("choose", a, *choices)
    a = to_array(a)
    if not dtypes.issubdtype(aval_of(a).dtype, np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        value = concrete_value(
            a,
            "The error occurred because jnp.choose was jit-compiled with mode='raise'. Use "
            "mode='wrap' or mode='clip' instead.",
        )
        if np.any((value < 0) | (value >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = lax.clamp(scalar_like(0, aval_of(a).dtype), a, scalar_like(n - 1, aval_of(a).dtype))
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    choices = promote_dtypes(*choices)
    dtype = aval_of(choices[0]).dtype
    # Like jnp.array(choices): the stacked result is not weakly typed.
    choices = [lax.convert_element_type(c, dtype) for c in choices]
    which, *choices = broadcast_arrays(a, *choices)
    return lax.select_n(lax.convert_element_type(which, np.int32), *choices)


def piecewise(x, condlist, funclist, *args, **kw):
    check_arraylike("piecewise", x)
    x = to_array(x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = [funclist[-1], *funclist[:-1]]
    elif nf == nc:
        funclist = [0, *funclist]
    else:
        raise ValueError(
            f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}"
        )
    shape, dtype = aval_of(x).shape, aval_of(x).dtype
    if is_arraylike(condlist):
        stacked = to_array(condlist)
        condlist = [lax.index_in_dim(stacked, i, 0, keepdims=False) for i in range(nc)]
    # Branch 0 is the default; a later true condition overrides an earlier one.
    branch = lax.full(shape, 0, np.int32)
    for i, condition in enumerate(condlist):
        condition = broadcast_to(_as_mask(condition), shape)
        branch = lax.select_n(condition, branch, lax.full(shape, i + 1, np.int32))

    def call(f):
        return lambda v: lax.convert_element_type(f(v, *args, **kw), dtype)

    def constant(c):
        return lambda v: scalar_like(c, dtype)

    branches = [call(f) if callable(f) else constant(f) for f in funclist]
    if 0 in shape:
        return lax.convert_element_type(x, dtype)
    flat = vmap(lambda i, v: lax.switch(i, branches, v))(ravel(branch), ravel(x))
    return lax.reshape(flat, shape)


def _compress_core(condition, arr, fill_value, *, axis, size):
    """The rows of ``arr`` (along ``axis``, or of the flattened array) where
    ``condition`` holds, as ``size`` rows (all of them if None) padded with
    ``fill_value``; the number selected; and whether ``condition`` is true beyond the
    end of the axis."""
    condition = _as_mask(condition)
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = moveaxis(arr, axis, 0)
    rows, length = aval_of(arr).shape[0], aval_of(condition).shape[0]
    extra = lax.full((), False, np.bool_)
    if length > rows:
        extra = lax.reduce_or(lax.slice_in_dim(condition, rows, length), (0,))
        condition = lax.slice_in_dim(condition, 0, rows)
    else:
        arr = lax.slice_in_dim(arr, 0, length)
    size = aval_of(arr).shape[0] if size is None else size
    positions = flat_true_positions(condition, size)
    picked = gather_rows(arr, positions, mode="clip")
    count = count_true(condition, aval_of(positions).dtype)
    valid = lax.lt(lax.iota(aval_of(positions).dtype, size), count)
    trailing = (1,) * (len(aval_of(arr).shape) - 1)
    valid = broadcast_to(lax.reshape(valid, (size, *trailing)), aval_of(picked).shape)
    fill = broadcast_to(scalar_like(fill_value, aval_of(arr).dtype), aval_of(picked).shape)
    result = moveaxis(lax.select_n(valid, fill, picked), 0, axis)
    return keep_weak_type(result, arr), count, extra


_compress_core = jit(_compress_core, static_argnames=("axis", "size"))


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    check_arraylike("compress", condition, a, fill_value)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    condition, arr = to_array(condition), to_array(a)
    if len(aval_of(condition).shape) != 1:
        raise ValueError("condition must be a 1D array")
    shape = aval_of(arr).shape
    if axis is not None:
        axis = canonicalize_axis(axis, len(shape))
    rows = math.prod(shape) if axis is None else shape[axis]
    available = min(rows, aval_of(condition).shape[0])
    if size is not None:
        size = static_int(size, "size argument of jnp.compress")
        if not 0 <= size <= available:
            raise ValueError(
                "size must be positive and not greater than the size of the array axis; got "
                f"size={size} for a.shape[axis]={available}"
            )
        return _compress_core(condition, arr, fill_value, axis=axis, size=size)[0]
    hint = (
        "jnp.compress (and jnp.extract) give a result whose length depends on the values "
        "of the condition; to use them inside jit or other transformations, pass size= "
        "(and optionally fill_value=)."
    )
    # Computed at the largest possible length, so one compilation serves all data of
    # these shapes, then cut to the number of rows selected.
    result, count, extra = _compress_core(condition, arr, fill_value, axis=axis, size=None)
    if concrete_value(extra, hint):
        raise ValueError("condition contains entries that are out of bounds")
    return lax.slice_in_dim(result, 0, concrete_int(count, hint), axis=0 if axis is None else axis)


def extract(condition, arr, *, size=None, fill_value=0):
    check_arraylike("extract", condition, arr, fill_value)
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)
