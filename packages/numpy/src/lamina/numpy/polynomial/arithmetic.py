"""Polynomials as 1-D coefficient arrays, highest power first (NumPy's ``poly1d``
convention): ``poly``, ``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder``,
``polyint`` and ``polyval`` (``polyfit`` and ``roots`` are in :mod:`.fitting`).
"""

from __future__ import annotations

import math
import operator

import lamina.lax as lax
import numpy as np
from lamina.interpreters import jit
from lamina.ir import dtypes
from lamina.numpy.base.arguments import (
    aval_of,
    check_arraylike,
    promote_dtypes,
    promote_dtypes_inexact,
    to_array,
)
from lamina.numpy.base.static_values import concrete_value
from lamina.numpy.polynomial.fitting import eigvals

__all__ = [
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
]


def _length(x) -> int:
    shape = aval_of(x).shape
    if not shape:
        raise TypeError("len() of unsized object")
    return shape[0]


def _shift_pad(x, before: int, after: int):
    """``x`` padded with zeros along its first axis."""
    config = [(before, after, 0)] + [(0, 0, 0)] * (aval_of(x).ndim - 1)
    return lax.pad(x, lax.full((), 0, aval_of(x).dtype), config)


def _coefficient(x, i: int):
    return lax.index_in_dim(x, i, axis=0, keepdims=False)


def convolve_full(a, b):
    """The full convolution of 1-D ``a`` and ``b`` (polynomial product): the outer
    product with row ``i`` shifted right by ``i`` (padding every row by ``len(a)`` and
    re-reading the flat buffer with rows one shorter), then summed over rows."""
    n, m = _length(a), _length(b)
    products = lax.mul(lax.broadcast_in_dim(a, (n, m), (0,)), lax.broadcast_in_dim(b, (n, m), (1,)))
    zero = lax.full((), 0, aval_of(products).dtype)
    products = lax.pad(products, zero, [(0, 0, 0), (0, n, 0)])
    flat = lax.slice(lax.reshape(products, (n * (n + m),)), (0,), (n * (n + m - 1),))
    return lax.reduce_sum(lax.reshape(flat, (n, n + m - 1)), (0,))


def _at_least_1d(x):
    return lax.reshape(x, (1,)) if aval_of(x).ndim == 0 else x


@jit
def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with roots ``seq_of_zeros`` (for a
    square 2-D array, the characteristic polynomial: its eigenvalues as roots)."""
    check_arraylike("poly", seq_of_zeros)
    (zeros,) = promote_dtypes_inexact(seq_of_zeros)
    zeros = _at_least_1d(zeros)
    shape = aval_of(zeros).shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        zeros = eigvals(zeros)
    if aval_of(zeros).ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dtype = aval_of(zeros).dtype
    coefficients = lax.full((1,), 1, dtype)
    for k in range(aval_of(zeros).shape[0]):
        root = lax.broadcast_in_dim(_coefficient(zeros, k), (k + 2,), ())
        coefficients = lax.sub(
            _shift_pad(coefficients, 0, 1), lax.mul(root, _shift_pad(coefficients, 1, 0))
        )
    return coefficients if shape[0] else lax.full((), 1, dtype)


def _add_aligned(a1, a2):
    """``a1 + a2`` with the shorter padded at the front (its low powers aligned)."""
    n1, n2 = _length(a1), _length(a2)
    if n2 <= n1:
        return a1 + _shift_pad(a2, n1 - n2, 0)
    return a2 + _shift_pad(a1, n2 - n1, 0)


def _require_first_axis(fun_name, *xs):
    for x in xs:
        if aval_of(x).ndim == 0:
            raise IndexError(f"{fun_name}: coefficient arrays must be at least 1-D, got a scalar")


@jit
def polyadd(a1, a2):
    """The sum of two polynomials."""
    check_arraylike("polyadd", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    _require_first_axis("polyadd", a1, a2)
    return _add_aligned(a1, a2)


@jit
def polysub(a1, a2):
    """The difference of two polynomials."""
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    _require_first_axis("polysub", a1, a2)
    return _add_aligned(a1, -a2)


_TRIM_UNDER_JIT = (
    "The error occurred while trimming leading zeros of a polynomial; pass "
    "trim_leading_zeros=False inside jit."
)


def _leading_zeros(x, tol=None) -> int:
    """How many leading coefficients of concrete ``x`` are zero (below ``tol``)."""
    value = concrete_value(x, _TRIM_UNDER_JIT)
    small = np.abs(value) < tol if tol is not None else value == 0
    return len(value) if small.all() else int(np.argmin(small))


@jit
def _polymul_trimmed(a1, a2):
    for x in (a1, a2):
        if aval_of(x).ndim != 1:
            raise ValueError("convolve() only support 1-dimensional inputs.")
    if _length(a1) == 0:
        a1 = lax.full((1,), 0, aval_of(a2).dtype)
    if _length(a2) == 0:
        a2 = lax.full((1,), 0, aval_of(a1).dtype)
    return convolve_full(a1, a2)


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (``trim_leading_zeros`` drops leading zero
    coefficients first, which needs concrete values)."""
    check_arraylike("polymul", a1, a2)
    a1, a2 = promote_dtypes_inexact(a1, a2)
    n1, n2 = _length(a1), _length(a2)
    if trim_leading_zeros and (n1 > 1 or n2 > 1):
        a1 = lax.slice_in_dim(a1, _leading_zeros(a1), n1)
        a2 = lax.slice_in_dim(a2, _leading_zeros(a2), n2)
    return _polymul_trimmed(a1, a2)


