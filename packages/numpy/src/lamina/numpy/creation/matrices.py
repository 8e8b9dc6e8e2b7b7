"""Matrices built from index patterns: ``eye``, ``identity``, ``tri``, ``tril``,
``triu``, ``diag``, ``diagflat`` and ``vander``. The diagonal offset ``k`` of ``eye``,
``tri``, ``tril`` and ``triu`` may be traced.
"""

from __future__ import annotations

import operator
from functools import partial
from operator import eq, ge, le

import numpy as np
from lamina import lax
from lamina.interpreters import Tracer, jit
from lamina.ir import canonicalize_dim, dtypes, is_symbolic_dim
from lamina.numpy.base.arguments import check_arraylike, from_jax_array, to_array
from lamina.numpy.creation.conversion import asarray

__all__ = ["diag", "diagflat", "eye", "identity", "tri", "tril", "triu", "vander"]


def _dimension(size, fun_name: str, arg_name: str) -> int:
    if isinstance(size, (Tracer, float, complex)) or size is None:
        raise TypeError(
            "Shapes must be 1D sequences of concrete values of integer type, got "
            f"({size!r},). argument of '{arg_name}' {fun_name}().\nIf using `jit`, try using "
            "`static_argnums` or applying `jit` to smaller subfunctions."
        )
    return canonicalize_dim(size)


def _rows_cols(n, m, fun_name):
    rows = _dimension(n, fun_name, "N")
    cols = rows if m is None else _dimension(m, fun_name, "M")
    if rows < 0 or cols < 0:
        if fun_name == "jnp.eye":
            raise ValueError(f"negative dimensions are not allowed, got {n} and {m}")
        raise TypeError(f"iota shape must have every element be nonnegative, got {(rows, cols)}.")
    return rows, cols


def _offset(k, rows: int, cols: int):
    """The diagonal offset ``k`` as an operand of the compiled masks: Python ints are
    clamped (a huge k must not overflow int32) and passed as arrays, so that a new
    offset does not mean a new compilation."""
    if np.ndim(k) != 0 or not dtypes.issubdtype(dtypes.dtype(k), np.integer):
        raise ValueError(f"k must be a scalar integer; got {k}")
    if isinstance(k, (int, np.integer)) and not is_symbolic_dim(rows) and not is_symbolic_dim(cols):
        return np.int32(max(min(int(k), cols + 1), -rows - 1))
    if isinstance(k, (int, np.integer)):  # symbolic sizes: k as given
        return np.int32(k)
    return k


def _offset_mask(rows: int, cols: int, k, compare):
    """``compare(col - row, k)`` over a ``rows`` x ``cols`` grid (k may be traced)."""
    row = lax.broadcasted_iota(np.int32, (rows, cols), 0)
    col = lax.broadcasted_iota(np.int32, (rows, cols), 1)
    return compare(col - row, k)


@partial(jit, static_argnames=("rows", "cols", "dtype", "compare"))
def _mask_matrix(k, *, rows, cols, dtype, compare):
    return lax.convert_element_type(_offset_mask(rows, cols, k, compare), dtype)


def _default_dtype(dtype, fun_name):
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    return dtypes.check_and_canonicalize_user_dtype(dtype, fun_name)


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """A ``N`` x ``M`` array with ones on diagonal ``k`` (above the main one for k > 0)."""
    rows, cols = _rows_cols(N, M, "jnp.eye")
    dtype = _default_dtype(dtype, "eye")
    out = _mask_matrix(_offset(k, rows, cols), rows=rows, cols=cols, dtype=dtype, compare=eq)
    if device is not None:
        out = asarray(out, device=device)
    return out


def identity(n, dtype=None):
    """The ``n`` x ``n`` identity matrix."""
    return eye(n, dtype=_default_dtype(dtype, "identity"))


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below diagonal ``k``, zeros above."""
    rows, cols = _rows_cols(N, M, "jnp.tri")
    dtype = _default_dtype(dtype, "tri")
    return _mask_matrix(_offset(k, rows, cols), rows=rows, cols=cols, dtype=dtype, compare=le)


def _triangle(fun_name, m, k, compare):
    check_arraylike(fun_name, m)
    m = to_array(m)
    if m.ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{fun_name} must be at least 2D")
    rows, cols = m.shape[-2:]
    return _select_triangle(m, _offset(k, rows, cols), compare=compare)


@partial(jit, static_argnames=("compare",))
def _select_triangle(m, k, *, compare):
    rows, cols = m.shape[-2:]
    mask = lax.broadcast_in_dim(
        _offset_mask(rows, cols, k, compare), m.shape, (m.ndim - 2, m.ndim - 1)
    )
    return lax.select(mask, m, lax.full_like(m, 0))


def tril(m, k=0):
    """``m`` (at least 2-D) with the elements above diagonal ``k`` of its last two axes
    set to zero."""
    return _triangle("tril", m, k, le)


def triu(m, k=0):
    """``m`` with the elements below diagonal ``k`` of its last two axes set to zero."""
    return _triangle("triu", m, k, ge)


@partial(jit, static_argnames=("k",))
def _diagonal_of_matrix(x, k: int):
    rows, cols = x.shape
    row0, col0 = (0, k) if k >= 0 else (-k, 0)
    length = max(0, min(rows - row0, cols - col0))
    block = lax.slice(x, (row0, col0), (row0 + length, col0 + length))
    # In the flattened square block, the diagonal is every (length + 1)-th element.
    flat = lax.reshape(block, (length * length,))
    return lax.slice(flat, (0,), (length * length,), (length + 1,))


@partial(jit, static_argnames=("k",))
def _matrix_with_diagonal(v, k: int):
    n = v.shape[0] + abs(k)
    padded = lax.pad(v, lax.full((), 0, v.dtype), [(0, abs(k), 0)])
    # Row i holds v[i] at column i + k (k >= 0); column j holds v[j] at row j - k (k < 0).
    values = lax.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    mask = _offset_mask(n, n, np.int32(k), eq)
    return lax.select(mask, values, lax.full_like(values, 0))


def diag(v, k=0):
    """For 1-D ``v``, a square matrix with ``v`` on diagonal ``k``; for 2-D ``v``, its
    diagonal ``k``."""
    v = from_jax_array(v)
    check_arraylike("diag", v)
    v = to_array(v)
    k = operator.index(k)
    if v.ndim == 1:
        return _matrix_with_diagonal(v, k)
    if v.ndim == 2:
        return _strong(_diagonal_of_matrix(v, k))  # JAX drops the weak type here
    raise ValueError("diag input must be 1d or 2d")


def diagflat(v, k=0):
    """A square matrix with the flattened ``v`` on diagonal ``k``."""
    check_arraylike("diagflat", v)
    v = to_array(v)
    return _strong(diag(lax.reshape(v, (v.size,)), k))


def _strong(x):
    return lax.convert_element_type(x, x.dtype) if x.weak_type else x


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-D ``x``: columns ``x ** (N - 1)``, ..., ``x ** 0``
    (the other way round with ``increasing``); ``N`` defaults to ``len(x)``."""
    check_arraylike("vander", x)
    x = to_array(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = x.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    return _vander(x, n=n, increasing=bool(increasing))


@partial(jit, static_argnames=("n", "increasing"))
def _vander(x, *, n, increasing):
    powers = lax.iota(x.dtype, n)
    if not increasing:
        powers = lax.rev(powers, (0,))
    return lax.expand_dims(x, (1,)) ** lax.expand_dims(powers, (0,))
