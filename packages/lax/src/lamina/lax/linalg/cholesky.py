"""``cholesky``: A = L·Lᴴ for Hermitian positive-definite A (LAPACK ``potrf``).

``cholesky_p`` returns LAPACK's factor with the strict upper triangle as it came in;
the function ``cholesky`` symmetrizes its input first (unless told not to) and keeps
the lower triangle, as JAX traces it. Matrices that are not positive definite give NaN.
On GPUs it is cuSOLVER's ``potrf`` (``_gpu_solver``).
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad
from lamina.ir import ShapedArray
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import (
    add,
    broadcast_in_dim,
    broadcasted_iota,
    convert_element_type,
    div,
    eq,
)
from lamina.lax.linalg import _gpu_solver, _lapack, matrix_algebra
from lamina.lax.linalg.batch_sharding import def_batch_sharding
from lamina.lax.linalg.triangular_solve import triangular_solve

__all__ = ["cholesky", "cholesky_p"]


def _abstract_eval(x):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"The input to cholesky must have shape [..., n, n], got shape {x.shape}")
    return ShapedArray(x.shape, x.dtype)


def _lowering(ctx, x):
    aval = ctx.avals_in[0]
    nb = aval.ndim - 2
    batch = aval.shape[:nb]
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    factor, info = _lapack.custom_call(
        _lapack.lapack_target("potrf", aval.dtype),
        [x],
        [aval],
        [aval, info_aval],
        num_batch_dims=nb,
        config={"uplo": _lapack.u8("L")},
        aliases={0: 0},
        matrix_results=[True, False],
    )
    ok = _lapack.info_ok(info, batch)
    return [_lapack.nan_where_failed(ok, factor, aval, nb)]


def _gpu_lowering(ctx, x):
    aval = ctx.avals_in[0]
    nb = aval.ndim - 2
    batch = aval.shape[:nb]
    factor, info = _gpu_solver.custom_call(
        _gpu_solver.solver(ctx, "potrf"),
        [x],
        [aval],
        [aval, ShapedArray(batch, np.dtype(np.int32))],
        config={"lower": True},
        aliases={0: 0},
    )
    ok = _lapack.info_ok(info, batch)
    return [_lapack.nan_where_failed(ok, factor, aval, nb)]


cholesky_p = standard_primitive("cholesky", _abstract_eval, _lowering, "cpu")
def_batch_sharding(cholesky_p, (2,))
cholesky_p.def_lowering(_gpu_lowering, "gpu")


def _jvp(primals, tangents):
    """L̇ = L·Φ(L⁻¹·Ȧ·L⁻ᴴ), Φ keeping the strict lower triangle and half the diagonal."""

    (x,), (x_dot,) = primals, tangents
    factor = matrix_algebra.tril(cholesky_p.bind(x))
    if ad.is_zero(x_dot):
        return factor, ad.Zero(ad.tangent_aval(aval_of(factor)))
    x_dot = ad.instantiate_zeros(x_dot)
    right = triangular_solve(
        factor, x_dot, left_side=False, lower=True, transpose_a=True, conjugate_a=True
    )
    middle = triangular_solve(factor, right, left_side=True, lower=True)
    return factor, matrix_algebra.matmul(factor, _phi(middle))


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved (JAX's arrangement)."""
    lower = matrix_algebra.tril(x)
    aval = aval_of(x)
    n = aval.shape[-1]
    rows = add(broadcasted_iota(np.int32, (n, n), 0), np.int32(0))
    eye = convert_element_type(eq(rows, broadcasted_iota(np.int32, (n, n), 1)), aval.dtype)
    two_diag = add(np.array(1, aval.dtype), eye)
    if aval.ndim > 2:
        two_diag = broadcast_in_dim(
            two_diag, (1,) * (aval.ndim - 2) + (n, n), (aval.ndim - 2, aval.ndim - 1)
        )
    return div(lower, two_diag)


cholesky_p.def_jvp(_jvp)


def _batching(axis_data, vals, dims):
    (x,) = matrix_algebra.move_batch_front(axis_data, vals, dims)
    return cholesky_p.bind(x), 0


cholesky_p.def_batching(_batching)


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor L of each matrix in ``x`` (``x = L·Lᴴ``); NaN where
    ``x`` is not positive definite. With ``symmetrize_input``, ``(x + xᴴ)/2`` is
    factored, which makes gradients symmetric."""
    x = matrix_algebra.as_inexact(x, "cholesky")
    if symmetrize_input:
        x = matrix_algebra.symmetrize(x)
    return matrix_algebra.tril(cholesky_p.bind(x))
