"""``eigh``: eigenvalues and eigenvectors of Hermitian matrices (LAPACK ``syevd`` /
``heevd``). ``eigh_p`` returns ``(v, w)``: eigenvectors as columns of ``v`` and real
eigenvalues ``w`` in ascending order; matrices LAPACK fails on give NaN. On GPUs it is
cuSOLVER through the plugin's ``syevd`` target, whose ``algorithm`` is 0 by default (the
kernel takes Jacobi ``syevj`` for small matrices, ``syevd`` otherwise), 1 for
``EighImplementation.QR`` and 2 for ``JACOBI``."""

from __future__ import annotations

import enum

import numpy as np

from lamina.interpreters import ad
from lamina.ir import ShapedArray, dtypes
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import add, broadcast_in_dim, convert_element_type, div, mul, sub
from lamina.lax.linalg import _gpu_solver, _lapack, matrix_algebra
from lamina.lax.linalg.batch_sharding import def_batch_sharding

__all__ = ["EighImplementation", "eigh", "eigh_p"]


class EighImplementation(enum.Enum):
    """Which algorithm ``eigh`` uses (JAX's enum; CPU always uses LAPACK)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


def _real_dtype(dtype):
    return np.dtype(dtypes.finfo(dtype).dtype)


def _abstract_eval(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            "Argument to symmetric eigendecomposition must have shape [..., n, n], got "
            f"shape {x.shape}"
        )
    if subset_by_index is not None and tuple(subset_by_index) != (0, x.shape[-1]):
        raise NotImplementedError("lamina: eigh(subset_by_index=...) is not built yet")
    *batch, n, _ = x.shape
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*batch, n), _real_dtype(x.dtype))]


def _lowering(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    aval = ctx.avals_in[0]
    v_aval, w_aval = ctx.avals_out
    batch = aval.shape[:-2]
    nb = len(batch)
    routine = "heevd" if np.dtype(aval.dtype).kind == "c" else "syevd"
    v, w, info = _lapack.custom_call(
        _lapack.lapack_target(routine, aval.dtype),
        [x],
        [aval],
        [v_aval, w_aval, ShapedArray(batch, np.dtype(np.int32))],
        num_batch_dims=nb,
        config={"mode": _lapack.u8("V"), "uplo": _lapack.u8("L" if lower else "U")},
        aliases={0: 0},
        matrix_results=[True, False, False],
    )
    ok = _lapack.info_ok(info, batch)
    return [
        _lapack.nan_where_failed(ok, v, v_aval, nb),
        _lapack.nan_where_failed(ok, w, w_aval, nb),
    ]


def _gpu_lowering(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    if algorithm == EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    aval = ctx.avals_in[0]
    v_aval, w_aval = ctx.avals_out
    batch = aval.shape[:-2]
    nb = len(batch)
    number = 0 if algorithm is None else 2 if algorithm == EighImplementation.JACOBI else 1
    v, w, info = _gpu_solver.custom_call(
        _gpu_solver.solver(ctx, "syevd"),
        [x],
        [aval],
        [v_aval, w_aval, ShapedArray(batch, np.dtype(np.int32))],
        config={"lower": bool(lower), "algorithm": np.uint8(number)},
        aliases={0: 0},
    )
    ok = _lapack.info_ok(info, batch)
    return [
        _lapack.nan_where_failed(ok, v, v_aval, nb),
        _lapack.nan_where_failed(ok, w, w_aval, nb),
    ]


eigh_p = standard_primitive("eigh", _abstract_eval, _lowering, "cpu")
def_batch_sharding(eigh_p, (2,))
eigh_p.def_lowering(_gpu_lowering, "gpu")
eigh_p.multiple_results = True


def _jvp(primals, tangents, **params):
    """dw = diag(vᴴ·ȧ·v); dv = v·(F ∘ vᴴ·ȧ·v) with F[i, j] = 1/(w[j] - w[i]) off the
    diagonal (the standard first-order perturbation result)."""
    (x,), (x_dot,) = primals, tangents
    v, w = eigh_p.bind(x, **params)
    if ad.is_zero(x_dot):
        return [v, w], [ad.Zero(ad.tangent_aval(aval_of(o))) for o in (v, w)]
    x_dot = ad.instantiate_zeros(x_dot)
    n = aval_of(w).shape[-1]
    shape = (*aval_of(w).shape, n)
    nd = len(shape)
    w_rows = broadcast_in_dim(w, shape, (*range(nd - 2), nd - 1))  # w[j]
    w_cols = broadcast_in_dim(w, shape, tuple(range(nd - 1)))  # w[i]
    eye = matrix_algebra.eye_like(w_rows)
    f_mat = sub(div(matrix_algebra.full(shape, 1, eye.dtype), add(eye, sub(w_rows, w_cols))),
                   eye)  # fmt: skip
    projected = matrix_algebra.matmul(matrix_algebra.matmul(matrix_algebra.adjoint(v), x_dot), v)
    f_mat = convert_element_type(f_mat, aval_of(v).dtype)
    v_dot = matrix_algebra.matmul(v, mul(f_mat, projected))
    w_dot = matrix_algebra.real_diagonal(projected)
    return [v, w], [v_dot, w_dot]


eigh_p.def_jvp(_jvp)


def _batching(axis_data, vals, dims, **params):
    (x,) = matrix_algebra.move_batch_front(axis_data, vals, dims)
    return eigh_p.bind(x, **params), [0, 0]


eigh_p.def_batching(_batching)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None, implementation=None):  # fmt: skip
    """Eigenvectors ``v`` (as columns) and ascending real eigenvalues ``w`` of each
    Hermitian matrix in ``x``, reading its ``lower`` (or upper) triangle; returns
    ``(v, w)``. With ``symmetrize_input``, ``(x + xᴴ)/2`` is decomposed."""
    x = matrix_algebra.as_inexact(x, "eigh")
    if symmetrize_input:
        x = matrix_algebra.symmetrize(x)
    v, w = eigh_p.bind(
        x,
        lower=bool(lower),
        sort_eigenvalues=bool(sort_eigenvalues),
        subset_by_index=None if subset_by_index is None else tuple(subset_by_index),
        algorithm=implementation,
    )
    return v, w
