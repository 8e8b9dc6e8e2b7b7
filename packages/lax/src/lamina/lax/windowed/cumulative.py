"""Cumulative reductions: ``cumsum``, ``cumprod``, ``cummax``, ``cummin``,
``cumlogsumexp`` (params ``axis``, ``reverse``, as JAX 0.10.2 names them).

Each lowers as JAX lowers it on CPU: one ``stablehlo.reduce_window`` whose window spans
the whole axis and whose padding puts ``n - 1`` identities before (after, reversed) the
operand, so output ``i`` folds elements ``0..i`` (``i..n-1``).
"""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters import ad, custom_jvp
from lamina.interpreters.mlir import hlo
from lamina.ir import ShapedArray, ShardingTypeError, spec_of
from lamina.lax.base import primitives as prims
from lamina.lax.base.operands import FLOAT, NUMBER, aval_of, check_dtype, standard_primitive
from lamina.lax.base.primitives import (
    broadcast_in_dim,
    compare_hlo,
    max_identity,
    min_identity,
    reduce_region,
)
from lamina.lax.control_flow.associative_scan import associative_scan
from lamina.lax.windowed.windows import dynamic_reduce_window, is_static_window, window_attrs

__all__ = [
    "cumlogsumexp",
    "cumlogsumexp_p",
    "cummax",
    "cummax_p",
    "cummin",
    "cummin_p",
    "cumprod",
    "cumprod_p",
    "cumsum",
    "cumsum_p",
]


def cumulative_window(shape, axis, reverse):
    """The reduce_window params that make a windowed fold cumulative along ``axis``."""
    n, ndim = shape[axis], len(shape)
    window = tuple(n if i == axis else 1 for i in range(ndim))
    pad = (0, n - 1) if reverse else (n - 1, 0)
    return dict(
        window_dimensions=window,
        window_strides=(1,) * ndim,
        padding=tuple(pad if i == axis else (0, 0) for i in range(ndim)),
        base_dilation=(1,) * ndim,
        window_dilation=(1,) * ndim,
    )


def _logaddexp_hlo(a, b, dtype):
    """log(exp(a) + exp(b)) without overflow; where ``a - b`` is NaN (both infinite of
    one sign, or a NaN) the sum ``a + b`` gives the right infinity or NaN."""
    big = hlo.maximum(a, b)
    diff = hlo.subtract(a, b)
    is_nan = compare_hlo(diff, diff, "NE", dtype)
    softplus = hlo.log_plus_one(hlo.exponential(hlo.negate(hlo.abs(diff))))
    return hlo.select(is_nan, hlo.add(a, b), hlo.add(big, softplus))


def _cumulative(name, identity, combine, accepted=(NUMBER,)):
    def abstract_eval(x, *, axis, reverse):
        check_dtype(name, x.dtype, accepted)
        if axis < 0 or axis >= x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")
        return x

    def lowering(ctx, x, *, axis, reverse):
        aval = ctx.avals_out[0]
        if aval.shape[axis] == 0:  # XLA rejects windows of size 0; nothing to accumulate
            return [x]
        scalar = ShapedArray((), aval.dtype)
        init = ctx.constant(identity(aval.dtype), scalar)
        params = cumulative_window(aval.shape, axis, reverse)
        if not is_static_window(params):

            def body(a, b):
                return [combine(a, b, aval.dtype)]

            types = [ctx.ir_type(aval)]
            return dynamic_reduce_window(
                ctx, types, [x], [init], [ctx.ir_type(scalar)], body, params
            )
        op = hlo.ReduceWindowOp([ctx.ir_type(aval)], [x], [init], **window_attrs(**params))
        reduce_region(op, [ctx.ir_type(scalar)], lambda a, b: [combine(a, b, aval.dtype)])
        return list(op.results)

    prim = standard_primitive(name, abstract_eval, lowering)

    def sharding_rule(x, *, axis, reverse):
        if spec_of(x)[axis] is not None:
            raise ShardingTypeError(
                "Input should be unsharded over the axis being reduced. Got input "
                f"type={x} and axis={axis}"
            )
        return spec_of(x)

    prim.def_sharding(sharding_rule)

    def batching_rule(axis_data, vals, dims, *, axis, reverse):
        (x,), (d,) = vals, dims
        return prim.bind(x, axis=axis + (d <= axis), reverse=reverse), d

    prim.def_batching(batching_rule)
    return prim


