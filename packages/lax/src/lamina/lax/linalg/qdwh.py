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
from lamina.lax.base.operands import aval_of
from lamina.lax.linalg import _ops

__all__ = ["qdwh"]


def _frobenius(x):
    lax = _ops.lax()
    squares = lax.real(lax.mul(x, lax.conj(x))) if _ops.is_complex(x) else lax.mul(x, x)
    return lax.sqrt(lax.reduce_sum(squares, tuple(range(aval_of(x).ndim))))


def _weights(l):
    """Halley's weights (a, b, c) for the current lower bound ``l``."""
    lax = _ops.lax()
    one = np.asarray(1, aval_of(l).dtype)
    l2 = lax.mul(l, l)
    gamma = lax.cbrt(lax.div(lax.mul(np.asarray(4, l2.dtype), lax.sub(one, l2)), lax.mul(l2, l2)))
    root = lax.sqrt(lax.add(one, gamma))
    inner = lax.add(
        lax.sub(np.asarray(8, l2.dtype), lax.mul(np.asarray(4, l2.dtype), gamma)),
        lax.div(lax.mul(np.asarray(8, l2.dtype), lax.sub(np.asarray(2, l2.dtype), l2)),
                lax.mul(l2, root)),
    )  # fmt: skip
    a = lax.add(root, lax.mul(np.asarray(0.5, l2.dtype), lax.sqrt(inner)))
    b = lax.div(lax.mul(lax.sub(a, one), lax.sub(a, one)), np.asarray(4, l2.dtype))
    c = lax.sub(lax.add(a, b), one)
    return a, b, c


def _qr_step(u, a, b, c):
    lax = _ops.lax()
    m, n = aval_of(u).shape
    dtype = aval_of(u).dtype
    sqrt_c = lax.convert_element_type(lax.sqrt(c), dtype)
    stacked = lax.concatenate([lax.mul(u, sqrt_c), _ops.eye_like(lax.full((n, n), 0, dtype))], 0)
    q, _ = lax.linalg.qr(stacked, full_matrices=False)
    q1, q2 = lax.slice(q, (0, 0), (m, n)), lax.slice(q, (m, 0), (m + n, n))
    e = lax.div(b, c)
    scale = lax.convert_element_type(lax.div(lax.sub(a, e), lax.sqrt(c)), dtype)
    return lax.add(lax.mul(u, lax.convert_element_type(e, dtype)),
                   lax.mul(_ops.matmul(q1, _ops.adjoint(q2)), scale))  # fmt: skip


def _cholesky_step(u, a, b, c):
    lax = _ops.lax()
    n = aval_of(u).shape[1]
    dtype = aval_of(u).dtype
    eye = _ops.eye_like(lax.full((n, n), 0, dtype))
    z = lax.add(eye, lax.mul(_ops.matmul(_ops.adjoint(u), u), lax.convert_element_type(c, dtype)))
    w = lax.linalg.cholesky(z)
    # u·z⁻¹ = ((u w⁻ᴴ) w⁻¹) with z = w·wᴴ (w lower triangular)
    y = lax.linalg.triangular_solve(w, u, left_side=False, lower=True, transpose_a=True,
                                    conjugate_a=True)  # fmt: skip
    y = lax.linalg.triangular_solve(w, y, left_side=False, lower=True)
    e = lax.div(b, c)
    return lax.add(lax.mul(u, lax.convert_element_type(e, dtype)),
                   lax.mul(y, lax.convert_element_type(lax.sub(a, e), dtype)))  # fmt: skip


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """The polar decomposition of the m×n matrix ``x`` (m ≥ n): ``(u, h, num_iters,
    is_converged)`` with x = u·h."""
    lax = _ops.lax()
    x = _ops.as_inexact(x, "qdwh")
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
    safe = lax.select_n(lax.eq(scale, np.asarray(0, real)), scale, np.asarray(1, real))
    u0 = lax.div(x, lax.convert_element_type(safe, dtype))
    l0 = np.asarray(eps, real)

    def keep_going(state):
        # the step can be small while l is still far from 1 (the first steps, from l = eps,
        # barely move the largest singular values), so both must have settled
        _, l, k, change = state
        unsettled = lax.bitwise_or(
            lax.gt(change, tolerance), lax.lt(l, np.asarray(1 - 10 * eps, real))
        )
        return lax.bitwise_and(lax.lt(k, np.int32(max_iterations)), unsettled)

    def step(state):
        u, l, k, _ = state
        a, b, c = _weights(l)
        new = lax.cond(lax.gt(c, np.asarray(100, real)), _qr_step, _cholesky_step, u, a, b, c)
        l2 = lax.mul(l, l)
        l = lax.div(
            lax.mul(l, lax.add(a, lax.mul(b, l2))), lax.add(np.asarray(1, real), lax.mul(c, l2))
        )
        l = lax.min(l, np.asarray(1, real))
        return new, l, lax.add(k, np.int32(1)), _frobenius(lax.sub(new, u))

    init = (u0, l0, np.int32(0), np.asarray(np.inf, real))
    u, _, num_iters, change = lax.while_loop(keep_going, step, init)
    h = _ops.matmul(_ops.adjoint(u), x)
    h = lax.div(lax.add(h, _ops.adjoint(h)), np.asarray(2, dtype))
    return u, h, num_iters, lax.le(change, tolerance)
