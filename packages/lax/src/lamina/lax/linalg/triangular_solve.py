"""``triangular_solve``: op(A)·X = B or X·op(A) = B for triangular A (LAPACK ``trsm``).

op(A) is A, Aᵀ, conj(A) or Aᴴ (``transpose_a``, ``conjugate_a``). Linear in B: its
transpose solves with op(A)ᵀ. Off the CPU (GPUs) it is ``stablehlo.triangular_solve``,
which XLA runs with cuBLAS's ``trsm``, as JAX lowers it.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, reverse
from lamina.interpreters.mlir import chlo, hlo, ir
from lamina.ir import ShapedArray, ShardingTypeError, dtypes, padded_sharding, spec_of
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import convert_element_type, neg
from lamina.lax.linalg import _lapack, matrix_algebra

__all__ = ["triangular_solve", "triangular_solve_p"]

_PARAMS = ("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal")


def _abstract_eval(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    if a.ndim < 2 or b.ndim != a.ndim:
        raise TypeError(
            f"triangular_solve requires a and b to have the same rank of at least 2, got "
            f"a of shape {a.shape} and b of shape {b.shape}"
        )
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"triangular_solve requires square matrices for a, got shape {a.shape}")
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError(
            "triangular_solve requires both arguments to have the same number of "
            f"dimensions and equal batch dimensions, got {a.shape} and {b.shape}."
        )
    common = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-1] != common:
        raise ValueError(
            f"Incompatible shapes for arguments to triangular_solve: {a.shape} and {b.shape}."
        )
    if a.dtype != b.dtype:
        raise TypeError(
            f"triangular_solve requires a and b of the same dtype, got {a.dtype.name} and "
            f"{b.dtype.name}"
        )
    return ShapedArray(b.shape, b.dtype)


def _lowering(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a_aval, b_aval = ctx.avals_in
    if conjugate_a and not transpose_a:  # LAPACK has no conj-without-transpose mode
        a = _conj_ir(a, a_aval)
        conjugate_a = False
    trans = "C" if (transpose_a and conjugate_a) else ("T" if transpose_a else "N")
    nb = a_aval.ndim - 2
    config = {
        "diag": _lapack.u8("U" if unit_diagonal else "N"),
        "side": _lapack.u8("L" if left_side else "R"),
        "trans_x": _lapack.u8(trans),
        "uplo": _lapack.u8("L" if lower else "U"),
    }
    (out,) = _lapack.custom_call(
        _lapack.lapack_target("trsm", a_aval.dtype),
        [a, b],
        [a_aval, b_aval],
        [b_aval],
        num_batch_dims=nb,
        config=config,
        aliases={0: 1},
    )
    return [out]


def _conj_ir(a, aval):
    if not dtypes.issubdtype(aval.dtype, np.complexfloating):
        return a
    real = hlo.real(a)
    imag = hlo.negate(hlo.imag(a))
    return hlo.complex(real, imag)


def _hlo_lowering(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    if conjugate_a and not transpose_a:
        a = chlo.conj(a)
        conjugate_a = False
    transpose = "NO_TRANSPOSE" if not transpose_a else "ADJOINT" if conjugate_a else "TRANSPOSE"
    out = hlo.triangular_solve(
        a,
        b,
        ir.BoolAttr.get(left_side),
        ir.BoolAttr.get(lower),
        ir.BoolAttr.get(unit_diagonal),
        hlo.TransposeAttr.get(transpose),
    )
    return [out]


triangular_solve_p = standard_primitive("triangular_solve", _abstract_eval, _hlo_lowering)
triangular_solve_p.def_lowering(_lowering, "cpu")


@triangular_solve_p.def_sharding
def _sharding_rule(a, b, *, left_side, transpose_a, **_):
    """Batch dimensions split alike; neither operand split over the contracted axis."""
    (*a_batch, a0, a1), (*b_batch, b0, b1) = spec_of(a), spec_of(b)
    a_spec, b_spec = (a0, a1), (b0, b1)
    if a_batch != b_batch:
        raise ShardingTypeError(
            "All inputs to triangular_solve must have the same batch sharding, but got "
            f"{tuple(a_batch)} and {tuple(b_batch)}."
        )
    like = a.type_sharding or b.type_sharding
    for name, x, spec, axis in (
        ("a", a, a_spec, left_side ^ transpose_a),
        ("b", b, b_spec, not left_side),
    ):
        if spec[axis] is not None:
            raise ShardingTypeError(
                f"triangular solve input `{name}` must be unsharded on the contracting axis, "
                f"but got {padded_sharding(x, like).spec} with left_side={left_side} and "
                f"transpose_a={transpose_a}."
            )
    out = (a_spec[transpose_a], b_spec[1]) if left_side else (b_spec[0], a_spec[not transpose_a])
    return (*a_batch, *out)


def _jvp(primals, tangents, **params):
    a, b = primals
    a_dot, b_dot = tangents
    out = triangular_solve_p.bind(a, b, **params)
    terms = []  # JAX's order: the term of dA, then that of dB
    if not ad.is_zero(a_dot):
        terms.append(_jvp_a(a_dot, out, a, **params))
    if not ad.is_zero(b_dot):
        terms.append(triangular_solve_p.bind(a, b_dot, **params))
    tangent = ad.Zero(ad.tangent_aval(aval_of(out)))
    for term in terms:
        tangent = ad.add_tangents(tangent, term)
    return out, tangent


def _jvp_a(a_dot, out, a, **params):
    """X = op(A)⁻¹B: dX = -op(A)⁻¹·op(dA)·X; X = B·op(A)⁻¹: dX = -X·op(dA)·op(A)⁻¹, with
    the solve and the product in the cheaper order (as JAX)."""
    k = 1 if params["unit_diagonal"] else 0
    g = matrix_algebra.tril(a_dot, -k) if params["lower"] else matrix_algebra.triu(a_dot, k)
    g = neg(g)
    if params["transpose_a"]:
        g = matrix_algebra.swap_last(g)
    if params["conjugate_a"]:
        g = matrix_algebra.conj(g)
    m, n = aval_of(out).shape[-2:]

    def solve(rhs):
        return triangular_solve_p.bind(a, rhs, **params)

    if params["left_side"]:
        if m > n:
            return solve(matrix_algebra.matmul(g, out))
        return matrix_algebra.matmul(solve(g), out)
    if m < n:
        return solve(matrix_algebra.matmul(out, g))
    return matrix_algebra.matmul(out, solve(g))


triangular_solve_p.def_jvp(_jvp)


def _transpose(ct, a, b, **params):
    if reverse.is_undefined_primal(a):
        raise NotImplementedError("triangular_solve is linear only in b")
    params = dict(params, transpose_a=not params["transpose_a"])
    return [None, triangular_solve_p.bind(a, ct, **params)]


triangular_solve_p.def_transpose(_transpose)


def _batching(axis_data, vals, dims, **params):
    a, b = matrix_algebra.move_batch_front(axis_data, vals, dims)
    return triangular_solve_p.bind(a, b, **params), 0


triangular_solve_p.def_batching(_batching)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):  # fmt: skip
    """X with op(A)·X = B (``left_side``) or X·op(A) = B, for triangular A (only the
    ``lower`` or upper triangle of A is read; its diagonal is taken as ones with
    ``unit_diagonal``). op(A) is A, transposed and/or conjugated as asked."""
    a_aval, b_aval = aval_of(a), aval_of(b)
    conjugate_a = conjugate_a and dtypes.issubdtype(a_aval.dtype, np.complexfloating)
    if b_aval.dtype != a_aval.dtype:
        b = convert_element_type(b, a_aval.dtype)
    return triangular_solve_p.bind(
        a,
        b,
        left_side=bool(left_side),
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a),
        unit_diagonal=bool(unit_diagonal),
    )
