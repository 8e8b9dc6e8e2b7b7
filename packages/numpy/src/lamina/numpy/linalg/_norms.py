"""Norms and the functions built on the SVD: ``norm``, ``vector_norm``,
``matrix_norm``, ``cond``, ``matrix_rank``, ``pinv`` (with its own derivative, finite
where the singular values are) and ``lstsq``."""

from __future__ import annotations

import functools

import numpy as np
from lamina import lax
from lamina.interpreters import custom_jvp, jit
from lamina.numpy.base.arguments import (
    aval_of,
    canonicalize_axis,
    check_arraylike,
    promote_dtypes_inexact,
    to_array,
)
from lamina.numpy.linalg._decomp import svd
from lamina.numpy.linalg._operands import adjoint, as_matrix, matmul, scalar
from lamina.numpy.linalg._solve import inv
from lamina.numpy.ufuncs.operands import is_complex

__all__ = ["cond", "lstsq", "matrix_norm", "matrix_rank", "norm", "pinv", "vector_norm"]

# A norm is one program (one dispatch when eager), keyed on its order, axes and keepdims.
_staged_norm = functools.partial(jit, static_argnums=(1, 2, 3), inline=True)


def _abs(x):
    return lax.abs(x)


def _sum(x, axes, keepdims):
    out = lax.reduce_sum(x, axes)
    return _keep(out, axes, keepdims)


def _keep(out, axes, keepdims):
    return lax.expand_dims(out, tuple(sorted(axes))) if keepdims else out


