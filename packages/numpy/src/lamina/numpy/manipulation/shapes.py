"""Shapes of arrays (``jax.numpy``): reshaping and raveling, axis permutations,
adding and removing unit axes, broadcasting (``broadcast_to``, ``broadcast_arrays``,
``atleast_*d``)."""

from __future__ import annotations

import math
import operator

from lamina import lax
from lamina.numpy.base.arguments import canonicalize_axis, check_arraylike, from_jax_array, to_array
from lamina.numpy.base.static_values import as_array
from lamina.numpy.manipulation.static import (
    axis_error,
    axis_tuple,
    shape_3d,
    shape_of,
    size_of,
    static_shape,
)

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "expand_dims",
    "matrix_transpose",
    "moveaxis",
    "permute_dims",
    "ravel",
    "reshape",
    "rollaxis",
    "squeeze",
    "swapaxes",
    "transpose",
]


def _resolve_unknown_dim(shape: tuple[int, ...], old_shape, size: int) -> tuple[int, ...]:
    """``shape`` with its ``-1`` (if any) replaced by the size that keeps ``size``
    elements; JAX's TypeError when no such shape exists."""
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise TypeError(f"can only specify one unknown axis size with a `-1` value, got {shape}")
    if unknown:
        known = math.prod(d for d in shape if d != -1)
        if known == 0:
            raise TypeError(
                f"cannot reshape array of shape {old_shape} (size {size}) into shape {shape}: "
                "the `-1` axis size is ambiguous when the other axes hold no elements; "
                "give every axis size explicitly"
            )
        if size % known:
            raise TypeError(
                f"cannot reshape array of shape {old_shape} (size {size}) into shape "
                f"{shape} because the product of specified axis sizes ({known}) does not "
                f"evenly divide {size}"
            )
        shape = (*shape[: unknown[0]], size // known, *shape[unknown[0] + 1 :])
    new_size = math.prod(shape)
    if new_size != size or any(d < 0 for d in shape):
        raise TypeError(
            f"cannot reshape array of shape {old_shape} (size {size}) into shape {shape} "
            f"(size {new_size})"
        )
    return shape


def _check_order(order: str, fun_name: str) -> None:
    if order == "A":
        raise NotImplementedError(
            f"{fun_name} order='A' is not implemented (as in JAX); arrays are stored in C "
            "order, so order='C' gives what 'A' would."
        )
    if order not in ("C", "F"):
        raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def reshape(a, shape, order="C", *, copy=None, out_sharding=None):
    """``a`` with the same elements in ``shape`` (one size may be ``-1``), read and
    written in C (row-major) or Fortran (``order='F'``) order."""
    x = as_array("reshape", a)
    _check_order(order, "np.reshape")
    old_shape = shape_of(x)
    new_shape = _resolve_unknown_dim(static_shape(shape), old_shape, size_of(x))
    if order == "F":
        reversed_axes = tuple(reversed(range(len(old_shape))))
        flat = lax.transpose(x, reversed_axes) if len(old_shape) > 1 else x
        out = lax.reshape(flat, tuple(reversed(new_shape)))
        return lax.transpose(out, tuple(reversed(range(len(new_shape)))))
    if new_shape == old_shape and out_sharding is None:
        return x
    return lax.reshape(x, new_shape, out_sharding=out_sharding)


def ravel(a, order="C", *, out_sharding=None):
    """``a`` flattened to one dimension (in C or Fortran order)."""
    x = as_array("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(x, (size_of(x),), order=order, out_sharding=out_sharding)


def _permutation(axes, ndim: int, shape) -> tuple[int, ...]:
    perm = tuple(canonicalize_axis(a, ndim) for a in axes)
    if sorted(perm) != list(range(ndim)):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {perm} for operand shape {shape}."
        )
    return perm


def _transpose(x, perm):
    return x if perm == tuple(range(len(perm))) else lax.transpose(x, perm)


def transpose(a, axes=None):
    """``a`` with its axes reversed, or permuted as ``axes`` says (result axis ``i``
    is input axis ``axes[i]``)."""
    a = from_jax_array(a)
    x = as_array("transpose", a)
    shape = shape_of(x)
    if axes is None:
        return _transpose(x, tuple(reversed(range(len(shape)))))
    return _transpose(x, _permutation(axis_tuple(axes), len(shape), shape))


def permute_dims(a, /, axes):
    """The array API's ``transpose`` with required ``axes``."""
    x = as_array("permute_dims", a)
    shape = shape_of(x)
    axes = tuple(axes)
    # Unlike transpose, the array API's permute_dims takes no negative axes.
    if sorted(axes) != list(range(len(shape))):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {axes} for operand shape {shape}."
        )
    return _transpose(x, axes)


def matrix_transpose(x, /):
    """``x`` with its last two axes swapped (a stack of transposed matrices)."""
    x = from_jax_array(x)
    x = as_array("matrix_transpose", x)
    ndim = len(shape_of(x))
    if ndim < 2:
        raise ValueError(
            f"x must be at least two-dimensional for matrix_transpose; got ndim={ndim}"
        )
    return lax.transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def moveaxis(a, source, destination):
    """``a`` with the axes ``source`` moved to the positions ``destination`` (the other
    axes keep their order)."""
    x = as_array("moveaxis", a)
    shape = shape_of(x)
    ndim = len(shape)
    source, destination = axis_tuple(source), axis_tuple(destination)
    if len(source) != len(destination):
        raise ValueError(f"Inconsistent number of elements: {len(source)} vs {len(destination)}")
    source = tuple(canonicalize_axis(s, ndim) for s in source)
    destination = tuple(canonicalize_axis(d, ndim) for d in destination)
    rest = [i for i in range(ndim) if i not in source]
    for dest, src in sorted(zip(destination, source, strict=True)):
        rest.insert(dest, src)
    return _transpose(x, _permutation(rest, ndim, shape))


