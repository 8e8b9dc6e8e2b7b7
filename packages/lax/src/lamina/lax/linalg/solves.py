"""``tridiagonal_solve`` (LAPACK ``gtsv``), ``ormqr`` (``ormqr``/``unmqr``: products with
Q from ``geqrf``'s reflectors), ``cholesky_update`` and ``symmetric_product``. On GPUs
``tridiagonal_solve`` is cuSPARSE's ``gtsv2`` (the plugin's perturbed kernel with
``perturb_singular``; systems of fewer than 3 rows are solved with lax operations, as
cuSPARSE needs 3) and ``ormqr`` cuSOLVER's; on CUDA ``cholesky_update`` and
``symmetric_product`` are the plugin's ``cu_cholesky_update_ffi`` and ``syrk`` kernels."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, reverse
from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import ir
from lamina.ir import ShapedArray, dtypes
from lamina.lax.base.operands import FLOAT, aval_of, check_dtype, standard_primitive
from lamina.lax.base.primitives import add, broadcast_in_dim, div, mul, neg, sub
from lamina.lax.base.reshaping import concatenate, expand_dims, slice_in_dim
from lamina.lax.linalg import _gpu_solver, _lapack, matrix_algebra
from lamina.lax.linalg.batch_sharding import def_batch_sharding
from lamina.lax.linalg.cholesky import cholesky_p

__all__ = [
    "cholesky_update",
    "cholesky_update_p",
    "ormqr",
    "ormqr_p",
    "symmetric_product",
    "symmetric_product_p",
    "tridiagonal_solve",
    "tridiagonal_solve_p",
]

_I32 = np.dtype(np.int32)


def _batch_front_rule(prim):
    def rule(axis_data, vals, dims, **params):
        return prim.bind(*matrix_algebra.move_batch_front(axis_data, vals, dims), **params), 0

    prim.def_batching(rule)


# --- tridiagonal_solve --------------------------------------------------------------


def _tds_abstract_eval(dl, d, du, b, *, perturb_singular):
    if b.ndim < 2:
        raise TypeError(
            f"Input 3 to tridiagonal_solve must have rank at least 2, but got shape={b.shape}"
        )
    if not (dl.shape == d.shape == du.shape) or b.shape[:-1] != d.shape:
        raise TypeError(
            "tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the "
            "dimensions of the diagonal arguments."
        )
    if not (dl.dtype == d.dtype == du.dtype == b.dtype):
        raise TypeError(
            "tridiagonal_solve requires that all arguments have the same dtype, got "
            f"{dl.dtype}, {d.dtype}, {du.dtype} and {b.dtype}."
        )
    return ShapedArray(b.shape, b.dtype)


def _tds_lowering(ctx, dl, d, du, b, *, perturb_singular):
    avals = list(ctx.avals_in)
    b_aval = avals[3]
    batch = b_aval.shape[:-2]
    if perturb_singular:  # jaxlib's kernel: tiny pivots are replaced, never fails
        _lapack.register_targets()
        return _lapack.custom_call(
            "tridiagonal_solve_perturbed_ffi", [dl, d, du, b], avals, [b_aval],
            num_batch_dims=len(batch), matrix_operands=[False, False, False, True],
        )  # fmt: skip
    *_, x, info = _lapack.custom_call(
        _lapack.lapack_target("gtsv", b_aval.dtype), [dl, d, du, b], avals,
        [*avals, ShapedArray(batch, _I32)], num_batch_dims=len(batch),
        aliases={0: 0, 1: 1, 2: 2, 3: 3},
        matrix_operands=[False, False, False, True],
        matrix_results=[False, False, False, True, False],
    )  # fmt: skip
    ok = _lapack.info_ok(info, batch)
    return [_lapack.nan_where_failed(ok, x, b_aval, len(batch))]


def _tds_gpu_lowering(ctx, dl, d, du, b, *, perturb_singular):
    avals = list(ctx.avals_in)
    b_aval = avals[3]
    if perturb_singular:
        (x,) = _gpu_solver.custom_call(
            _gpu_solver.target(ctx, "_tridiagonal_solve_perturbed"), [dl, d, du, b], avals,
            [b_aval],
        )  # fmt: skip
        return [x]
    if b_aval.shape[-2] < 3:
        return matrix_algebra.inline(ctx, _thomas, [dl, d, du, b], avals)
    (x,) = _gpu_solver.custom_call(
        _gpu_solver.target(ctx, "sparse_gtsv2_ffi"), [dl, d, du, b], avals, [b_aval],
        aliases={0: 3},
    )  # fmt: skip
    return [x]


def _thomas(dl, d, du, b):
    """The Thomas algorithm, unrolled over the (few) rows."""
    nd = aval_of(d).ndim
    m = aval_of(d).shape[-1]

    def row(v, i):  # v[..., i] as [..., 1, 1], to scale rows of b
        return expand_dims(slice_in_dim(v, i, i + 1, axis=nd - 1), (nd,))

    def brow(i):
        return slice_in_dim(b, i, i + 1, axis=nd - 1)

    c_prime, x_prime = [div(row(du, 0), row(d, 0))], [div(brow(0), row(d, 0))]
    for i in range(1, m):
        denom = sub(row(d, i), mul(row(dl, i), c_prime[-1]))
        c_prime.append(div(row(du, i), denom))
        x_prime.append(div(sub(brow(i), mul(row(dl, i), x_prime[-1])), denom))
    xs = [x_prime[-1]]
    for i in range(m - 2, -1, -1):
        xs.insert(0, sub(x_prime[i], mul(c_prime[i], xs[0])))
    return [concatenate(xs, nd - 1)]


tridiagonal_solve_p = standard_primitive(
    "tridiagonal_solve", _tds_abstract_eval, _tds_lowering, "cpu"
)
def_batch_sharding(tridiagonal_solve_p, (1, 1, 1, 2))
tridiagonal_solve_p.def_lowering(_tds_gpu_lowering, "gpu")
_batch_front_rule(tridiagonal_solve_p)


def _tds_jvp(primals, tangents, *, perturb_singular):
    """T·x = b: dx = T⁻¹·(db - dT·x)."""
    dl, d, du, _ = primals
    x = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    *diag_dots, b_dot = tangents
    rhs = b_dot
    if not all(ad.is_zero(t) for t in diag_dots):
        dt = matrix_algebra.tridiagonal_matrix(*map(ad.instantiate_zeros, diag_dots))
        rhs = ad.add_tangents(rhs, neg(matrix_algebra.matmul(dt, x)))
    if ad.is_zero(rhs):
        return x, ad.Zero(ad.tangent_aval(aval_of(x)))
    return x, tridiagonal_solve_p.bind(dl, d, du, rhs, perturb_singular=perturb_singular)


tridiagonal_solve_p.def_jvp(_tds_jvp)


def _tds_transpose(ct, dl, d, du, b, *, perturb_singular):
    """Linear in b: the cotangent solves with Tᵀ (sub- and super-diagonals swapped)."""
    if any(reverse.is_undefined_primal(v) for v in (dl, d, du)):
        raise NotImplementedError("tridiagonal_solve is linear only in b")
    dl_t, du_t = matrix_algebra.shift(du, -1), matrix_algebra.shift(dl, 1)
    ct_b = tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)
    return [None, None, None, ct_b]


tridiagonal_solve_p.def_transpose(_tds_transpose)


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """X with T·X = b for the tridiagonal T with sub-diagonal ``dl`` (``dl[..., 0]``
    ignored), diagonal ``d`` and super-diagonal ``du`` (``du[..., -1]`` ignored)."""
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


# --- ormqr ----------------------------------------------------------------------------


def _ormqr_abstract_eval(a, taus, c, *, left, transpose):
    if a.ndim < 2 or c.ndim != a.ndim or taus.ndim != a.ndim - 1:
        raise ValueError(
            "ormqr requires a and c of rank >= 2 and taus of one rank less, got "
            f"a.shape={a.shape}, taus.shape={taus.shape} and c.shape={c.shape}"
        )
    q_rows = c.shape[-2] if left else c.shape[-1]
    if a.shape[-2] != q_rows or a.shape[:-2] != c.shape[:-2] or taus.shape[-1] > a.shape[-1]:
        raise ValueError(
            f"Incompatible shapes for ormqr: a.shape={a.shape}, taus.shape={taus.shape}, "
            f"c.shape={c.shape}, left={left}"
        )
    return ShapedArray(c.shape, c.dtype)


def _ormqr_lowering(ctx, a, taus, c, *, left, transpose):
    avals = list(ctx.avals_in)
    c_aval = avals[2]
    routine = "unmqr" if np.dtype(c_aval.dtype).kind == "c" else "ormqr"
    (out,) = _lapack.custom_call(
        _lapack.lapack_target(routine, c_aval.dtype), [a, taus, c], avals, [c_aval],
        num_batch_dims=c_aval.ndim - 2,
        config={"left": ir.BoolAttr.get(bool(left)), "transpose": ir.BoolAttr.get(bool(transpose))},
        aliases={0: 2}, matrix_operands=[True, False, True],
    )  # fmt: skip
    return [out]


def _ormqr_gpu_lowering(ctx, a, taus, c, *, left, transpose):
    avals = list(ctx.avals_in)
    (out,) = _gpu_solver.custom_call(
        _gpu_solver.solver(ctx, "ormqr"), [a, taus, c], avals, [avals[2]],
        config={"left": bool(left), "transpose": bool(transpose)}, aliases={0: 2},
    )  # fmt: skip
    return [out]


ormqr_p = standard_primitive("ormqr", _ormqr_abstract_eval, _ormqr_lowering, "cpu")
def_batch_sharding(ormqr_p, (2, 1, 2))
ormqr_p.def_lowering(_ormqr_gpu_lowering, "gpu")
_batch_front_rule(ormqr_p)


def ormqr(a, taus, c, *, left=True, transpose=False):
    """``c`` multiplied by Q (or Qᴴ with ``transpose``; on the left or the right), Q
    being the product of the Householder reflectors ``geqrf`` leaves in ``a``/``taus``."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


