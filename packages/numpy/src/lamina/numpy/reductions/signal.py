"""Signal-processing functions of jax.numpy: ``convolve`` and ``correlate`` (1-D, on
``lax.conv_general_dilated``), finite differences (``diff``, ``ediff1d``,
``gradient``), integration (``trapezoid``) and linear interpolation (``interp``)."""

from __future__ import annotations

import operator

import numpy as np
from lamina import lax
from lamina.ir import dtypes
from lamina.numpy.base.arguments import check_arraylike, promote_dtypes, promote_dtypes_inexact
from lamina.numpy.base.shaping import broadcast_to, moveaxis, ravel
from lamina.numpy.base.static_values import as_array, concrete
from lamina.numpy.reductions import folding
from lamina.numpy.reductions import rules as rc
from lamina.numpy.reductions.bin_search import search_sorted, take_at

__all__ = ["convolve", "correlate", "diff", "ediff1d", "gradient", "interp", "trapezoid"]


def _conv1d(name, a, v, mode, precision, preferred_element_type):
    check_arraylike(name, a, v)
    return _staged_conv1d(a, v, name, mode, precision, preferred_element_type)


@rc.staged(2, 3, 4, 5)
def _staged_conv1d(a, v, name, mode, precision, preferred_element_type):
    x, y = rc.to_array(a), rc.to_array(v)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = promote_dtypes_inexact(x, y)
    else:
        x, y = promote_dtypes(x, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    reverse_output = False
    if name == "correlate":
        if dtypes.issubdtype(y.dtype, np.complexfloating):
            y = lax.conj(y)
        if x.shape[0] < y.shape[0]:
            x, y, reverse_output = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = lax.rev(y, (0,))
    width = y.shape[0]
    paddings = {
        "valid": (0, 0),
        "same": (width // 2, width - width // 2 - 1),
        "full": (width - 1, width - 1),
    }
    if mode not in paddings:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    result = lax.conv_general_dilated(
        lax.reshape(x, (1, 1, x.shape[0])),
        lax.reshape(y, (1, 1, width)),
        (1,),
        [paddings[mode]],
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    result = lax.reshape(result, (result.shape[2],))
    return lax.rev(result, (0,)) if reverse_output else result


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of the 1-D arrays ``a`` and ``v``."""
    return _conv1d("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of the 1-D arrays ``a`` and ``v`` (``v`` conjugated)."""
    return _conv1d("correlate", a, v, mode, precision, preferred_element_type)


def _edge_piece(fun_name, value, like, axis):
    """``prepend``/``append`` of :func:`diff`: a scalar becomes a slab of ``like``'s shape
    one element thick along ``axis``."""
    value = as_array(fun_name, value)
    if value.ndim == 0:
        shape = list(like.shape)
        shape[axis] = 1
        value = broadcast_to(value, shape)
    return value


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (``!=`` for booleans)."""
    arr = as_array("diff", a)
    n = operator.index(concrete(n, "'n' argument of jnp.diff"))
    axis = operator.index(concrete(axis, "'axis' argument of jnp.diff"))
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if arr.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = rc.canonicalize_axis(axis, arr.ndim)
    pieces = [arr]
    if prepend is not None:
        pieces.insert(0, _edge_piece("diff", prepend, arr, axis))
    if append is not None:
        pieces.append(_edge_piece("diff", append, arr, axis))
    if len(pieces) > 1:
        pieces = promote_dtypes(*pieces)
        arr = lax.concatenate(pieces, axis)
    for _ in range(n):
        upper = rc.slice_axis(arr, 1, None, axis)
        lower = rc.slice_axis(arr, None, -1, axis)
        arr = lax.ne(upper, lower) if arr.dtype == np.bool_ else lax.sub(upper, lower)
    return arr


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened ``ary``, with
    ``to_begin`` and ``to_end`` (cast to its dtype) attached."""
    arr = ravel(as_array("ediff1d", ary))
    pieces = [lax.sub(rc.slice_axis(arr, 1, None, 0), rc.slice_axis(arr, None, -1, 0))]
    if to_begin is not None:
        pieces.insert(0, ravel(rc.convert(as_array("ediff1d", to_begin), arr.dtype)))
    if to_end is not None:
        pieces.append(ravel(rc.convert(as_array("ediff1d", to_end), arr.dtype)))
    return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, 0)


def _gradient_along(f, spacing, axis):
    """Second-order central differences inside, first-order ones at both edges."""

    def part(start, stop, x=f):
        return rc.slice_axis(x, start, stop, axis)

    first = lax.sub(part(1, 2), part(0, 1))
    last = lax.sub(part(-1, None), part(-2, -1))
    if spacing.ndim == 0:
        inner = lax.div(lax.mul(lax.sub(part(2, None), part(None, -2)), 0.5), spacing)
        first, last = lax.div(first, spacing), lax.div(last, spacing)
    elif spacing.ndim == 1:
        if spacing.shape[0] != f.shape[axis]:
            raise ValueError(
                "Spacing arrays must have the same length as the dimension along which the "
                "gradient is calculated."
            )
        shape = [1] * f.ndim
        shape[axis] = spacing.shape[0]
        h = lax.reshape(spacing, tuple(shape))
        first = lax.div(first, lax.sub(part(1, 2, h), part(0, 1, h)))
        last = lax.div(last, lax.sub(part(-1, None, h), part(-2, -1, h)))
        dx1 = lax.sub(part(1, -1, h), part(0, -2, h))
        dx2 = lax.sub(part(2, None, h), part(1, -1, h))
        total = lax.add(dx1, dx2)
        inner = lax.add(
            lax.add(
                lax.mul(lax.neg(lax.div(dx2, lax.mul(dx1, total))), part(0, -2)),
                lax.mul(lax.div(lax.sub(dx2, dx1), lax.mul(dx1, dx2)), part(1, -1)),
            ),
            lax.mul(lax.div(dx1, lax.mul(dx2, total)), part(2, None)),
        )
    else:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    return lax.concatenate([first, inner, last], axis)


def gradient(f, *varargs, axis=None, edge_order=None):
    """Gradient of the sampled function ``f`` along ``axis`` (all axes by default), with
    unit spacing, one spacing for all axes, or one (scalar or coordinates) per axis."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    check_arraylike("gradient", f, *varargs)
    f, *spacing = promote_dtypes_inexact(rc.to_array(f), *(rc.to_array(h) for h in varargs))
    if axis is None:
        axes = tuple(range(f.ndim))
    else:
        axes = rc.reduction_axes(rc.static_axis(axis, "gradient"), f.ndim)
    if not axes:
        return []
    if min(f.shape[d] for d in axes) < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least 2 elements "
            "are required."
        )
    if not spacing:
        spacing = [rc.to_array(np.array(1.0, f.dtype))] * len(axes)
    elif len(spacing) == 1:
        spacing = spacing * len(axes)
    elif len(spacing) != len(axes):
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis!r}")
    grads = [_gradient_along(f, h, d) for d, h in zip(axes, spacing, strict=True)]
    return grads[0] if len(axes) == 1 else grads


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` along ``axis`` by the trapezoidal rule, over the sample points
    ``x`` or with uniform spacing ``dx``."""
    if x is None:
        (y,) = promote_dtypes_inexact(as_array("trapezoid", y))
        spacing = rc.to_array(dx)
        if spacing.ndim > 0:
            spacing = lax.reshape(spacing, (1,) * (y.ndim - spacing.ndim) + spacing.shape)
            spacing = moveaxis(spacing, axis, -1)
    else:
        check_arraylike("trapezoid", y, x)
        y, x = promote_dtypes_inexact(rc.to_array(y), rc.to_array(x))
        spacing = diff(x) if x.ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, axis, -1)
    if spacing.ndim == 0 or spacing.shape[-1] == 1:
        step = spacing if spacing.ndim == 0 else rc.take_index(spacing, 0, spacing.ndim - 1)
        ends = lax.add(rc.take_index(y, 0, y.ndim - 1), rc.take_index(y, -1, y.ndim - 1))
        return step * (folding.sum(y, -1) - 0.5 * ends)
    pairs = lax.add(rc.slice_axis(y, 1, None, -1 % y.ndim), rc.slice_axis(y, None, -1, y.ndim - 1))
    return 0.5 * folding.sum(spacing * pairs, -1)


def _extrapolates(side, value):
    if isinstance(value, str):
        if value != "extrapolate":
            raise ValueError(
                f"the only valid string value of `{side}` is 'extrapolate', but got: {value!r}"
            )
        return True
    return False


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at
    ``x``; ``left``/``right`` give the values outside (or 'extrapolate'), ``period``
    makes the coordinates periodic. ``fp`` may be complex."""
    check_arraylike("interp", x, xp, fp)
    extrapolate_left = _extrapolates("left", left)
    extrapolate_right = _extrapolates("right", right)
    if period is not None and np.ndim(period) != 0:
        raise ValueError(f"period must be a scalar; got {period}")
    left = None if extrapolate_left else left
    right = None if extrapolate_right else right
    return _staged_interp(x, xp, fp, left, right, period, extrapolate_left, extrapolate_right)


@rc.staged(6, 7)
def _staged_interp(x, xp, fp, left, right, period, extrapolate_left, extrapolate_right):
    x, xp, fp = rc.to_array(x), rc.to_array(xp), rc.to_array(fp)
    if xp.shape != fp.shape or xp.ndim != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = promote_dtypes_inexact(x, xp)
    (fp,) = promote_dtypes_inexact(fp)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        period = lax.abs(rc.convert(rc.to_array(period), x.dtype))
        x, xp = x % period, xp % period
        xp, fp = lax.sort_key_val(xp, fp, 0)
        xp = lax.concatenate(
            [rc.slice_axis(xp, -1, None, 0) - period, xp, rc.slice_axis(xp, 0, 1, 0) + period], 0
        )
        fp = lax.concatenate([rc.slice_axis(fp, -1, None, 0), fp, rc.slice_axis(fp, 0, 1, 0)], 0)
    n = xp.shape[0]
    index = lax.clamp(np.int32(1), search_sorted(xp, x, "right"), np.int32(n - 1))
    before = lax.sub(index, np.int32(1))
    fp_low, fp_high = take_at(fp, before), take_at(fp, index)
    xp_low, xp_high = take_at(xp, before), take_at(xp, index)
    df, dx = lax.sub(fp_high, fp_low), lax.sub(xp_high, xp_low)
    delta = lax.sub(x, xp_low)
    # A zero-width interval takes its left value (and keeps gradients finite).
    epsilon = np.spacing(dtypes.finfo(xp.dtype).eps)
    flat = lax.le(lax.abs(dx), np.array(epsilon, dx.dtype))
    slope = rc.promoting_select(flat, np.array(1, dx.dtype), dx)
    f = rc.promoting_select(flat, fp_low, fp_low + (delta / slope) * df)
    if period is None and not extrapolate_left:
        fill = rc.take_index(fp, 0) if left is None else left
        f = rc.promoting_select(lax.lt(x, rc.take_index(xp, 0)), fill, f)
    if period is None and not extrapolate_right:
        fill = rc.take_index(fp, -1) if right is None else right
        f = rc.promoting_select(lax.gt(x, rc.take_index(xp, -1)), fill, f)
    return f
