"""``svd``: A = U·diag(s)·Vᴴ (LAPACK ``gesdd``). ``svd_p`` returns ``s`` (descending)
and, with ``compute_uv``, ``u`` and ``vh``; matrices LAPACK fails on give NaN.

On GPUs (``_gpu_solver``) the algorithm is chosen as JAX 0.10.2 chooses it: by default
cuSOLVER's Jacobi ``gesvdj`` for matrices up to 1024×1024 and the QR-based ``gesvd``
beyond (on the transpose when m < n); ``QR``, ``JACOBI`` and ``POLAR`` (``gesvdp``) pick
one; ``DIVIDE_AND_CONQUER`` (``gesdd``) exists only on ROCm."""

from __future__ import annotations

import enum

import numpy as np

from lamina.interpreters import ad
from lamina.interpreters.mlir import hlo
from lamina.ir import ShapedArray, dtypes
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import (
    add,
    broadcast_in_dim,
    convert_element_type,
    div,
    eq,
    mul,
    sub,
)
from lamina.lax.linalg import _gpu_solver, _lapack, matrix_algebra
from lamina.lax.linalg.batch_sharding import def_batch_sharding

__all__ = ["SvdAlgorithm", "svd", "svd_p"]


class SvdAlgorithm(enum.Enum):
    """Which algorithm ``svd`` uses (CPU uses LAPACK's divide and conquer)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _shapes(shape, full_matrices):
    *batch, m, n = shape
    k = min(m, n)
    u = (*batch, m, m if full_matrices else k)
    vh = (*batch, n if full_matrices else k, n)
    return tuple(batch), k, u, vh


def _abstract_eval(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    if x.ndim < 2:
        raise TypeError(f"Input 0 to svd must have rank at least 2, but got shape={x.shape}")
    if subset_by_index is not None and tuple(subset_by_index) != (0, min(x.shape[-2:])):
        raise NotImplementedError("lamina: svd(subset_by_index=...) is not built yet")
    batch, k, u, vh = _shapes(x.shape, full_matrices)
    s = ShapedArray((*batch, k), np.dtype(dtypes.finfo(x.dtype).dtype))
    if not compute_uv:
        return [s]
    return [s, ShapedArray(u, x.dtype), ShapedArray(vh, x.dtype)]


def _lowering(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    aval = ctx.avals_in[0]
    s_aval = ctx.avals_out[0]
    *_, m, n = aval.shape
    batch, _, u_shape, vh_shape = _shapes(aval.shape, full_matrices)
    mode = ("A" if full_matrices else "S") if compute_uv else "N"
    if not compute_uv:  # gesdd still wants buffers for u and vh
        u_shape, vh_shape = (*batch, m, m), (*batch, n, n)
    u_aval, vh_aval = ShapedArray(u_shape, aval.dtype), ShapedArray(vh_shape, aval.dtype)
    nb = len(batch)
    _, s, u, vh, info = _lapack.custom_call(
        _lapack.lapack_target("gesdd", aval.dtype),
        [x],
        [aval],
        [aval, s_aval, u_aval, vh_aval, ShapedArray(batch, np.dtype(np.int32))],
        num_batch_dims=nb,
        config={"mode": _lapack.u8(mode)},
        aliases={0: 0},
        matrix_results=[True, False, True, True, False],
    )
    ok = _lapack.info_ok(info, batch)
    s = _lapack.nan_where_failed(ok, s, s_aval, nb)
    if not compute_uv:
        return [s]
    u = _lapack.nan_where_failed(ok, u, u_aval, nb)
    vh = _lapack.nan_where_failed(ok, vh, vh_aval, nb)
    return [s, u, vh]


def _gpu_routine(ctx, algorithm, m, n) -> str:
    """The GPU kernel for ``algorithm``: ``gesvdj``, ``gesvdp``, ``gesvd`` or ``gesdd``."""
    if algorithm in (None, SvdAlgorithm.DEFAULT):
        return "gesvdj" if m <= 1024 and n <= 1024 else "gesvd"
    if algorithm == SvdAlgorithm.DIVIDE_AND_CONQUER:
        if ctx.platform != "rocm":
            raise NotImplementedError(
                "Divide-and-conquer SVD (SvdAlgorithm.DIVIDE_AND_CONQUER) is only supported "
                "on AMD (ROCm) GPUs, not on NVIDIA CUDA."
            )
        return "gesdd"
    routines = {SvdAlgorithm.QR: "gesvd", SvdAlgorithm.JACOBI: "gesvdj"}
    return routines.get(algorithm, "gesvdp")


def _gpu_lowering(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    aval = ctx.avals_in[0]
    s_aval = ctx.avals_out[0]
    *batch, m, n = aval.shape
    batch, nb, k = tuple(batch), len(batch), min(m, n)
    routine = _gpu_routine(ctx, algorithm, m, n)
    econ, transposed, config = not full_matrices, False, {}
    if compute_uv:
        u_aval, vh_aval = ctx.avals_out[1:]
    else:
        u_aval = vh_aval = ShapedArray((), aval.dtype)
    if routine == "gesvdj":  # no economy mode below 32×32
        econ = not full_matrices and m > 32 and n > 32
    elif routine in ("gesvd", "gesdd"):
        transposed = routine == "gesvd" and m < n
        config["transposed"] = transposed
    if routine in ("gesvdj", "gesvdp"):  # u and v are always computed
        u_aval = ShapedArray((*batch, m, k if econ else m), aval.dtype)
        vh_aval = ShapedArray((*batch, n, k if econ else n), aval.dtype)
        results = [aval, s_aval, u_aval, vh_aval]
    elif transposed:
        results = [aval, s_aval, vh_aval, u_aval]
    else:
        results = [aval, s_aval, u_aval, vh_aval]
    config.update(full_matrices=not econ, compute_uv=bool(compute_uv))
    _, s, u, vh, info = _gpu_solver.custom_call(
        _gpu_solver.solver(ctx, routine),
        [x],
        [aval],
        [*results, ShapedArray(batch, np.dtype(np.int32))],
        config=config,
        aliases={0: 0},
        column_major=not transposed,
    )
    if transposed:
        u, vh = vh, u
    if routine in ("gesvdj", "gesvdp") and compute_uv:
        vh = hlo.transpose(vh, [*range(nb), nb + 1, nb])  # v to vᴴ
        if dtypes.issubdtype(aval.dtype, np.complexfloating):
            vh = hlo.complex(hlo.real(vh), hlo.negate(hlo.imag(vh)))
        if not full_matrices and not econ:
            nd = aval.ndim
            u = hlo.slice(u, [0] * nd, [*batch, m, k], [1] * nd)
            vh = hlo.slice(vh, [0] * nd, [*batch, k, n], [1] * nd)
    ok = _lapack.info_ok(info, batch)
    s = _lapack.nan_where_failed(ok, s, s_aval, nb)
    if not compute_uv:
        return [s]
    u_aval, vh_aval = ctx.avals_out[1:]
    return [
        s,
        _lapack.nan_where_failed(ok, u, u_aval, nb),
        _lapack.nan_where_failed(ok, vh, vh_aval, nb),
    ]


svd_p = standard_primitive("svd", _abstract_eval, _lowering, "cpu")
def_batch_sharding(svd_p, (2,))
svd_p.def_lowering(_gpu_lowering, "gpu")
svd_p.multiple_results = True


def _jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (x,), (x_dot,) = primals, tangents
    params = dict(subset_by_index=subset_by_index, algorithm=algorithm)
    if compute_uv and full_matrices:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices"
        )
    s, u, vh = svd_p.bind(x, full_matrices=False, compute_uv=True, **params)
    outs = [s, u, vh] if compute_uv else [s]
    if ad.is_zero(x_dot):
        return outs, [ad.Zero(ad.tangent_aval(aval_of(o))) for o in outs]
    x_dot = ad.instantiate_zeros(x_dot)
    dtype = aval_of(x).dtype
    v = matrix_algebra.adjoint(vh)
    ds_mat = matrix_algebra.matmul(matrix_algebra.matmul(matrix_algebra.adjoint(u), x_dot), v)
    s_dot = matrix_algebra.real_diagonal(ds_mat)
    if not compute_uv:
        return [s], [s_dot]
    k = aval_of(s).shape[-1]
    shape = (*aval_of(s).shape, k)
    nd = len(shape)
    s_row = broadcast_in_dim(s, shape, (*range(nd - 2), nd - 1))  # s[j]
    s_col = broadcast_in_dim(s, shape, tuple(range(nd - 1)))  # s[i]
    eye = matrix_algebra.eye_like(s_row)
    diffs = mul(add(s_row, s_col), sub(s_row, s_col))  # s[j]² - s[i]²
    f_mat = sub(div(matrix_algebra.full(shape, 1, eye.dtype), add(diffs, eye)), eye)
    f_mat = convert_element_type(f_mat, dtype)
    s_row_c = convert_element_type(s_row, dtype)
    s_col_c = convert_element_type(s_col, dtype)
    dss = mul(s_row_c, ds_mat)
    sds = mul(s_col_c, ds_mat)
    zero_s = convert_element_type(eq(s, np.zeros((), s.dtype)), s.dtype)
    s_inv = sub(div(np.ones((), s.dtype), add(s, zero_s)), zero_s)
    s_inv_mat = mul(broadcast_in_dim(s_inv, shape, tuple(range(nd - 1))), eye)
    half = np.asarray(0.5, dtype)
    diag_part = mul(
        mul(half, sub(ds_mat, matrix_algebra.adjoint(ds_mat))),
        convert_element_type(s_inv_mat, dtype),
    )
    u_dot = matrix_algebra.matmul(
        u, add(mul(f_mat, add(dss, matrix_algebra.adjoint(dss))), diag_part)
    )
    v_dot = matrix_algebra.matmul(v, mul(f_mat, add(sds, matrix_algebra.adjoint(sds))))
    *_, m, n = aval_of(x).shape
    if m > n:
        xv = matrix_algebra.matmul(x_dot, v)
        extra = sub(
            xv, matrix_algebra.matmul(u, matrix_algebra.matmul(matrix_algebra.adjoint(u), xv))
        )
        u_dot = add(u_dot, div(extra, _bcast_s(s, x, m)))
    if n > m:
        xu = matrix_algebra.matmul(matrix_algebra.adjoint(x_dot), u)
        extra = sub(xu, matrix_algebra.matmul(v, matrix_algebra.matmul(vh, xu)))
        v_dot = add(v_dot, div(extra, _bcast_s(s, x, n)))
    return outs, [s_dot, u_dot, matrix_algebra.adjoint(v_dot)]


def _bcast_s(s, x, rows):
    """``s`` as a row, repeated over ``rows`` rows, in ``x``'s dtype."""
    s_aval = aval_of(s)
    shape = (*s_aval.shape[:-1], rows, s_aval.shape[-1])
    nd = len(shape)
    row = broadcast_in_dim(s, shape, (*range(nd - 2), nd - 1))
    return convert_element_type(row, aval_of(x).dtype)


svd_p.def_jvp(_jvp)


def _batching(axis_data, vals, dims, **params):
    (x,) = matrix_algebra.move_batch_front(axis_data, vals, dims)
    outs = svd_p.bind(x, **params)
    return outs, [0] * len(outs)


svd_p.def_batching(_batching)


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """The singular value decomposition of each matrix in ``x``: ``(u, s, vh)`` with
    ``x = u·diag(s)·vh`` and ``s`` descending, or only ``s`` without ``compute_uv``."""
    matrix_algebra.check_rank("svd", x)
    x = matrix_algebra.as_inexact(x, "svd")
    outs = svd_p.bind(
        x,
        full_matrices=bool(full_matrices),
        compute_uv=bool(compute_uv),
        subset_by_index=None if subset_by_index is None else tuple(subset_by_index),
        algorithm=algorithm,
    )
    if not compute_uv:
        return outs[0]
    s, u, vh = outs
    return u, s, vh