# --- cholesky_update ------------------------------------------------------------------


def _update_abstract_eval(r, w):
    check_dtype("cholesky_update", r.dtype, (FLOAT,), 0)
    check_dtype("cholesky_update", w.dtype, (FLOAT,), 1)
    if r.ndim != 2 or r.shape[0] != r.shape[1] or w.shape != r.shape[:1]:
        raise ValueError(
            "Rank-1 update to Cholesky decomposition takes a square matrix and a vector "
            f"of the same size as input, got {r.shape} and {w.shape}"
        )
    return ShapedArray(r.shape, r.dtype)


def _updated_factor(r, w):
    """The upper factor of Rᵀ·R + w·wᵀ."""
    n = aval_of(w).shape[0]
    outer = mul(broadcast_in_dim(w, (n, n), (0,)), broadcast_in_dim(w, (n, n), (1,)))
    gram = add(matrix_algebra.matmul(matrix_algebra.swap_last(r), r), outer)
    return [matrix_algebra.swap_last(matrix_algebra.tril(cholesky_p.bind(gram)))]


def _update_lowering(ctx, r, w):
    return matrix_algebra.inline(ctx, _updated_factor, [r, w], ctx.avals_in)


def _update_cuda_lowering(ctx, r, w):
    r_out, _ = _gpu_solver.custom_call(
        _gpu_solver.target(ctx, "_cholesky_update_ffi"), [r, w], ctx.avals_in, ctx.avals_in,
        aliases={0: 0, 1: 1}, num_non_batch_dims=None,
    )  # fmt: skip
    return [r_out]