def swapaxes(a, axis1, axis2):
    """``a`` with axes ``axis1`` and ``axis2`` exchanged."""
    x = as_array("swapaxes", a)
    ndim = len(shape_of(x))
    perm = list(range(ndim))
    for axis in (axis1, axis2):
        if not -ndim <= operator.index(axis) < ndim:
            raise axis_error(axis, ndim)
    axis1, axis2 = axis1 % ndim, axis2 % ndim
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return _transpose(x, tuple(perm))


def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` moved to just before position ``start`` (NumPy's older
    ``moveaxis``)."""
    x = as_array("rollaxis", a)
    ndim = len(shape_of(x))
    axis = canonicalize_axis(axis, ndim)
    start = operator.index(start)
    if not -ndim <= start <= ndim:
        raise ValueError(f"{start=} must satisfy {-ndim}<=start<={ndim}")
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    return x if axis == start else moveaxis(x, axis, start)


def expand_dims(a, axis):
    """``a`` with new size-1 axes at positions ``axis`` of the result."""
    x = as_array("expand_dims", a)
    axes = axis_tuple(axis)
    out_ndim = len(shape_of(x)) + len(axes)
    positions = tuple(canonicalize_axis(d, out_ndim) for d in axes)
    if len(set(positions)) != len(positions):
        raise ValueError(f"repeated axis in expand_dims: {axis}")
    return lax.expand_dims(x, positions)


def squeeze(a, axis=None):
    """``a`` without its size-1 axes (all of them, or those in ``axis``, which must
    have size 1)."""
    a = from_jax_array(a)
    x = as_array("squeeze", a)
    shape = shape_of(x)
    if axis is None:
        dims = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        dims = tuple(canonicalize_axis(d, len(shape)) for d in axis_tuple(axis))
        if len(set(dims)) != len(dims):
            raise ValueError(f"dimensions are not unique: {dims}")
        if any(shape[d] != 1 for d in dims):
            raise ValueError(
                "cannot select an axis to squeeze out which has size not equal to one, "
                f"got shape={shape} and dimensions={dims}"
            )
    return lax.squeeze(x, dims) if dims else x


def _broadcast_pair(shapes) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for sizes in zip(*padded, strict=True):
        stretched = {d for d in sizes if d != 1}
        if len(stretched) > 1:
            raise ValueError(
                f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}"
            )
        out.append(stretched.pop() if stretched else 1)
    return tuple(out)


def broadcast_shapes(*shapes):
    """The shape that arrays of ``shapes`` broadcast to together (NumPy's rules)."""
    return _broadcast_pair([static_shape(s) for s in shapes])


def broadcast_to(array, shape, *, out_sharding=None):
    """``array`` broadcast to ``shape`` (trailing axes aligned; size 1 stretches)."""
    x = as_array("broadcast_to", array)
    shape = static_shape(shape)
    old = shape_of(x)
    if old == shape and out_sharding is None:
        return x
    if len(shape) < len(old):
        raise ValueError(
            f"Cannot broadcast to shape with fewer dimensions: arr_shape={old} shape={shape}"
        )
    lead = len(shape) - len(old)
    if any(d < 0 for d in shape) or any(
        o != 1 and o != n for o, n in zip(old, shape[lead:], strict=True)
    ):
        raise ValueError(
            f"Incompatible shapes for broadcasting: an array of shape {old} cannot be "
            f"broadcast to shape {shape}; each axis of the array must have size 1 or the "
            "requested size."
        )
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))), out_sharding=out_sharding)


def broadcast_arrays(*args):
    """The ``args`` broadcast to their common shape (dtypes unchanged), as a list."""
    args = tuple(map(from_jax_array, args))
    check_arraylike("broadcast_arrays", *args)
    arrays = [to_array(a) for a in args]
    shape = _broadcast_pair([shape_of(x) for x in arrays])
    return [broadcast_to(x, shape) for x in arrays]


def _atleast(fun_name, arys, new_shape):
    check_arraylike(fun_name, *arys)
    out = []
    for a in arys:
        x = to_array(a)
        shape = shape_of(x)
        target = new_shape(shape)
        out.append(x if target == shape else lax.reshape(x, target))
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Each argument with at least one axis (a scalar becomes shape ``(1,)``); one
    argument gives an array, several a list."""
    return _atleast("atleast_1d", arys, lambda s: s if len(s) >= 1 else (1,))


def atleast_2d(*arys):
    """Each argument with at least two axes (new axes at the front)."""
    return _atleast("atleast_2d", arys, lambda s: s if len(s) >= 2 else (1,) * (2 - len(s)) + s)


def atleast_3d(*arys):
    """Each argument with at least three axes: ``(n,)`` becomes ``(1, n, 1)`` and
    ``(m, n)`` becomes ``(m, n, 1)``."""
    return _atleast("atleast_3d", arys, shape_3d)
