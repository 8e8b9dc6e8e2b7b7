"""Polynomials meet linear algebra: ``roots`` (eigenvalues of the companion matrix),
``polyfit`` (least squares on the Vandermonde matrix, via the SVD) and the small
helpers they share with :mod:`.arithmetic`."""

from __future__ import annotations

import operator

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.lax.linalg import eig, lu, svd, triangular_solve
from lamina.numpy.base.arguments import aval_of, check_arraylike, promote_dtypes_inexact, to_array
from lamina.numpy.base.static_values import concrete_value

__all__ = ["polyfit", "roots"]


def _first(x):
    return lax.index_in_dim(x, 0, keepdims=False)


def eigvals(a):
    """The (complex) eigenvalues of square matrix ``a``."""
    return eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def _complex_empty(dtype):
    return lax.full((0,), 0, dtypes.to_complex_dtype(dtype))


@jit
def _roots_of(p):
    """The roots of ``p`` (its leading coefficient nonzero): eigenvalues of the
    companion matrix, first row ``-p[1:] / p[0]``, ones below the diagonal."""
    n = aval_of(p).shape[0]
    if n < 2:
        return _complex_empty(aval_of(p).dtype)
    first_row = -(lax.slice(p, (1,), (n,)) / _first(p))
    below = np.eye(n - 2, n - 1, dtype=aval_of(p).dtype)
    companion = lax.concatenate([lax.reshape(first_row, (1, n - 1)), to_array(below)], 0)
    return eigvals(companion)


@jit
def _roots_keeping_length(p, leading_zeros):
    """Roots of ``p`` with a traced number of leading zeros: ``p`` rotated to put them
    last (zero roots), those zero roots moved to the end and replaced with NaN."""
    n = aval_of(p).shape[0]
    dtype = aval_of(p).dtype
    all_zero = lax.broadcast_in_dim(lax.eq(leading_zeros, np.int32(n)), (n,), ())
    p = lax.select_n(all_zero, p, lax.full((n,), 1, dtype))
    doubled = lax.concatenate([p, p], 0)
    p = lax.dynamic_slice(doubled, (leading_zeros,), (n,))
    found = _roots_of(p)
    is_zero = lax.eq(found, lax.full((n - 1,), 0, aval_of(found).dtype))
    found = lax.sort_key_val(lax.convert_element_type(is_zero, np.int32), found)[1]
    kept = lax.broadcast_in_dim(lax.full((), n - 1, np.int32) - leading_zeros, (n - 1,), ())
    keep = lax.lt(lax.iota(np.int32, n - 1), kept)
    nan = lax.full((n - 1,), complex(np.nan, np.nan), aval_of(found).dtype)
    return lax.select_n(keep, nan, found)