cholesky_update_p = standard_primitive("cholesky_update", _update_abstract_eval, _update_lowering)
cholesky_update_p.def_lowering(_update_cuda_lowering, "cuda")


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor R' of Rᵀ·R + w·wᵀ, given the upper factor R."""
    return cholesky_update_p.bind(r_matrix, w_vector)


# --- symmetric_product ------------------------------------------------------------------


def _symprod_abstract_eval(a, c, *, alpha, beta):
    if a.ndim < 2 or c.ndim != a.ndim or c.shape[-1] != c.shape[-2]:
        raise ValueError(
            "symmetric_product requires a of rank >= 2 and square c of the same rank, got "
            f"{a.shape} and {c.shape}"
        )
    if c.shape[:-2] != a.shape[:-2] or c.shape[-1] != a.shape[-2]:
        raise ValueError(f"Incompatible shapes for symmetric_product: {a.shape} and {c.shape}")
    return ShapedArray(c.shape, dtypes.promote_types(a.dtype, c.dtype))


def _symprod_value(a, c, *, alpha, beta):
    dtype = aval_of(c).dtype
    product = matrix_algebra.matmul(a, matrix_algebra.swap_last(a))
    return add(mul(np.asarray(alpha, dtype), product), mul(np.asarray(beta, dtype), c))


