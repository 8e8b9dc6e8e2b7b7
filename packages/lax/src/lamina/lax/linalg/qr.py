"""``qr``: A = Q·R (LAPACK ``geqrf`` then ``orgqr``/``ungqr``), and
``householder_product`` (Q from Householder reflectors and their scales).

``qr_p`` has JAX's params ``full_matrices``, ``pivoting`` and ``use_magma``. Q is
m×m (``full_matrices``) or m×min(m, n); R is m×n or min(m, n)×n. On GPUs the same
steps use cuSOLVER's ``geqrf``/``orgqr`` and the plugin's hybrid ``geqp3``
(``_gpu_solver``).
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad
from lamina.interpreters.mlir import hlo
from lamina.ir import ShapedArray
from lamina.lax.base.filling import full_like
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import add, broadcast_in_dim, broadcasted_iota, mul, sub
from lamina.lax.base.reshaping import concatenate, slice_in_dim
from lamina.lax.linalg import _gpu_solver, _lapack, matrix_algebra
from lamina.lax.linalg.batch_sharding import def_batch_sharding
from lamina.lax.linalg.decompositions import solve_with_lu
from lamina.lax.linalg.triangular_solve import triangular_solve
from lamina.lax.sorting import sort_key_val

__all__ = ["householder_product", "householder_product_p", "qr", "qr_p"]


def _qr_abstract_eval(x, *, pivoting, full_matrices, use_magma):
    if x.ndim < 2:
        raise TypeError(f"Input 0 to qr must have rank at least 2, but got shape={x.shape}")
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    outs = [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]
    if pivoting:
        outs.append(ShapedArray((*batch, n), np.dtype(np.int32)))
    return outs


def _geqp3(ctx, x, aval, use_magma):
    """``geqp3``: QR with column pivoting; the pivots come back 0-based."""
    *batch, m, n = aval.shape
    taus_aval = ShapedArray((*batch, min(m, n)), aval.dtype)
    jpvt_aval = ShapedArray((*batch, n), np.dtype(np.int32))
    start = _lapack.constant(0, np.int32, jpvt_aval.shape)  # 0: every column is free
    if ctx.platform != "cpu":
        _gpu_solver.initialize_hybrid_kernels()
        magma = "auto" if use_magma is None else ("on" if use_magma else "off")
        factors, jpvt, taus = _gpu_solver.custom_call(
            _gpu_solver.target(ctx, "hybrid_geqp3"), [x, start], [aval, jpvt_aval],
            [aval, jpvt_aval, taus_aval], config={"magma": magma}, aliases={0: 0, 1: 1},
        )  # fmt: skip
    else:
        factors, jpvt, taus = _lapack.custom_call(
            _lapack.lapack_target("geqp3", aval.dtype), [x, start], [aval, jpvt_aval],
            [aval, jpvt_aval, taus_aval], num_batch_dims=len(batch), aliases={0: 0, 1: 1},
            matrix_operands=[True, False], matrix_results=[True, False, False],
        )  # fmt: skip
    jpvt = hlo.subtract(jpvt, _lapack.constant(1, np.int32, jpvt_aval.shape))
    return factors, taus, taus_aval, jpvt


def _geqrf(ctx, x, aval):
    *batch, m, n = aval.shape
    taus_aval = ShapedArray((*batch, min(m, n)), aval.dtype)
    if ctx.platform != "cpu":
        factors, taus = _gpu_solver.custom_call(
            _gpu_solver.solver(ctx, "geqrf"), [x], [aval], [aval, taus_aval], aliases={0: 0}
        )
        return factors, taus, taus_aval
    factors, taus = _lapack.custom_call(
        _lapack.lapack_target("geqrf", aval.dtype),
        [x],
        [aval],
        [aval, taus_aval],
        num_batch_dims=len(batch),
        aliases={0: 0},
        matrix_results=[True, False],
    )
    return factors, taus, taus_aval


def _orgqr(ctx, a, a_aval, taus, taus_aval):
    if ctx.platform != "cpu":
        (q,) = _gpu_solver.custom_call(
            _gpu_solver.solver(ctx, "orgqr"), [a, taus], [a_aval, taus_aval], [a_aval],
            aliases={0: 0},
        )  # fmt: skip
        return q
    routine = "ungqr" if np.dtype(a_aval.dtype).kind == "c" else "orgqr"
    (q,) = _lapack.custom_call(
        _lapack.lapack_target(routine, a_aval.dtype),
        [a, taus],
        [a_aval, taus_aval],
        [a_aval],
        num_batch_dims=a_aval.ndim - 2,
        aliases={0: 0},
        matrix_operands=[True, False],
    )
    return q


def _resize_columns(x, aval, cols):
    """The first ``cols`` columns of ``x``, or ``x`` padded with zero columns."""
    *batch, m, n = aval.shape
    out_aval = aval.update(shape=(*batch, m, cols))
    nd = aval.ndim
    if cols < n:
        return hlo.slice(x, [0] * nd, [*batch, m, cols], [1] * nd), out_aval
    if cols > n:
        zero = _lapack.constant(0, aval.dtype)
        high = [0] * (nd - 1) + [cols - n]
        return hlo.pad(x, zero, [0] * nd, high, [0] * nd), out_aval
    return x, out_aval


def _qr_lowering(ctx, x, *, pivoting, full_matrices, use_magma):
    aval = ctx.avals_in[0]
    q_aval, r_aval = ctx.avals_out[:2]
    *batch, m, n = aval.shape
    if pivoting:
        factors, taus, taus_aval, jpvt = _geqp3(ctx, x, aval, use_magma)
    else:
        factors, taus, taus_aval = _geqrf(ctx, x, aval)
    k = q_aval.shape[-1]
    q_in, q_in_aval = _resize_columns(factors, aval, k)
    q = _orgqr(ctx, q_in, q_in_aval, taus, taus_aval)
    r_rows = r_aval.shape[-2]
    nd = aval.ndim
    r = factors
    if r_rows < m:
        r = hlo.slice(factors, [0] * nd, [*batch, r_rows, n], [1] * nd)
    r = _lapack.keep_triangle(r, r_aval, lower=False)
    return [q, r, jpvt] if pivoting else [q, r]


qr_p = standard_primitive("qr", _qr_abstract_eval, _qr_lowering, "cpu")
def_batch_sharding(qr_p, (2,))
qr_p.def_lowering(_qr_lowering, "gpu")
qr_p.multiple_results = True


def _thin_qr_jvp(q, r, x_dot):
    """(dQ, dR) of a thin QR x = q·r with r square and invertible."""

    dx_rinv = triangular_solve(r, x_dot)  # dx · R⁻¹
    qt_dx_rinv = matrix_algebra.matmul(matrix_algebra.adjoint(q), dx_rinv)
    lower = matrix_algebra.tril(qt_dx_rinv, -1)
    omega = sub(lower, matrix_algebra.adjoint(lower))  # skew-Hermitian part of Qᴴ·dQ
    if matrix_algebra.is_complex(q):
        imag_diag = sub(qt_dx_rinv, matrix_algebra.real_part(qt_dx_rinv))
        omega = add(omega, mul(matrix_algebra.eye_like(omega), imag_diag))
    q_dot = add(matrix_algebra.matmul(q, sub(omega, qt_dx_rinv)), dx_rinv)
    r_dot = matrix_algebra.matmul(sub(qt_dx_rinv, omega), r)
    return q_dot, r_dot


def _columns(x, start, stop):
    return slice_in_dim(x, start, stop, axis=aval_of(x).ndim - 1)


def _rows(x, start, stop):
    return slice_in_dim(x, start, stop, axis=aval_of(x).ndim - 2)


def _complete_q_jvp(q, q_dot_thin, n):
    """dQ for the m − n columns a full Q adds to the thin one. They are fixed only up
    to a rotation among themselves; this is the choice JAX 0.10.2 makes, with
    Z = Q₂₁·(Q₁₁ − I)⁻¹ from the blocks of the thin Q (Q₁₁ its top n×n block)."""
    q_thin, q_extra = _columns(q, 0, n), _columns(q, n, aval_of(q).shape[-1])
    m = aval_of(q).shape[-2]
    q11, q21 = _rows(q_thin, 0, n), _rows(q_thin, n, m)
    dq11, dq21 = _rows(q_dot_thin, 0, n), _rows(q_dot_thin, n, m)

    z_h = solve_with_lu(
        matrix_algebra.adjoint(sub(q11, matrix_algebra.eye_like(q11))), matrix_algebra.adjoint(q21)
    )
    z = matrix_algebra.adjoint(z_h)
    correction = matrix_algebra.adjoint(sub(dq21, matrix_algebra.matmul(z, dq11)))
    return sub(
        matrix_algebra.matmul(q_dot_thin, z_h),
        matrix_algebra.matmul(add(q_thin, matrix_algebra.matmul(q_extra, z)), correction),
    )


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
    (x,), (x_dot,) = primals, tangents
    outs = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    q, r = outs[:2]
    zero_p = [ad.Zero(ad.tangent_aval(aval_of(outs[2])))] if pivoting else []
    *_, m, n = aval_of(x).shape
    if ad.is_zero(x_dot):
        return outs, [*(ad.Zero(ad.tangent_aval(aval_of(v))) for v in (q, r)), *zero_p]
    x_dot = ad.instantiate_zeros(x_dot)
    if pivoting:  # x[..., p] = q·r: differentiate the permuted columns
        nd = aval_of(x).ndim
        index = broadcast_in_dim(outs[2], aval_of(x_dot).shape, (*range(nd - 2), nd - 1))
        x_dot = sort_key_val(_inverse(index, nd - 1), x_dot, dimension=nd - 1)[1]
    if m < n:  # x = [x₁ x₂] = q·[r₁ r₂] with x₁ square
        q_dot, r1_dot = _thin_qr_jvp(q, _columns(r, 0, m), _columns(x_dot, 0, m))
        # x₂ = q·r₂, so dr₂ = qᴴ·(dx₂ − dq·r₂)
        x2_dot, r2 = _columns(x_dot, m, n), _columns(r, m, n)
        r2_dot = matrix_algebra.matmul(
            matrix_algebra.adjoint(q), sub(x2_dot, matrix_algebra.matmul(q_dot, r2))
        )
        r_dot = concatenate([r1_dot, r2_dot], aval_of(r).ndim - 1)
        return outs, [q_dot, r_dot, *zero_p]
    if not full_matrices or m == n:
        return outs, [*_thin_qr_jvp(q, r, x_dot), *zero_p]
    q_thin_dot, r_top_dot = _thin_qr_jvp(_columns(q, 0, n), _rows(r, 0, n), x_dot)
    q_dot = concatenate([q_thin_dot, _complete_q_jvp(q, q_thin_dot, n)], aval_of(q).ndim - 1)
    zeros = full_like(_rows(r, n, m), 0)
    r_dot = concatenate([r_top_dot, zeros], aval_of(r).ndim - 2)
    return outs, [q_dot, r_dot, *zero_p]


def _inverse(index, axis):
    """Where each position's entry goes: sorting by it applies the permutation."""
    positions = broadcasted_iota(np.int32, aval_of(index).shape, axis)
    return sort_key_val(index, positions, dimension=axis)[1]


