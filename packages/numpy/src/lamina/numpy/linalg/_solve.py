"""Solves and determinants through the LU factorization: ``solve`` (differentiated as
a linear problem through ``custom_linear_solve``, so gradients reuse the factors),
``inv``, ``det`` (with a derivative that stays finite at singular matrices) and
``slogdet``."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from lamina import lax
from lamina.interpreters import custom_jvp, stop_gradient
from lamina.numpy.base.arguments import aval_of, promote_dtypes_inexact, to_array
from lamina.numpy.linalg._operands import (
    adjoint,
    as_matrix,
    broadcast_batch,
    diagonal,
    eye_like,
    is_complex,
    matmul,
    scalar,
)

__all__ = ["SlogdetResult", "det", "inv", "slogdet", "solve"]


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def _take_rows(b, rows):
    """``b[..., rows[...], :]``: the rows of each matrix of ``b`` in the order ``rows``."""
    nd = aval_of(b).ndim
    batch = tuple(range(nd - 2))
    dims = lax.GatherDimensionNumbers(
        offset_dims=(nd - 1,),
        collapsed_slice_dims=(nd - 2,),
        start_index_map=(nd - 2,),
        operand_batching_dims=batch,
        start_indices_batching_dims=batch,
    )
    sizes = (*(1 for _ in batch), 1, aval_of(b).shape[-1])
    index = lax.expand_dims(rows, (nd - 1,))
    return lax.gather(b, index, dims, sizes, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _inverse_permutation(permutation):
    last = aval_of(permutation).ndim - 1
    positions = lax.broadcasted_iota(np.int32, aval_of(permutation).shape, last)
    return lax.sort_key_val(permutation, positions, dimension=last)[1]


def _lu_solve(lu, permutation, b, transpose: bool):
    """X with A·X = b (or Aᵀ·X = b) where A[perm] = L·U, for b of shape (..., n, k)."""
    tri = lax.linalg.triangular_solve
    if not transpose:
        x = tri(lu, _take_rows(b, permutation), left_side=True, lower=True, unit_diagonal=True)
        return tri(lu, x, left_side=True, lower=False)
    x = tri(lu, b, left_side=True, lower=False, transpose_a=True)
    x = tri(lu, x, left_side=True, lower=True, transpose_a=True, unit_diagonal=True)
    return _take_rows(x, _inverse_permutation(permutation))


def _check_solve_shapes(a_shape, b_shape):
    vector = len(b_shape) == 1
    if vector and b_shape[0] == a_shape[-1]:
        return True
    if not vector and len(b_shape) >= 2 and b_shape[-2] == a_shape[-1]:
        return False
    hint = ""
    if len(b_shape) == len(a_shape) - 1 and b_shape[-1] == a_shape[-1]:
        hint = (
            " Prior to JAX v0.5.0, this would have been treated as a batched 1-dimensional "
            "solve. To recover this behavior, use solve(a, b[..., None]).squeeze(-1)."
        )
    raise ValueError(f"Invalid shapes for solve: {a_shape}, {b_shape}.{hint}")


def solve(a, b):
    """x with a·x = b; ``b`` is a vector (ndim 1) or a batch of matrices (..., n, k)."""
    a = as_matrix("solve", a, square=True)
    a, b = promote_dtypes_inexact(a, to_array(b))
    a_shape = aval_of(a).shape
    vector = _check_solve_shapes(a_shape, aval_of(b).shape)
    if vector:
        b = lax.broadcast_in_dim(b, (*a_shape[:-1], 1), (len(a_shape) - 2,))
    a, b = broadcast_batch(a, b, 2, 2)
    lu, _, permutation = lax.linalg.lu(stop_gradient(a))
    x = lax.custom_linear_solve(
        lambda x: matmul(a, x),
        b,
        solve=lambda _, y: _lu_solve(lu, permutation, y, transpose=False),
        transpose_solve=lambda _, y: _lu_solve(lu, permutation, y, transpose=True),
    )
    return lax.squeeze(x, (aval_of(x).ndim - 1,)) if vector else x


def inv(a):
    """The inverse of each square matrix in ``a``."""
    a = as_matrix("inv", a, square=True)
    return solve(a, eye_like(a))


def _unit(d):
    """d/|d| for complex entries (1 where d is 0), sign(d) for real ones."""
    if not is_complex(d):
        return lax.sign(d)
    absd = lax.abs(d)
    unit = lax.div(d, lax.convert_element_type(absd, aval_of(d).dtype))
    return lax.select_n(lax.eq(absd, scalar(0, absd)), unit, lax.full_like(unit, 1))


def _lu_factors(a):
    """The diagonal of U and the sign of the row permutation, with a[perm] = L·U."""
    lu, pivots, _ = lax.linalg.lu(a)
    last = aval_of(pivots).ndim - 1
    swapped = lax.ne(pivots, lax.broadcasted_iota(np.int32, aval_of(pivots).shape, last))
    swaps = lax.reduce_sum(lax.convert_element_type(swapped, np.int32), (last,))
    parity = 1 - 2 * lax.rem(swaps, np.int32(2))
    return diagonal(lu), lax.convert_element_type(parity, aval_of(a).dtype)


def _slogdet_from_diagonal(d, sign):
    last = aval_of(d).ndim - 1
    absd = lax.abs(d)
    sign = lax.mul(sign, lax.reduce_prod(_unit(d), (last,)))
    logabs = lax.reduce_sum(lax.log(absd), (last,))
    singular = lax.reduce_or(lax.eq(absd, scalar(0, absd)), (last,))
    sign = lax.select_n(singular, sign, lax.full_like(sign, 0))
    logabs = lax.select_n(singular, logabs, lax.full_like(logabs, -np.inf))
    return sign, logabs


def _slogdet_value(a, use_qr: bool):
    if use_qr:
        q, r = lax.linalg.qr(a, full_matrices=False)
        d_q, parity_q = _lu_factors(q)
        sign_q = lax.mul(parity_q, lax.reduce_prod(d_q, (aval_of(d_q).ndim - 1,)))
        return _slogdet_from_diagonal(diagonal(r), sign_q)
    d, parity = _lu_factors(a)
    return _slogdet_from_diagonal(d, parity)


def _slogdet_jvp(use_qr, primals, tangents):
    (a,), (da,) = primals, tangents
    sign, logabs = _slogdet_value(a, use_qr)
    trace = lax.reduce_sum(diagonal(solve(a, da)), (aval_of(a).ndim - 2,))
    dlog = lax.real(trace) if is_complex(trace) else trace
    if is_complex(a):
        dsign = lax.mul(sign, lax.complex(lax.full_like(dlog, 0), lax.imag(trace)))
    else:
        dsign = lax.full_like(sign, 0)
    return (sign, logabs), (dsign, dlog)


_slogdet = custom_jvp(_slogdet_value, nondiff_argnums=(1,))
_slogdet.defjvp(_slogdet_jvp)


def slogdet(a, *, method=None):
    """``SlogdetResult(sign, logabsdet)`` of each square matrix; ``method`` is "lu"
    (the default) or "qr"."""
    a = as_matrix("slogdet", a, square=True)
    if method not in (None, "lu", "qr"):
        raise ValueError(
            f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'."
        )
    return SlogdetResult(*_slogdet(a, method == "qr"))


def _all_but_one_products(s):
    """For each i, the product of every s_j with j != i (prefix times suffix products)."""
    last = aval_of(s).ndim - 1
    n = aval_of(s).shape[-1]
    ones = lax.full_like(lax.slice_in_dim(s, 0, 1, axis=last), 1)
    before = lax.concatenate([ones, lax.slice_in_dim(s, 0, n - 1, axis=last)], last)
    after = lax.concatenate([lax.slice_in_dim(s, 1, n, axis=last), ones], last)
    return lax.mul(lax.cumprod(before, axis=last), lax.cumprod(after, axis=last, reverse=True))


def _det_value(a):
    d, parity = _lu_factors(a)
    return lax.mul(parity, lax.reduce_prod(d, (aval_of(d).ndim - 1,)))


def _adjugate(a):
    """adj(a), with d det(a) = trace(adj(a)·da), from the SVD a = U·S·Vᴴ:
    adj(a) = det(U)·det(Vᴴ)·V·diag(∏_{j≠i} s_j)·Uᴴ, which stays finite (and right) for
    singular matrices, where a⁻¹ does not exist."""
    u, s, vh = lax.linalg.svd(a, full_matrices=False)
    last = aval_of(s).ndim - 1
    others = lax.convert_element_type(_all_but_one_products(s), aval_of(a).dtype)
    adj = matmul(lax.mul(adjoint(vh), lax.expand_dims(others, (last,))), adjoint(u))
    phase = lax.mul(_det_value(u), _det_value(vh))
    return lax.mul(adj, lax.expand_dims(phase, (last, last + 1)))


def _det_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    nd = aval_of(a).ndim
    adj_t = lax.transpose(_adjugate(a), (*range(nd - 2), nd - 1, nd - 2))
    return _det(a), lax.reduce_sum(lax.mul(adj_t, da), (nd - 2, nd - 1))


_det = custom_jvp(_det_value)
_det.defjvp(_det_jvp)


def det(a):
    """The determinant of each square matrix in ``a``."""
    return _det(as_matrix("det", a, square=True, label="_det()"))
