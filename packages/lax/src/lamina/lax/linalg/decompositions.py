"""``eig`` (LAPACK ``geev``), ``schur`` (``gees``), ``hessenberg`` (``gehrd``) and
``tridiagonal`` (``sytrd``/``hetrd``). Of these only ``eig`` has a derivative rule,
for its eigenvalues (as in JAX). On GPUs, as JAX 0.10.2 lowers them: ``eig`` by
cuSOLVER's ``geev`` where cuSOLVER is 11.7.1 or newer and no left eigenvectors are asked
for (``implementation=CUSOLVER`` insists), else by the plugin's hybrid kernel
(``cuhybrid_eig_real``/``_comp``: LAPACK or MAGMA on the host); ``tridiagonal`` by
cuSOLVER's ``sytrd``; ``schur`` and ``hessenberg`` are CPU-only."""

from __future__ import annotations

import enum

import numpy as np

from lamina.interpreters import ad
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ShapedArray, dtypes
from lamina.lax.base.filling import full_like
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import (
    add,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    broadcast_in_dim,
    complex,
    convert_element_type,
    div,
    eq,
    imag,
    mul,
    neg,
    reduce_sum,
    select,
    sub,
)
from lamina.lax.base.reshaping import expand_dims, pad
from lamina.lax.linalg import _gpu_solver, _lapack, matrix_algebra
from lamina.lax.linalg.batch_sharding import def_batch_sharding
from lamina.lax.linalg.lu import lu_p, permutation_matrix
from lamina.lax.linalg.triangular_solve import triangular_solve
from lamina.lax.windowed.cumulative import cumsum

__all__ = [
    "EigImplementation",
    "eig",
    "eig_p",
    "hessenberg",
    "hessenberg_p",
    "schur",
    "schur_p",
    "tridiagonal",
    "tridiagonal_p",
]

_I32 = np.dtype(np.int32)