qr_p.def_jvp(_qr_jvp)


def _qr_batching(axis_data, vals, dims, **params):
    (x,) = matrix_algebra.move_batch_front(axis_data, vals, dims)
    outs = qr_p.bind(x, **params)
    return outs, [0] * len(outs)


qr_p.def_batching(_qr_batching)


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """The QR decomposition of each matrix in ``x``: ``(q, r)`` with ``x = q·r``, q with
    orthonormal columns and r upper triangular; with ``pivoting``, ``(q, r, p)`` with
    ``x[..., p] = q·r`` (columns chosen by LAPACK's ``geqp3``)."""
    matrix_algebra.check_rank("qr", x)
    x = matrix_algebra.as_inexact(x, "qr")
    outs = qr_p.bind(
        x, pivoting=bool(pivoting), full_matrices=bool(full_matrices), use_magma=use_magma
    )
    return tuple(outs)


def _hh_abstract_eval(a, taus):
    if a.ndim < 2 or taus.ndim != a.ndim - 1:
        raise ValueError(
            "Argument to Householder product must have ndims >= 2 and taus one fewer, got "
            f"a.shape={a.shape} and taus.shape={taus.shape}"
        )
    *batch, m, n = a.shape
    if m < n or taus.shape[:-1] != tuple(batch) or taus.shape[-1] > n:
        raise ValueError(
            "Type mismatch for Householder product: a must be m×n with m >= n and taus "
            f"of length at most n with a's batch shape, got a.shape={a.shape} and "
            f"taus.shape={taus.shape}"
        )
    if a.dtype != taus.dtype:
        raise ValueError(f"Type mismatch for Householder product: {a.dtype} and {taus.dtype}")
    return ShapedArray(a.shape, a.dtype)