_ROOTS_UNDER_JIT = (
    "The error occurred in the jnp.roots() function. To use this within a JIT-compiled "
    "context, pass strip_zeros=False, but be aware that leading zeros will result in some "
    "returned roots being set to NaN."
)


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients ``p`` (highest power first), as
    complex numbers. Leading zeros are stripped, which needs a concrete ``p``; with
    ``strip_zeros=False`` (usable under ``jit``) they give NaN roots at the end."""
    check_arraylike("roots", p)
    (p,) = promote_dtypes_inexact(p)
    if aval_of(p).ndim == 0:
        p = lax.reshape(p, (1,))
    if aval_of(p).ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = aval_of(p).shape[0]
    if n < 2:
        return _complex_empty(aval_of(p).dtype)
    if strip_zeros:
        value = concrete_value(p, _ROOTS_UNDER_JIT)
        zero = value == 0
        leading = n if zero.all() else int(np.argmin(zero))
        return _roots_of(lax.slice(p, (leading,), (n,)))
    is_zero = lax.eq(p, lax.full((n,), 0, aval_of(p).dtype))
    first_nonzero = lax.argmin(lax.convert_element_type(is_zero, np.int32), 0, np.int32)
    leading = lax.select_n(lax.reduce_and(is_zero, (0,)), first_nonzero, np.int32(n))
    return _roots_keeping_length(p, leading)


def _vander(x, columns: int):
    """``[x**(columns-1), ..., x, 1]`` as columns (products, so exact for integers)."""
    n = aval_of(x).shape[0]
    dtype = aval_of(x).dtype
    ones = lax.full((n, 1), 1, dtype)
    if columns <= 1:
        return lax.slice(ones, (0, 0), (n, columns))
    powers = lax.cumprod(lax.broadcast_in_dim(x, (n, columns - 1), (0,)), axis=1)
    return lax.rev(lax.concatenate([ones, powers], 1), (1,))


def _matmul(a, b, precision=None):
    return lax.dot_general(a, b, (((1,), (0,)), ((), ())), precision)


def _adjoint(a):
    a = lax.transpose(a, (1, 0))
    return lax.conj(a) if dtypes.issubdtype(aval_of(a).dtype, np.complexfloating) else a


def _lstsq(a, b, rcond: float):
    """Least squares through the SVD, as ``jnp.linalg.lstsq`` (residuals always
    computed, one per column of ``b``): ``(x, residuals, rank, s)``."""
    a, b = promote_dtypes_inexact(a, b)
    vector = aval_of(b).ndim == 1
    if vector:
        b = lax.reshape(b, (aval_of(b).shape[0], 1))
    dtype = aval_of(a).dtype
    u, s, vh = svd(a, full_matrices=False)
    k = aval_of(s).shape[0]
    s_dtype = aval_of(s).dtype
    cutoff = lax.broadcast_in_dim(_first(s) * np.array(rcond, s_dtype), (k,), ())
    mask = lax.bitwise_and(lax.gt(s, lax.full((k,), 0, s_dtype)), lax.ge(s, cutoff))
    rank = lax.reduce_sum(lax.convert_element_type(mask, dtypes.default_int_dtype()), (0,))
    safe_s = lax.convert_element_type(lax.select_n(mask, lax.full((k,), 1, s_dtype), s), dtype)
    s_inv = lax.select_n(mask, lax.full((k,), 0, dtype), lax.div(lax.full((k,), 1, dtype), safe_s))
    highest = lax.Precision.HIGHEST
    u_t_b = _matmul(_adjoint(u), b, highest)
    x = _matmul(_adjoint(vh), _columns(s_inv, aval_of(u_t_b).shape) * u_t_b, highest)
    r = b - _matmul(a, x, highest)
    complex_r = dtypes.issubdtype(aval_of(r).dtype, np.complexfloating)
    squares = lax.real(r * lax.conj(r)) if complex_r else r * r
    residuals = lax.integer_pow(lax.sqrt(lax.reduce_sum(squares, (0,))), 2)
    if vector:
        x = lax.reshape(x, (aval_of(x).shape[0],))
    return x, residuals, rank, s


def _inverse(a):
    """The inverse of square ``a`` through its LU decomposition."""
    n = aval_of(a).shape[0]
    factors, _, permutation = lu(a)
    rows = lax.eq(_columns(permutation, (n, n)), lax.broadcasted_iota(np.int32, (n, n), 1))
    permuted_eye = lax.convert_element_type(rows, aval_of(a).dtype)
    y = triangular_solve(factors, permuted_eye, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(factors, y, left_side=True, lower=False)


def _check_fit_arguments(x, y, w, deg):
    if deg < 0:
        raise ValueError("expected deg >= 0")
    x_aval, y_aval = aval_of(x), aval_of(y)
    if x_aval.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x_aval.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y_aval.ndim < 1 or y_aval.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x_aval.shape[0] != y_aval.shape[0]:
        raise TypeError("expected x and y to have same length")
    if w is not None:
        if aval_of(w).ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if aval_of(w).shape[0] != y_aval.shape[0]:
            raise TypeError("expected w and y to have the same length")


def _columns(v, shape):
    return lax.broadcast_in_dim(v, shape, (0,))


@jit(static_argnames=("deg", "rcond", "full", "cov"))
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit of degree ``deg`` to points ``(x, y)`` (``y`` may
    hold several data sets as columns); ``w`` weights the residuals. With ``full``,
    also the residuals, rank, singular values and ``rcond``; with ``cov``, the
    coefficients' covariance (``cov="unscaled"``: not scaled by the residuals)."""
    check_arraylike("polyfit", x, y, *(() if w is None else (w,)))
    x, y = to_array(x), to_array(y)
    deg = operator.index(deg)
    order = deg + 1
    if w is not None:
        (w,) = promote_dtypes_inexact(w)
    _check_fit_arguments(x, y, w, deg)
    n = aval_of(x).shape[0]
    if rcond is None:
        rcond = n * float(dtypes.finfo(aval_of(x).dtype).eps)
    rcond = float(rcond)
    lhs, rhs = _vander(x, order), y
    if w is not None:
        lhs = lhs * _columns(w, aval_of(lhs).shape)
        rhs = rhs * (_columns(w, aval_of(rhs).shape) if aval_of(rhs).ndim == 2 else w)
    (lhs,) = promote_dtypes_inexact(lhs)
    scale = lax.sqrt(lax.reduce_sum(lax.mul(lhs, lhs), (0,)))
    lhs = lax.div(lhs, lax.broadcast_in_dim(scale, aval_of(lhs).shape, (1,)))
    c, residuals, rank, s = _lstsq(lhs, rhs, rcond)
    c = c / (_columns(scale, aval_of(c).shape) if aval_of(c).ndim > 1 else scale)
    if full:
        return c, residuals, rank, s, to_array(rcond)
    if not cov:
        return c
    base = _inverse(_matmul(lax.transpose(lhs, (1, 0)), lhs))
    base = base / (
        _columns(scale, (order, order)) * lax.broadcast_in_dim(scale, (order,) * 2, (1,))
    )
    if cov == "unscaled":
        factor = lax.full((1,), 1.0, aval_of(base).dtype)
    else:
        if n <= order:
            raise ValueError(
                "the number of data points must exceed order to scale the covariance matrix"
            )
        factor = residuals / (n - order)
    if aval_of(y).ndim == 1:
        return c, base * lax.reshape(factor, (1, 1))
    count = aval_of(factor).shape[0]
    return c, lax.broadcast_in_dim(base, (order, order, count), (0, 1)) * factor