class EigImplementation(enum.Enum):
    """Which library ``eig`` uses (CPU always uses LAPACK)."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def _complex_dtype(dtype):
    return np.dtype(np.complex128 if _real_dtype(dtype) == np.float64 else np.complex64)


def _real_dtype(dtype):
    return np.dtype(dtypes.finfo(dtype).dtype)


def _square(name, x):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got shape {x.shape}")
    return x.shape[:-2], x.shape[-1]


def _batching_rule(prim):
    def rule(axis_data, vals, dims, **params):
        moved = matrix_algebra.move_batch_front(axis_data, vals, dims)
        outs = prim.bind(*moved, **params)
        return outs, [0] * len(outs)

    prim.def_batching(rule)


def _masked(ok, values, avals, nb):
    return [_lapack.nan_where_failed(ok, v, a, nb) for v, a in zip(values, avals, strict=True)]


# --- eig -------------------------------------------------------------------------------


def _eig_outputs(info, batch, w, w_aval, vl, vr, vec_aval, *, left, right):
    """The eigenvalues and the eigenvectors asked for (``left``, ``right``), NaN in the
    matrices whose decomposition failed (``info``)."""
    ok = _lapack.info_ok(info, batch)
    outs, avals = [w], [w_aval]
    if left:
        outs, avals = [*outs, vl], [*avals, vec_aval]
    if right:
        outs, avals = [*outs, vr], [*avals, vec_aval]
    return _masked(ok, outs, avals, len(batch))


def _eig_abstract_eval(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
                       enable_eigvec_derivs, implementation):  # fmt: skip
    batch, n = _square("eig", x)
    c = _complex_dtype(x.dtype)
    outs = [ShapedArray((*batch, n), c)]
    outs += [ShapedArray((*batch, n, n), c)] * (
        int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    )
    return outs


def _eig_lowering(ctx, x, *, compute_left_eigenvectors, compute_right_eigenvectors,
                  enable_eigvec_derivs, implementation):  # fmt: skip
    aval = ctx.avals_in[0]
    batch, n = aval.shape[:-2], aval.shape[-1]
    nb = len(batch)
    c = _complex_dtype(aval.dtype)
    vec = ShapedArray((*batch, n, n), c)
    w_aval = ShapedArray((*batch, n), c)
    info_aval = ShapedArray(batch, _I32)
    config = {
        "compute_left": _lapack.u8("V" if compute_left_eigenvectors else "N"),
        "compute_right": _lapack.u8("V" if compute_right_eigenvectors else "N"),
    }
    target = _lapack.lapack_target("geev", aval.dtype)
    if np.dtype(aval.dtype).kind == "c":
        w, vl, vr, info = _lapack.custom_call(
            target, [x], [aval], [w_aval, vec, vec, info_aval], num_batch_dims=nb,
            config=config, matrix_results=[False, True, True, False],
        )  # fmt: skip
    else:
        part = ShapedArray((*batch, n), aval.dtype)
        wr, wi, vl, vr, info = _lapack.custom_call(
            target, [x], [aval], [part, part, vec, vec, info_aval], num_batch_dims=nb,
            config=config, matrix_results=[False, False, True, True, False],
        )  # fmt: skip
        w = hlo.complex(wr, wi)
    return _eig_outputs(
        info, batch, w, w_aval, vl, vr, vec,
        left=compute_left_eigenvectors, right=compute_right_eigenvectors,
    )  # fmt: skip


def _eig_gpu_lowering(ctx, x, *, compute_left_eigenvectors, compute_right_eigenvectors,
                      enable_eigvec_derivs, implementation):  # fmt: skip
    has_geev = ctx.platform == "cuda" and _gpu_solver.cusolver_version() >= 11701
    wants_geev = implementation is None and has_geev and not compute_left_eigenvectors
    if wants_geev or implementation == EigImplementation.CUSOLVER:
        if not has_geev:
            raise RuntimeError("Nonsymmetric eigendecomposition requires cusolver 11.7.1 or newer")
        if compute_left_eigenvectors:
            raise NotImplementedError("Left eigenvectors are not supported by cusolver")
        return _eig_geev_lowering(ctx, x, compute_right_eigenvectors)
    aval = ctx.avals_in[0]
    batch, n = aval.shape[:-2], aval.shape[-1]
    c = _complex_dtype(aval.dtype)
    vec, w_aval = ShapedArray((*batch, n, n), c), ShapedArray((*batch, n), c)
    magma = {EigImplementation.MAGMA: "on", EigImplementation.LAPACK: "off"}.get(
        implementation, "auto"
    )
    _gpu_solver.initialize_hybrid_kernels()
    real = np.dtype(aval.dtype).kind != "c"
    parts = [ShapedArray((*batch, n), aval.dtype)] * (2 if real else 1)
    *w, vl, vr, info = _gpu_solver.custom_call(
        _gpu_solver.target(ctx, "hybrid_eig_real" if real else "hybrid_eig_comp"),
        [x],
        [aval],
        [*parts, vec, vec, ShapedArray(batch, _I32)],
        config={
            "magma": magma,
            "left": bool(compute_left_eigenvectors),
            "right": bool(compute_right_eigenvectors),
        },
    )
    w = hlo.complex(*w) if real else w[0]
    return _eig_outputs(
        info, batch, w, w_aval, vl, vr, vec,
        left=compute_left_eigenvectors, right=compute_right_eigenvectors,
    )  # fmt: skip


def _eig_geev_lowering(ctx, x, compute_right_eigenvectors):
    aval = ctx.avals_in[0]
    batch, n = aval.shape[:-2], aval.shape[-1]
    c = _complex_dtype(aval.dtype)
    mat, w_aval = ShapedArray((*batch, n, n), aval.dtype), ShapedArray((*batch, n), c)
    _, w, _, vr, info = _gpu_solver.custom_call(
        _gpu_solver.solver(ctx, "geev"), [x], [aval],
        [mat, w_aval, mat, mat, ShapedArray(batch, _I32)],
        config={"left": False, "right": bool(compute_right_eigenvectors)},
    )  # fmt: skip
    ok = _lapack.info_ok(info, batch)
    vec = ShapedArray((*batch, n, n), c)
    outs, avals = [w], [w_aval]
    if compute_right_eigenvectors:
        if np.dtype(aval.dtype).kind != "c":
            (vr,) = matrix_algebra.inline(ctx, unpack_conjugate_pairs, [w, vr], [w_aval, mat])
        outs, avals = [*outs, vr], [*avals, vec]
    return _masked(ok, outs, avals, len(batch))


def unpack_conjugate_pairs(w, vr):
    """The complex eigenvectors of a real matrix from ``geev``'s packed real columns:
    a conjugate pair of eigenvalues (``w[j]``, ``w[j+1]``) shares the columns
    ``re = vr[:, j]``, ``im = vr[:, j+1]``, its vectors being ``re ± i·im``."""
    vr_aval = aval_of(vr)
    nd = vr_aval.ndim
    if vr_aval.shape[-1] == 0:
        return [complex(vr, full_like(vr, 0))]
    is_real = eq(imag(w), full_like(imag(w), 0))
    # A pair starts where an odd number of non-real eigenvalues has been seen.
    count = cumsum(convert_element_type(bitwise_not(is_real), np.int32), axis=nd - 2)
    starts = eq(bitwise_and(count, np.int32(1)), np.int32(1))
    zero = np.zeros((), vr_aval.dtype)
    next_col = pad(vr, zero, [(0, 0, 0)] * (nd - 1) + [(-1, 1, 0)])
    prev_col = pad(vr, zero, [(0, 0, 0)] * (nd - 1) + [(1, -1, 0)])
    columns = [d for d in range(nd) if d != nd - 2]
    is_real = broadcast_in_dim(is_real, vr_aval.shape, columns)
    starts = broadcast_in_dim(starts, vr_aval.shape, columns)
    re = select(bitwise_or(is_real, starts), vr, prev_col)
    im = select(starts, next_col, neg(vr))
    im = select(is_real, full_like(vr, 0), im)
    return [complex(re, im)]


eig_p = standard_primitive("eig", _eig_abstract_eval, _eig_lowering, "cpu")
def_batch_sharding(eig_p, (2,))
eig_p.def_lowering(_eig_gpu_lowering, "gpu")
eig_p.multiple_results = True
_batching_rule(eig_p)


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None, use_magma=None):  # fmt: skip
    """Eigenvalues ``w`` of each square matrix in ``x`` and, as asked, its left
    eigenvectors ``vl`` (``vlᴴ·x = w·vlᴴ``) and right eigenvectors ``vr``
    (``x·vr = vr·w``), all complex: returns ``[w, vl, vr]`` (those computed)."""
    x = matrix_algebra.as_inexact(x, "eig")
    return list(
        eig_p.bind(
            x,
            compute_left_eigenvectors=bool(compute_left_eigenvectors),
            compute_right_eigenvectors=bool(compute_right_eigenvectors),
            enable_eigvec_derivs=bool(enable_eigvec_derivs),
            implementation=implementation,
        )
    )


# --- schur ------------------------------------------------------------------------------


def _schur_abstract_eval(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    _square("schur", x)
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError("lamina: schur with sorted eigenvalues is not built yet")
    t = ShapedArray(x.shape, x.dtype)
    return [t, t] if compute_schur_vectors else [t]


def _schur_lowering(ctx, x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    aval = ctx.avals_in[0]
    batch, n = aval.shape[:-2], aval.shape[-1]
    nb = len(batch)
    info_aval = ShapedArray(batch, _I32)
    config = {"mode": _lapack.u8("V" if compute_schur_vectors else "N"), "sort": _lapack.u8("N")}
    if np.dtype(aval.dtype).kind == "c":
        eig_avals = [ShapedArray((*batch, n), aval.dtype)]
    else:
        eig_avals = [ShapedArray((*batch, n), aval.dtype)] * 2
    results = [aval, aval, *eig_avals, info_aval, info_aval]
    outs = _lapack.custom_call(
        _lapack.lapack_target("gees", aval.dtype), [x], [aval], results, num_batch_dims=nb,
        config=config, aliases={0: 0},
        matrix_results=[True, True] + [False] * (len(results) - 2),
    )  # fmt: skip
    t, vs, info = outs[0], outs[1], outs[-1]
    ok = _lapack.info_ok(info, batch)
    if compute_schur_vectors:
        return _masked(ok, [t, vs], [aval, aval], nb)
    return _masked(ok, [t], [aval], nb)


schur_p = standard_primitive("schur", _schur_abstract_eval, _schur_lowering, "cpu")
schur_p.multiple_results = True
def_batch_sharding(schur_p, (2,))
_batching_rule(schur_p)


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """The Schur form T of each square matrix in ``x`` and the unitary Schur vectors Z
    with ``x = Z·T·Zᴴ`` (T quasi-upper-triangular for real ``x``): returns ``(T, Z)``."""
    outs = schur_p.bind(
        x,
        compute_schur_vectors=bool(compute_schur_vectors),
        sort_eig_vals=bool(sort_eig_vals),
        select_callable=select_callable,
    )
    return tuple(outs) if compute_schur_vectors else outs[0]


# --- hessenberg -------------------------------------------------------------------------


def _hessenberg_abstract_eval(a):
    batch, n = _square("hessenberg", a)
    return [ShapedArray(a.shape, a.dtype), ShapedArray((*batch, max(n - 1, 0)), a.dtype)]


def _hessenberg_lowering(ctx, a):
    aval = ctx.avals_in[0]
    taus_aval = ctx.avals_out[1]
    batch, n = aval.shape[:-2], aval.shape[-1]
    i32 = ir.IntegerType.get_signless(32)
    config = {"high": ir.IntegerAttr.get(i32, n), "low": ir.IntegerAttr.get(i32, 1)}
    h, taus, info = _lapack.custom_call(
        _lapack.lapack_target("gehrd", aval.dtype), [a], [aval],
        [aval, taus_aval, ShapedArray(batch, _I32)], num_batch_dims=len(batch),
        config=config, aliases={0: 0}, matrix_results=[True, False, False],
    )  # fmt: skip
    ok = _lapack.info_ok(info, batch)
    return _masked(ok, [h, taus], [aval, taus_aval], len(batch))


hessenberg_p = standard_primitive(
    "hessenberg", _hessenberg_abstract_eval, _hessenberg_lowering, "cpu"
)
hessenberg_p.multiple_results = True
def_batch_sharding(hessenberg_p, (2,))
_batching_rule(hessenberg_p)


def hessenberg(a):
    """The Hessenberg reduction of each square matrix in ``a``, as LAPACK's ``gehrd``
    leaves it: ``(a, taus)``, the upper Hessenberg H on and above the first
    subdiagonal and Householder reflectors (scaled by ``taus``) below it."""
    return tuple(hessenberg_p.bind(a))


# --- tridiagonal ------------------------------------------------------------------------


def _tridiagonal_abstract_eval(a, *, lower):
    batch, n = _square("tridiagonal", a)
    real = _real_dtype(a.dtype)
    return [
        ShapedArray(a.shape, a.dtype),
        ShapedArray((*batch, n), real),
        ShapedArray((*batch, max(n - 1, 0)), real),
        ShapedArray((*batch, max(n - 1, 0)), a.dtype),
    ]


def _tridiagonal_lowering(ctx, a, *, lower):
    aval = ctx.avals_in[0]
    batch = aval.shape[:-2]
    routine = "hetrd" if np.dtype(aval.dtype).kind == "c" else "sytrd"
    avals = list(ctx.avals_out)
    *outs, info = _lapack.custom_call(
        _lapack.lapack_target(routine, aval.dtype), [a], [aval],
        [*avals, ShapedArray(batch, _I32)], num_batch_dims=len(batch),
        config={"uplo": _lapack.u8("L" if lower else "U")}, aliases={0: 0},
        matrix_results=[True, False, False, False, False],
    )  # fmt: skip
    ok = _lapack.info_ok(info, batch)
    return _masked(ok, outs, avals, len(batch))


def _tridiagonal_gpu_lowering(ctx, a, *, lower):
    aval = ctx.avals_in[0]
    batch = aval.shape[:-2]
    avals = list(ctx.avals_out)
    *outs, info = _gpu_solver.custom_call(
        _gpu_solver.solver(ctx, "sytrd"), [a], [aval], [*avals, ShapedArray(batch, _I32)],
        config={"lower": bool(lower)}, aliases={0: 0},
    )  # fmt: skip
    ok = _lapack.info_ok(info, batch)
    return _masked(ok, outs, avals, len(batch))


tridiagonal_p = standard_primitive(
    "tridiagonal", _tridiagonal_abstract_eval, _tridiagonal_lowering, "cpu"
)
def_batch_sharding(tridiagonal_p, (2,))
tridiagonal_p.def_lowering(_tridiagonal_gpu_lowering, "gpu")
tridiagonal_p.multiple_results = True
_batching_rule(tridiagonal_p)


def tridiagonal(a, *, lower=True):
    """The reduction of each Hermitian matrix in ``a`` to real symmetric tridiagonal
    form, as LAPACK's ``sytrd``/``hetrd`` leaves it: ``(a, d, e, taus)`` with the
    diagonal ``d``, off-diagonal ``e`` and the reflectors in ``a`` (scaled by ``taus``)."""
    return tuple(tridiagonal_p.bind(a, lower=bool(lower)))


def solve_with_lu(a, b):
    """a⁻¹·b through LU with partial pivoting."""

    factors, _, perm = lu_p.bind(a)
    permuted = matrix_algebra.matmul(permutation_matrix(perm, factors.aval.dtype), b)
    y = triangular_solve(factors, permuted, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(factors, y, left_side=True, lower=False)


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):  # fmt: skip
    """dw = diag(v⁻¹·ȧ·v) with v the right eigenvectors; with ``enable_eigvec_derivs``,
    also dv = v·(F ∘ v⁻¹·ȧ·v) with F_ij = 1/(w_j − w_i) off the diagonal, projected so
    the eigenvectors keep unit norm (their phase stays fixed, as LAPACK's is)."""
    if compute_left_eigenvectors or (compute_right_eigenvectors and not enable_eigvec_derivs):
        raise NotImplementedError(
            "The derivatives of eigenvectors are not implemented, only eigenvalues. See "
            "https://github.com/jax-ml/jax/issues/2748 for discussion."
        )
    (a,), (a_dot,) = primals, tangents
    w, v = eig_p.bind(
        a, compute_left_eigenvectors=False, compute_right_eigenvectors=True,
        enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation,
    )  # fmt: skip
    primal_out = [w, v] if compute_right_eigenvectors else [w]
    if ad.is_zero(a_dot):
        return primal_out, [ad.Zero(ad.tangent_aval(x.aval)) for x in primal_out]
    a_dot = convert_element_type(ad.instantiate_zeros(a_dot), v.aval.dtype)
    projected = matrix_algebra.matmul(solve_with_lu(v, a_dot), v)
    w_dot = matrix_algebra.diagonal(projected)
    if not compute_right_eigenvectors:
        return primal_out, [w_dot]
    nd = v.aval.ndim
    gaps = sub(expand_dims(w, (nd - 2,)), expand_dims(w, (nd - 1,)))  # w_j - w_i
    eye = matrix_algebra.eye_like(projected)
    weights = sub(div(full_like(gaps, 1), add(gaps, eye)), eye)
    v_dot = matrix_algebra.matmul(v, mul(weights, projected))
    # keep ‖v_k‖ = 1: remove the component of dv_k along v_k's real direction
    along = matrix_algebra.real_part(reduce_sum(mul(matrix_algebra.conj(v), v_dot), (nd - 2,)))
    v_dot = sub(v_dot, mul(v, expand_dims(along, (nd - 2,))))
    return primal_out, [w_dot, v_dot]


eig_p.def_jvp(_eig_jvp)