def _hh_lowering(ctx, a, taus):
    a_aval, taus_aval = ctx.avals_in
    return [_orgqr(ctx, a, a_aval, taus, taus_aval)]


householder_product_p = standard_primitive(
    "householder_product", _hh_abstract_eval, _hh_lowering, "cpu"
)
def_batch_sharding(householder_product_p, (2, 1))
householder_product_p.def_lowering(_hh_lowering, "gpu")


def _hh_batching(axis_data, vals, dims):
    a, taus = matrix_algebra.move_batch_front(axis_data, vals, dims)
    return householder_product_p.bind(a, taus), 0


householder_product_p.def_batching(_hh_batching)


def householder_product(a, taus):
    """The product of the Householder reflectors stored below the diagonal of ``a``
    (scaled by ``taus``), as LAPACK's ``geqrf`` leaves them: the m×n matrix Q."""
    return householder_product_p.bind(a, taus)


def _geqrf_abstract_eval(x):
    if x.ndim < 2:
        raise TypeError(f"Input 0 to geqrf must have rank at least 2, but got shape={x.shape}")
    *batch, m, n = x.shape
    return [x, ShapedArray((*batch, min(m, n)), x.dtype)]


def _geqrf_lowering(ctx, x):
    factors, taus, _ = _geqrf(ctx, x, ctx.avals_in[0])
    return [factors, taus]


geqrf_p = standard_primitive("geqrf", _geqrf_abstract_eval, _geqrf_lowering, "cpu")
def_batch_sharding(geqrf_p, (2,))
geqrf_p.def_lowering(_geqrf_lowering, "gpu")
geqrf_p.multiple_results = True


def _geqrf_batching(axis_data, vals, dims):
    (x,) = matrix_algebra.move_batch_front(axis_data, vals, dims)
    return geqrf_p.bind(x), [0, 0]


geqrf_p.def_batching(_geqrf_batching)


def geqrf(x):
    """LAPACK's packed QR of each matrix in ``x``: R on and above the diagonal,
    Householder reflectors below it, and their scales ``taus`` (what
    ``numpy.linalg.qr(mode='raw')`` returns, untransposed). Not differentiable."""
    return tuple(geqrf_p.bind(matrix_algebra.as_inexact(x, "geqrf")))