@jit
def _polydiv(u, v):
    m, n = _length(u) - 1, _length(v) - 1
    dtype = aval_of(u).dtype
    scale = lax.div(lax.full((), 1, dtype), _coefficient(v, 0))
    quotient = []
    for k in range(m - n + 1):
        d = lax.mul(scale, _coefficient(u, k))
        quotient.append(lax.reshape(d, (1,)))
        step = lax.mul(lax.broadcast_in_dim(d, (n + 1,), ()), v)
        u = lax.sub(u, _shift_pad(step, k, m - n - k))
    return lax.concatenate(quotient, 0) if quotient else lax.full((1,), 0, dtype), u


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of the polynomial division ``u / v`` (the remainder has
    ``len(u)`` coefficients; ``trim_leading_zeros`` drops its leading near-zeros, which
    needs concrete values)."""
    check_arraylike("polydiv", u, v)
    u, v = promote_dtypes_inexact(u, v)
    for x in (u, v):
        _length(x)  # scalars: len()'s TypeError, as in JAX
    q, r = _polydiv(u, v)
    if trim_leading_zeros:
        tol = math.sqrt(float(dtypes.finfo(aval_of(r).dtype).eps))
        r = lax.slice_in_dim(r, _leading_zeros(r, tol), _length(r))
    return q, r


def _falling_factorial(top: np.ndarray, count: int) -> np.ndarray:
    """``top * (top - 1) * ... * (top - count + 1)``, elementwise."""
    out = np.ones(top.shape, np.float64)
    for j in range(count):
        out *= top - j
    return out


def _times_constant(x, constant: np.ndarray):
    return lax.mul(x, to_array(constant.astype(aval_of(x).dtype)))


@jit(static_argnames=("m",))
def polyder(p, m=1):
    """The ``m``-th derivative of polynomial ``p``."""
    check_arraylike("polyder", p)
    m = operator.index(m)
    (p,) = promote_dtypes_inexact(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = _length(p)
    kept = max(n - m, 0)
    powers = np.arange(n - 1, n - 1 - kept, -1, dtype=np.float64)
    return _times_constant(lax.slice_in_dim(p, 0, kept), _falling_factorial(powers, m))


@jit(static_argnames=("m",))
def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of polynomial ``p``, with integration constants
    ``k`` (a scalar, or one per integration; as in NumPy, ``k[0]`` goes with the
    highest power)."""
    m = operator.index(m)
    k = 0 if k is None else k
    check_arraylike("polyint", p, k)
    p, k = promote_dtypes_inexact(p, k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = _at_least_1d(k)
    if aval_of(k).shape == (1,):
        k = lax.broadcast_in_dim(lax.reshape(k, ()), (m,), ())
    if aval_of(k).shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    n = _length(p)
    powers = np.arange(n + m - 1, -1, -1, dtype=np.float64)
    divisors = np.array([math.prod(max(1, int(q) - j) for j in range(m)) for q in powers])
    return lax.div(lax.concatenate([p, k], 0), to_array(divisors.astype(aval_of(p).dtype)))


@jit(static_argnames=("unroll",))
def polyval(p, x, *, unroll=16):
    """Polynomial ``p`` evaluated at ``x`` by Horner's rule (a ``lax.scan`` over the
    coefficients, ``unroll`` steps per iteration); ``p`` may carry trailing axes that
    broadcast with ``x``."""
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(p, x)
    _require_first_axis("polyval", p)
    shape = lax.broadcast_shapes(aval_of(p).shape[1:], aval_of(x).shape)
    init = lax.full(shape, 0, aval_of(x).dtype)

    def step(y, coefficient):
        return y * x + coefficient, None

    y, _ = lax.scan(step, init, p, unroll=unroll)
    return y
