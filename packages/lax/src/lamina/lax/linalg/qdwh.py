"""``qdwh``: the polar decomposition x = u·h (u with orthonormal columns, h Hermitian
positive semi-definite) by the QR-based dynamically weighted Halley iteration of
Nakatsukasa, Bai and Gygi.

Each step maps the singular values of u through a rational function chosen from a
lower bound ``l`` on the smallest one, so all of them reach 1 in about six steps even
for condition numbers near 1/eps. A step uses a QR factorization while the weight ``c``
is large (where forming uᴴu would lose accuracy) and a Cholesky factorization after.
The loop is a ``while_loop``: forward-mode differentiable, as in JAX.
"""

from __future__ import annotations

import numpy as np

from lamina.ir import dtypes
from lamina.lax.base.filling import full
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import (
    add,
    bitwise_and,
    bitwise_or,
    cbrt,
    conj,
    convert_element_type,
    div,
    eq,
    gt,
    le,
    lt,
    mul,
    reduce_sum,
    select_n,
    sqrt,
    sub,
)
from lamina.lax.base.primitives import min as lax_min
from lamina.lax.base.primitives import real as lax_real
from lamina.lax.base.reshaping import concatenate
from lamina.lax.base.reshaping import slice as lax_slice
from lamina.lax.control_flow.cond import cond
from lamina.lax.control_flow.loops import while_loop
from lamina.lax.linalg import matrix_algebra
from lamina.lax.linalg.cholesky import cholesky
from lamina.lax.linalg.qr import qr
from lamina.lax.linalg.triangular_solve import triangular_solve

__all__ = ["qdwh"]


def _frobenius(x):
    squares = lax_real(mul(x, conj(x))) if matrix_algebra.is_complex(x) else mul(x, x)
    return sqrt(reduce_sum(squares, tuple(range(aval_of(x).ndim))))


def _weights(l):
    """Halley's weights (a, b, c) for the current lower bound ``l``."""
    one = np.asarray(1, aval_of(l).dtype)
    l2 = mul(l, l)
    gamma = cbrt(div(mul(np.asarray(4, l2.dtype), sub(one, l2)), mul(l2, l2)))
    root = sqrt(add(one, gamma))
    inner = add(
        sub(np.asarray(8, l2.dtype), mul(np.asarray(4, l2.dtype), gamma)),
        div(mul(np.asarray(8, l2.dtype), sub(np.asarray(2, l2.dtype), l2)),
                mul(l2, root)),
    )  # fmt: skip
    a = add(root, mul(np.asarray(0.5, l2.dtype), sqrt(inner)))
    b = div(mul(sub(a, one), sub(a, one)), np.asarray(4, l2.dtype))
    c = sub(add(a, b), one)
    return a, b, c


def _qr_step(u, a, b, c):
    m, n = aval_of(u).shape
    dtype = aval_of(u).dtype
    sqrt_c = convert_element_type(sqrt(c), dtype)
    stacked = concatenate([mul(u, sqrt_c), matrix_algebra.eye_like(full((n, n), 0, dtype))], 0)
    q, _ = qr(stacked, full_matrices=False)
    q1, q2 = lax_slice(q, (0, 0), (m, n)), lax_slice(q, (m, 0), (m + n, n))
    e = div(b, c)
    scale = convert_element_type(div(sub(a, e), sqrt(c)), dtype)
    return add(mul(u, convert_element_type(e, dtype)),
                   mul(matrix_algebra.matmul(q1, matrix_algebra.adjoint(q2)), scale))  # fmt: skip


def _cholesky_step(u, a, b, c):
    n = aval_of(u).shape[1]
    dtype = aval_of(u).dtype
    eye = matrix_algebra.eye_like(full((n, n), 0, dtype))
    z = add(
        eye,
        mul(matrix_algebra.matmul(matrix_algebra.adjoint(u), u), convert_element_type(c, dtype)),
    )
    w = cholesky(z)
    # u·z⁻¹ = ((u w⁻ᴴ) w⁻¹) with z = w·wᴴ (w lower triangular)
    y = triangular_solve(w, u, left_side=False, lower=True, transpose_a=True,
                                    conjugate_a=True)  # fmt: skip
    y = triangular_solve(w, y, left_side=False, lower=True)
    e = div(b, c)
    return add(mul(u, convert_element_type(e, dtype)),
                   mul(y, convert_element_type(sub(a, e), dtype)))  # fmt: skip


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """The polar decomposition of the m×n matrix ``x`` (m ≥ n): ``(u, h, num_iters,
    is_converged)`` with x = u·h."""
    x = matrix_algebra.as_inexact(x, "qdwh")
    shape = aval_of(x).shape
    if len(shape) != 2:
        raise ValueError(f"The input matrix of shape {shape} must be 2-dimensional.")
    if shape[0] < shape[1]:
        raise ValueError(
            f"The input matrix of shape {shape} must have at least as many rows as columns."
        )
    if dynamic_shape is not None:
        raise NotImplementedError(
            "qdwh(dynamic_shape=...) is for padded TPU inputs; pass x unpadded"
        )
    del is_hermitian  # a symmetric input needs no different treatment here
    dtype = aval_of(x).dtype
    real = np.dtype(dtypes.to_inexact_dtype(np.finfo(dtype).dtype))
    eps = float(np.finfo(real).eps) if eps is None else float(eps)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    tolerance = np.asarray(np.cbrt(eps), real)
    scale = _frobenius(x)
    safe = select_n(eq(scale, np.asarray(0, real)), scale, np.asarray(1, real))
    u0 = div(x, convert_element_type(safe, dtype))
    l0 = np.asarray(eps, real)

    def keep_going(state):
        # the step can be small while l is still far from 1 (the first steps, from l = eps,
        # barely move the largest singular values), so both must have settled
        _, l, k, change = state
        unsettled = bitwise_or(gt(change, tolerance), lt(l, np.asarray(1 - 10 * eps, real)))
        return bitwise_and(lt(k, np.int32(max_iterations)), unsettled)

    def step(state):
        u, l, k, _ = state
        a, b, c = _weights(l)
        new = cond(gt(c, np.asarray(100, real)), _qr_step, _cholesky_step, u, a, b, c)
        l2 = mul(l, l)
        l = div(mul(l, add(a, mul(b, l2))), add(np.asarray(1, real), mul(c, l2)))
        l = lax_min(l, np.asarray(1, real))
        return new, l, add(k, np.int32(1)), _frobenius(sub(new, u))

    init = (u0, l0, np.int32(0), np.asarray(np.inf, real))
    u, _, num_iters, change = while_loop(keep_going, step, init)
    h = matrix_algebra.matmul(matrix_algebra.adjoint(u), x)
    h = div(add(h, matrix_algebra.adjoint(h)), np.asarray(2, dtype))
    return u, h, num_iters, le(change, tolerance)
