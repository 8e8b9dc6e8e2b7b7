"""``lu``: P·A = L·U with partial pivoting (LAPACK ``getrf``), and
``lu_pivots_to_permutation``.

``lu_p`` returns the packed factors (L below the diagonal with an implied unit diagonal,
U on and above it), the 0-based pivots (row ``i`` was swapped with row ``pivots[i]``)
and the permutation those swaps make. Matrices LAPACK rejects give NaN; singular
matrices are factored (U has a zero on its diagonal). On GPUs: cuSOLVER's ``getrf`` and
the plugin's ``cu_lu_pivots_to_permutation`` (``_gpu_solver``).
"""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters import ad
from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo
from lamina.ir import ShapedArray, dtypes
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import (
    add,
    bitwise_and,
    broadcast_in_dim,
    broadcasted_iota,
    convert_element_type,
    eq,
    ge,
)
from lamina.lax.base.reshaping import pad, slice_in_dim
from lamina.lax.linalg import _gpu_solver, _lapack, matrix_algebra
from lamina.lax.linalg._permutation import pivots_to_permutation
from lamina.lax.linalg.batch_sharding import def_batch_sharding
from lamina.lax.linalg.triangular_solve import triangular_solve

__all__ = ["lu", "lu_p", "lu_pivots_to_permutation", "lu_pivots_to_permutation_p"]

_I32 = np.dtype(np.int32)


def _lu_abstract_eval(x):
    if x.ndim < 2:
        raise TypeError(f"Input 0 to lu must have rank at least 2, but got shape={x.shape}")
    *batch, m, n = x.shape
    return [
        ShapedArray(x.shape, x.dtype),
        ShapedArray((*batch, min(m, n)), _I32),
        ShapedArray((*batch, m), _I32),
    ]


def _lu_lowering(ctx, x):
    aval = ctx.avals_in[0]
    piv_aval = ctx.avals_out[1]
    *batch, m, n = aval.shape
    nb = len(batch)
    factors, pivots, info = _lapack.custom_call(
        _lapack.lapack_target("getrf", aval.dtype),
        [x],
        [aval],
        [aval, piv_aval, ShapedArray(tuple(batch), _I32)],
        num_batch_dims=nb,
        aliases={0: 0},
        matrix_results=[True, False, False],
    )
    pivots = hlo.subtract(pivots, _lapack.constant(1, _I32, piv_aval.shape))
    ok = _lapack.info_ok(info, tuple(batch), equal=False)
    factors = _lapack.nan_where_failed(ok, factors, aval, nb)
    perm = pivots_to_permutation(pivots, batch, min(m, n), m)
    return [factors, pivots, perm]


def _lu_gpu_lowering(ctx, x):
    aval = ctx.avals_in[0]
    piv_aval, perm_aval = ctx.avals_out[1:]
    batch = aval.shape[:-2]
    factors, pivots, info = _gpu_solver.custom_call(
        _gpu_solver.solver(ctx, "getrf"),
        [x],
        [aval],
        [aval, piv_aval, ShapedArray(batch, _I32)],
        aliases={0: 0},
    )
    pivots = hlo.subtract(pivots, _lapack.constant(1, _I32, piv_aval.shape))
    ok = _lapack.info_ok(info, batch, equal=False)
    factors = _lapack.nan_where_failed(ok, factors, aval, len(batch))
    return [factors, pivots, _gpu_permutation(ctx, pivots, piv_aval, perm_aval)]


def _gpu_permutation(ctx, pivots, piv_aval, perm_aval):
    (perm,) = _gpu_solver.custom_call(
        _gpu_solver.target(ctx, "_lu_pivots_to_permutation"),
        [pivots],
        [piv_aval],
        [perm_aval],
        column_major=False,
        num_non_batch_dims=1,
    )
    return perm


lu_p = standard_primitive("lu", _lu_abstract_eval, _lu_lowering, "cpu")
def_batch_sharding(lu_p, (2,))
lu_p.def_lowering(_lu_gpu_lowering, "gpu")
lu_p.multiple_results = True


def permutation_matrix(perm, dtype):
    """P with P[..., i, j] = 1 where perm[..., i] == j, so (P·A)[i] = A[perm[i]]."""
    shape = (*aval_of(perm).shape, aval_of(perm).shape[-1])
    nd = len(shape)
    rows = broadcast_in_dim(perm, shape, tuple(range(nd - 1)))
    cols = broadcasted_iota(np.int32, shape, nd - 1)
    return convert_element_type(eq(rows, cols), dtype)


def _square_block(x, rows: int, cols: int):
    """``x`` (..., m, n) cut or zero-padded to (..., rows, cols)."""
    nd = aval_of(x).ndim
    for axis, size in ((nd - 2, rows), (nd - 1, cols)):
        have = aval_of(x).shape[axis]
        if have > size:
            x = slice_in_dim(x, 0, size, axis=axis)
        elif have < size:
            config = [(0, 0, 0)] * nd
            config[axis] = (0, size - have, 0)
            x = pad(x, np.zeros((), aval_of(x).dtype), config)
    return x