cumsum_p = _cumulative("cumsum", lambda d: np.zeros((), d), lambda a, b, _: hlo.add(a, b))
cumprod_p = _cumulative("cumprod", lambda d: np.ones((), d), lambda a, b, _: hlo.multiply(a, b))
cummax_p = _cumulative("cummax", max_identity, lambda a, b, _: hlo.maximum(a, b))
cummin_p = _cumulative("cummin", min_identity, lambda a, b, _: hlo.minimum(a, b))
cumlogsumexp_p = _cumulative(
    "cumlogsumexp",
    lambda d: np.array(-np.inf, d),
    _logaddexp_hlo,
    (FLOAT,),
)


def _bind(prim, operand, axis, reverse):
    axis = operator.index(axis)
    if axis < 0:
        raise ValueError("XLA operations do not allow negative axes")
    return prim.bind(operand, axis=axis, reverse=bool(reverse))


def cumsum(operand, axis=0, reverse=False):
    """Cumulative sum along ``axis`` (from the end with ``reverse``)."""
    return _bind(cumsum_p, operand, axis, reverse)


def cumprod(operand, axis=0, reverse=False):
    """Cumulative product along ``axis`` (from the end with ``reverse``)."""
    return _bind(cumprod_p, operand, axis, reverse)


def cummax(operand, axis=0, reverse=False):
    """Cumulative maximum along ``axis`` (from the end with ``reverse``)."""
    return _bind(cummax_p, operand, axis, reverse)


def cummin(operand, axis=0, reverse=False):
    """Cumulative minimum along ``axis`` (from the end with ``reverse``)."""
    return _bind(cummin_p, operand, axis, reverse)


def cumlogsumexp(operand, axis=0, reverse=False):
    """Cumulative ``log(sum(exp(x)))`` along ``axis`` (from the end with ``reverse``),
    computed without overflow."""
    return _bind(cumlogsumexp_p, operand, axis, reverse)


# ------------------------------------------------------------------ differentiation

ad.deflinear(cumsum_p)


def _cumsum_transpose(ct, operand, *, axis, reverse):
    """Each input feeds every later output: its cotangent sums the later ones."""
    return [cumsum_p.bind(ad.instantiate_zeros(ct), axis=axis, reverse=not reverse)]


cumsum_p.def_transpose(_cumsum_transpose)


def logaddexp(a, b):
    """log(exp(a) + exp(b)) of real floats in lax operations, with JAX's custom
    derivative: where ``a - b`` is NaN (both infinite of one sign, or a NaN) the sum
    ``a + b`` is the answer."""
    top = prims.max(a, b)
    diff = prims.sub(a, b)
    is_nan = prims.ne(diff, diff)
    both = prims.add(a, b)
    softplus = prims.log1p(prims.exp(prims.neg(prims.abs(diff))))
    return prims.select_n(is_nan, prims.add(top, softplus), both)


def _drop_posinf(x):
    """``x`` with +inf replaced by 0 (keeps the derivative's weights finite)."""
    is_inf = prims.eq(x, np.array(np.inf, aval_of(x).dtype))
    return prims.select_n(
        is_inf, x, broadcast_in_dim(np.zeros((), aval_of(x).dtype), aval_of(x).shape, ())
    )


def _logaddexp_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    out = logaddexp(a, b)
    weight_a = prims.exp(prims.sub(_drop_posinf(a), _drop_posinf(out)))
    term_a = prims.mul(ta, weight_a)
    weight_b = prims.exp(prims.sub(_drop_posinf(b), _drop_posinf(out)))
    return out, prims.add(term_a, prims.mul(tb, weight_b))


logaddexp = custom_jvp(logaddexp)
logaddexp.defjvp(_logaddexp_jvp)


def _scan_jvp(combine):
    """As JAX: the JVP of the same running fold written as an associative scan of
    ``combine`` (for cumlogsumexp this keeps each step's weights in range however far
    apart the elements are)."""

    def jvp(primals, tangents, *, axis, reverse):
        def scan(v):
            return [associative_scan(combine, v, reverse=reverse, axis=axis)]

        (ans,), (tangent,) = ad.jvp_flat(scan, list(primals), list(tangents))
        return ans, tangent

    return jvp


cumlogsumexp_p.def_jvp(_scan_jvp(logaddexp))
cumprod_p.def_jvp(_scan_jvp(prims.mul))
cummax_p.def_jvp(_scan_jvp(prims.max))
cummin_p.def_jvp(_scan_jvp(prims.min))