@_staged_norm
def _vector_norm(x, ord, axes, keepdims):
    a = _abs(x)
    if ord is None or ord == 2:
        return (
            lax.sqrt(_sum(lax.mul(a, a), axes, keepdims))
            if not is_complex(x)
            else lax.sqrt(_sum(lax.real(lax.mul(x, lax.conj(x))), axes, keepdims))
        )
    if ord == np.inf:
        return _keep(lax.reduce_max(a, axes), axes, keepdims)
    if ord == -np.inf:
        return _keep(lax.reduce_min(a, axes), axes, keepdims)
    if ord == 0:
        nonzero = lax.convert_element_type(lax.ne(a, scalar(0, a)), aval_of(a).dtype)
        return _sum(nonzero, axes, keepdims)
    if ord == 1:
        return _sum(a, axes, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    p = scalar(ord, a)
    return lax.pow(_sum(lax.pow(a, p), axes, keepdims), lax.div(scalar(1, a), p))


@_staged_norm
def _matrix_norm(x, ord, axes, keepdims):
    row, col = axes
    if ord in (None, "fro"):
        return _vector_norm(x, 2, axes, keepdims)
    if ord in (1, -1, np.inf, -np.inf):
        summed, reduced = (row, col) if ord in (1, -1) else (col, row)
        sums = lax.reduce_sum(_abs(x), (summed,))
        reduced -= reduced > summed
        pick = lax.reduce_max if ord > 0 else lax.reduce_min
        return _keep(pick(sums, (reduced,)), axes, keepdims)
    if ord in (2, -2, "nuc"):
        nd = aval_of(x).ndim
        rest = [d for d in range(nd) if d not in (row, col)]
        s = svd(lax.transpose(x, (*rest, row, col)), compute_uv=False)
        last = aval_of(s).ndim - 1
        out = {2: lax.reduce_max, -2: lax.reduce_min, "nuc": lax.reduce_sum}[ord](s, (last,))
        return _keep(out, axes, keepdims)
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def norm(x, ord=None, axis=None, keepdims=False):
    """The vector norm (one axis, or a 1-D input) or matrix norm (two axes, or a 2-D
    input) of ``x``; with no axis and ``ord=None``, the 2-norm of all of ``x``."""
    check_arraylike("jnp.linalg.norm", x)
    (x,) = promote_dtypes_inexact(to_array(x))
    nd = aval_of(x).ndim
    if axis is None:
        if ord is None:
            return _vector_norm(x, None, tuple(range(nd)), keepdims)
        axes = tuple(range(nd))
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(canonicalize_axis(a, nd) for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(
        f"Improper number of axes for norm: axis={axis}. Pass one axis to compute a "
        "vector-norm, or two axes to compute a matrix-norm."
    )


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over ``axis`` (every axis when None, as one flat vector)."""
    check_arraylike("jnp.linalg.vector_norm", x)
    (x,) = promote_dtypes_inexact(to_array(x))
    nd = aval_of(x).ndim
    axes = tuple(range(nd)) if axis is None else (axis,) if isinstance(axis, int) else axis
    axes = tuple(canonicalize_axis(a, nd) for a in axes)
    return _vector_norm(x, ord, axes, keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm of each matrix in the last two axes."""
    x = as_matrix("matrix_norm", x)
    nd = aval_of(x).ndim
    return _matrix_norm(x, ord, (nd - 2, nd - 1), keepdims)


def cond(x, p=None):
    """The condition number of each matrix: ratio of extreme singular values for
    p in (None, 2, -2), else norm(x, p)·norm(inv(x), p) (inf for singular x)."""
    x = as_matrix("cond", x)
    last = aval_of(x).ndim - 1
    if p in (None, 2, -2):
        s = svd(x, compute_uv=False)
        big, small = lax.reduce_max(s, (last - 1,)), lax.reduce_min(s, (last - 1,))
        return lax.div(small, big) if p == -2 else lax.div(big, small)
    if aval_of(x).shape[-1] != aval_of(x).shape[-2]:
        raise ValueError(f"jnp.linalg.cond: for p={p!r}, x must be square; got {aval_of(x).shape}")
    axes = (last - 1, last)
    r = lax.mul(_matrix_norm(x, p, axes, False), _matrix_norm(inv(x), p, axes, False))
    return lax.select_n(lax.ne(r, r), r, lax.full_like(r, np.inf))


def _tolerance(s, m, n, rtol):
    last = aval_of(s).ndim - 1
    if rtol is None:
        rtol = scalar(max(m, n) * np.finfo(aval_of(s).dtype).eps, s)
    else:
        rtol = lax.expand_dims(to_array(rtol), (aval_of(to_array(rtol)).ndim,))
    return lax.mul(rtol, lax.expand_dims(lax.reduce_max(s, (last,)), (last,)))


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """The number of singular values above ``tol`` (absolute) or ``rtol`` times the
    largest."""
    check_arraylike("jnp.linalg.matrix_rank", M)
    (M,) = promote_dtypes_inexact(to_array(M))
    shape = aval_of(M).shape
    if len(shape) < 2:
        return lax.convert_element_type(
            lax.reduce_or(lax.ne(M, scalar(0, M)), tuple(range(len(shape)))), np.int32
        )
    s = svd(M, compute_uv=False, hermitian=hermitian)
    last = aval_of(s).ndim - 1
    if tol is not None:
        limit = lax.expand_dims(lax.convert_element_type(to_array(tol), aval_of(s).dtype), (last,))
        limit = (
            lax.broadcast_in_dim(limit, aval_of(s).shape, tuple(range(aval_of(s).ndim)))
            if aval_of(limit).ndim == aval_of(s).ndim
            else limit
        )
    else:
        limit = _tolerance(s, shape[-2], shape[-1], rtol)
    above = lax.convert_element_type(lax.gt(s, limit), np.int32)
    return lax.reduce_sum(above, (last,))


def _pinv_value(a, rtol, hermitian):
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    last = aval_of(s).ndim - 1
    keep = lax.gt(s, _tolerance(s, *aval_of(a).shape[-2:], rtol))
    inv_s = lax.select_n(
        keep, lax.full_like(s, 0), lax.div(scalar(1, s), lax.select_n(keep, lax.full_like(s, 1), s))
    )
    inv_s = lax.convert_element_type(inv_s, aval_of(a).dtype)
    return matmul(lax.mul(adjoint(vh), lax.expand_dims(inv_s, (last,))), adjoint(u))


def _pinv_jvp(rtol, hermitian, primals, tangents):
    """Golub and Pereyra's derivative of the pseudo-inverse."""
    (a,), (da,) = primals, tangents
    p = _pinv_value(a, rtol, hermitian)
    m, n = aval_of(a).shape[-2:]
    eye_n = _eye(n, a)
    eye_m = _eye(m, a)
    p_h, da_h = adjoint(p), adjoint(da)
    term1 = lax.neg(matmul(matmul(p, da), p))
    term2 = matmul(matmul(matmul(p, p_h), da_h), lax.sub(eye_m, matmul(a, p)))
    term3 = matmul(matmul(lax.sub(eye_n, matmul(p, a)), da_h), matmul(p_h, p))
    return p, lax.add(lax.add(term1, term2), term3)


def _eye(n, like):
    shape = (n, n)
    rows = lax.broadcasted_iota(np.int32, shape, 0)
    cols = lax.broadcasted_iota(np.int32, shape, 1)
    return lax.convert_element_type(lax.eq(rows, cols), aval_of(like).dtype)


_pinv = custom_jvp(_pinv_value, nondiff_argnums=(1, 2))
_pinv.defjvp(_pinv_jvp)


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse of each matrix, dropping singular values below
    ``rtol`` (``rcond``, its older name) times the largest."""
    a = as_matrix("pinv", a)
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    if rtol is not None and not isinstance(rtol, (int, float)):
        rtol = float(np.asarray(rtol))
    return _pinv(a, rtol, bool(hermitian))


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """The least-squares solution x of a·x ≈ b: ``(x, residuals, rank, s)``."""
    check_arraylike("jnp.linalg.lstsq", a, b)
    a, b = promote_dtypes_inexact(to_array(a), to_array(b))
    a_shape, b_shape = aval_of(a).shape, aval_of(b).shape
    if len(a_shape) != 2:
        raise TypeError(f"{a_shape=} must be a matrix (2 dimensions)")
    if len(b_shape) not in (1, 2) or b_shape[0] != a_shape[0]:
        raise TypeError(f"Leading dimensions of input arrays must match; got {a_shape=} {b_shape=}")
    m, n = a_shape
    vector = len(b_shape) == 1
    if vector:
        b = lax.expand_dims(b, (1,))
    dtype = aval_of(a).dtype
    if rcond is None:
        rcond = np.finfo(dtype).eps * max(m, n)
    u, s, vh = svd(a, full_matrices=False)
    limit = lax.mul(scalar(rcond, s), lax.reduce_max(s, (0,))) if min(m, n) else scalar(0, s)
    keep = lax.gt(s, limit) if min(m, n) else lax.gt(s, s)
    rank = lax.reduce_sum(lax.convert_element_type(keep, np.int32), (0,))
    safe = lax.select_n(keep, lax.full_like(s, 1), s)
    inv_s = lax.select_n(keep, lax.full_like(s, 0), lax.div(scalar(1, s), safe))
    uh_b = matmul(adjoint(u), b)
    x = matmul(
        adjoint(vh), lax.mul(lax.expand_dims(lax.convert_element_type(inv_s, dtype), (1,)), uh_b)
    )
    r = lax.sub(b, matmul(a, x))
    squares = lax.real(lax.mul(r, lax.conj(r))) if is_complex(r) else lax.mul(r, r)
    resid = lax.reduce_sum(squares, (0,))
    if numpy_resid and (m <= n or int(rank) < n):  # NumPy leaves them out: needs a concrete rank
        resid = lax.broadcast_in_dim(np.zeros((), aval_of(s).dtype), (0,), ())
    if vector:
        x = lax.squeeze(x, (1,))
    return x, resid, rank, s