def _symprod_lowering(ctx, a, c, *, alpha, beta):
    def value(a, c):
        return [_symprod_value(a, c, alpha=alpha, beta=beta)]

    return matrix_algebra.inline(ctx, value, [a, c], ctx.avals_in)


def _symprod_cuda_lowering(ctx, a, c, *, alpha, beta):
    a_aval, c_aval = ctx.avals_in
    scalar = ShapedArray((), c_aval.dtype)
    factors = [_lapack.constant(v, c_aval.dtype, ()) for v in (alpha, beta)]
    factors = [mb.broadcast_in_dim(f, scalar, []) for f in factors]
    (out,) = _gpu_solver.custom_call(
        _gpu_solver.solver(ctx, "syrk"), [a, c, *factors], [a_aval, c_aval, scalar, scalar],
        [c_aval], config={"transpose": False}, aliases={0: 1}, num_non_batch_dims=None,
    )  # fmt: skip
    return [out]


symmetric_product_p = standard_primitive(
    "symmetric_product", _symprod_abstract_eval, _symprod_lowering
)
def_batch_sharding(symmetric_product_p, (2, 2))
symmetric_product_p.def_lowering(_symprod_cuda_lowering, "cuda")
_batch_front_rule(symmetric_product_p)


def _symprod_jvp(primals, tangents, *, alpha, beta):
    a, c = primals
    a_dot, c_dot = tangents
    out = symmetric_product_p.bind(a, c, alpha=alpha, beta=beta)
    dtype = aval_of(out).dtype
    tangent = ad.Zero(ad.tangent_aval(aval_of(out)))
    if not ad.is_zero(a_dot):
        both = add(
            matrix_algebra.matmul(a_dot, matrix_algebra.swap_last(a)),
            matrix_algebra.matmul(a, matrix_algebra.swap_last(a_dot)),
        )
        tangent = ad.add_tangents(tangent, mul(np.asarray(alpha, dtype), both))
    if not ad.is_zero(c_dot):
        tangent = ad.add_tangents(tangent, mul(np.asarray(beta, dtype), c_dot))
    return out, tangent


symmetric_product_p.def_jvp(_symprod_jvp)


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """``alpha·a·aᵀ + beta·c``; with ``symmetrize_output`` the lower triangle is
    mirrored onto the upper one, so the result is exactly symmetric."""
    result = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
    if symmetrize_output:
        lower = matrix_algebra.tril(result)
        result = add(lower, matrix_algebra.swap_last(matrix_algebra.tril(result, -1)))
    return result