def _unit_tail(shape, k: int, dtype):
    """The identity on the trailing diagonal entries from index ``k`` on, zero elsewhere."""
    nd = len(shape)
    rows = broadcasted_iota(np.int32, shape, nd - 2)
    cols = broadcasted_iota(np.int32, shape, nd - 1)
    on = bitwise_and(eq(rows, cols), ge(rows, np.int32(k)))
    return convert_element_type(on, dtype)


def _lu_jvp(primals, tangents):
    """With P·A = L·U (L m×k unit lower, U k×n upper, k = min(m, n)), extend L and U to
    square invertible L̃ (m×m) and Ũ (n×n) with identity blocks; then
    X = L̃⁻¹·P·dA·Ũ⁻¹ holds L̃⁻¹·dL below its diagonal and dU·Ũ⁻¹ on and above it."""
    (a,), (a_dot,) = primals, tangents
    factors, pivots, perm = lu_p.bind(a)
    int_zeros = [ad.Zero(ad.tangent_aval(aval_of(v))) for v in (pivots, perm)]
    if ad.is_zero(a_dot):
        return [factors, pivots, perm], [ad.Zero(ad.tangent_aval(aval_of(factors))), *int_zeros]

    *batch, m, n = aval_of(a).shape
    k = min(m, n)
    dtype = aval_of(a).dtype
    permuted = matrix_algebra.matmul(permutation_matrix(perm, dtype), ad.instantiate_zeros(a_dot))
    lower = add(
        matrix_algebra.tril(_square_block(factors, m, m), -1), _unit_tail((*batch, m, m), 0, dtype)
    )
    upper = add(
        matrix_algebra.triu(_square_block(factors, n, n)), _unit_tail((*batch, n, n), k, dtype)
    )
    x = triangular_solve(lower, permuted, left_side=True, lower=True, unit_diagonal=True)
    x = triangular_solve(upper, x, left_side=False, lower=False)
    l_dot = matrix_algebra.matmul(lower, _square_block(matrix_algebra.tril(x, -1), m, m))
    u_dot = matrix_algebra.matmul(_square_block(matrix_algebra.triu(x), n, n), upper)
    factors_dot = add(
        matrix_algebra.tril(_square_block(l_dot, m, n), -1),
        matrix_algebra.triu(_square_block(u_dot, m, n)),
    )
    return [factors, pivots, perm], [factors_dot, *int_zeros]


lu_p.def_jvp(_lu_jvp)


def _lu_batching(axis_data, vals, dims):
    (x,) = matrix_algebra.move_batch_front(axis_data, vals, dims)
    return lu_p.bind(x), [0, 0, 0]


lu_p.def_batching(_lu_batching)


def lu(x):
    """The LU decomposition with partial pivoting of each matrix in ``x``: returns
    ``(lu, pivots, permutation)`` with ``x[permutation] = L·U`` (L unit lower
    triangular, packed below ``lu``'s diagonal; U on and above it)."""
    check = matrix_algebra.check_rank("lu", x)
    del check
    return tuple(lu_p.bind(x))


def _perm_abstract_eval(pivots, *, permutation_size):
    if pivots.ndim < 1 or not dtypes.issubdtype(pivots.dtype, np.integer):
        raise ValueError(
            "Argument to lu_pivots_to_permutation must have rank >= 1 and an integer "
            f"dtype, got shape={pivots.shape} and dtype={pivots.dtype}"
        )
    if permutation_size < pivots.shape[-1]:
        raise ValueError(
            f"Output permutation size {permutation_size} has to exceed the trailing "
            f"dimension of the pivots. Got pivots size {pivots.shape[-1]}"
        )
    return ShapedArray((*pivots.shape[:-1], permutation_size), _I32)


def _perm_lowering(ctx, pivots, *, permutation_size):
    aval = ctx.avals_in[0]
    pivots = mb.convert(pivots, aval, aval.update(dtype=_I32))
    return [pivots_to_permutation(pivots, aval.shape[:-1], aval.shape[-1], permutation_size)]


def _perm_gpu_lowering(ctx, pivots, *, permutation_size):
    return [_gpu_permutation(ctx, pivots, ctx.avals_in[0], ctx.avals_out[0])]


lu_pivots_to_permutation_p = standard_primitive(
    "lu_pivots_to_permutation", _perm_abstract_eval, _perm_lowering
)
def_batch_sharding(lu_pivots_to_permutation_p, (1,))
lu_pivots_to_permutation_p.def_lowering(_perm_gpu_lowering, "gpu")


def _perm_batching(axis_data, vals, dims, *, permutation_size):
    (pivots,) = matrix_algebra.move_batch_front(axis_data, vals, dims)
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=permutation_size), 0


lu_pivots_to_permutation_p.def_batching(_perm_batching)


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation of ``0..permutation_size-1`` that LAPACK-style ``pivots`` (row
    ``i`` swapped with row ``pivots[i]``, in order) make."""
    return lu_pivots_to_permutation_p.bind(
        pivots, permutation_size=operator.index(permutation_size)
    )
