"""Reductions over axes: ``reduce_sum[axes, out_sharding]``, ``reduce_max``,
``reduce_min``, ``reduce_prod``, ``reduce_and``, ``reduce_or``, ``reduce_xor`` (params
``axes``), ``argmax``/``argmin`` (``axes``, ``index_dtype``), as JAX 0.10.2 names them.
The general ``reduce`` with a user computation lives in :mod:`.reduce_general`.
"""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters import ad, batching
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ShapedArray, dtypes
from lamina.lax._common import ANY, NUMBER, aval_of, check_dtype, standard_primitive

__all__ = [
    "argmax",
    "argmax_p",
    "argmin",
    "argmin_p",
    "reduce",
    "reduce_and",
    "reduce_and_p",
    "reduce_max",
    "reduce_max_p",
    "reduce_min",
    "reduce_min_p",
    "reduce_or",
    "reduce_or_p",
    "reduce_p",
    "reduce_prod",
    "reduce_prod_p",
    "reduce_sum",
    "reduce_sum_p",
    "reduce_xor",
    "reduce_xor_p",
]


def _reduced_aval(name, x, axes, accepted) -> ShapedArray:
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    if not all(0 <= a < x.ndim for a in axes):
        raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for {x}.")
    if accepted is not ANY:
        check_dtype(name, x.dtype, (accepted,))
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


# Identities: where each monoid's reduction starts (also the padding of windows).


def max_identity(dtype) -> np.ndarray:
    """The smallest value of ``dtype``: where a maximum starts."""
    if dtype == dtypes.bool_:
        return np.array(False)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(-np.inf, dtype)
    return np.array(dtypes.iinfo(dtype).min, dtype)


def min_identity(dtype) -> np.ndarray:
    """The largest value of ``dtype``: where a minimum starts."""
    if dtype == dtypes.bool_:
        return np.array(True)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(np.inf, dtype)
    return np.array(dtypes.iinfo(dtype).max, dtype)


def and_identity(dtype) -> np.ndarray:
    """All bits set."""
    if dtype == dtypes.bool_:
        return np.array(True)
    return (
        np.array(-1).astype(dtype)
        if dtypes.issubdtype(dtype, np.signedinteger)
        else (np.array(dtypes.iinfo(dtype).max, dtype))
    )


def reduce_region(op, scalar_types, body):
    """Fills the region of a reduce-like ``op``: ``body(*block_args)`` returns the
    values the region yields."""
    block = op.regions[0].blocks.append(*scalar_types, *scalar_types)
    with ir.InsertionPoint(block):
        hlo.return_(list(body(*block.arguments)))


def _reduce(ctx, x, axes, init_value, combine):
    aval_out = ctx.avals_out[0]
    scalar = ShapedArray((), aval_out.dtype)
    init = ctx.constant(init_value, scalar)
    op = hlo.ReduceOp([ctx.ir_type(aval_out)], [x], [init], list(axes))
    reduce_region(op, [ctx.ir_type(scalar)], lambda a, b: [combine(a, b)])
    return list(op.results)


_LOGICAL = "logical"


def _monoid(name, accepted, identity, combine, params=("axes",)):
    """A reduction primitive ``name`` folding ``combine`` from ``identity(dtype)``."""

    def abstract_eval(x, *, axes, **_):
        if accepted == _LOGICAL:
            if not (x.dtype == dtypes.bool_ or dtypes.issubdtype(x.dtype, np.integer)):
                raise TypeError(
                    f"logical reduction requires operand dtype bool or int, got {x.dtype.name}."
                )
            return _reduced_aval(name, x, axes, ANY)
        return _reduced_aval(name, x, axes, accepted)

    def lowering(ctx, x, *, axes, **_):
        return _reduce(ctx, x, axes, identity(ctx.avals_in[0].dtype), getattr(hlo, combine))

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defreducer(prim)  # vmap: the axes shift past the batch dim
    return prim


reduce_sum_p = _monoid("reduce_sum", NUMBER, lambda d: np.zeros((), d), "add")
reduce_max_p = _monoid("reduce_max", ANY, max_identity, "maximum")
reduce_min_p = _monoid("reduce_min", ANY, min_identity, "minimum")
reduce_prod_p = _monoid("reduce_prod", NUMBER, lambda d: np.ones((), d), "multiply")
reduce_and_p = _monoid("reduce_and", _LOGICAL, and_identity, "and_")
reduce_or_p = _monoid("reduce_or", _LOGICAL, lambda d: np.zeros((), d), "or_")
reduce_xor_p = _monoid("reduce_xor", _LOGICAL, lambda d: np.zeros((), d), "xor")


def _axes(axes) -> tuple[int, ...]:
    return tuple(operator.index(a) for a in axes)


def reduce_sum(operand, axes, *, out_sharding=None):
    """The sum of ``operand`` over ``axes``."""
    return reduce_sum_p.bind(operand, axes=_axes(axes), out_sharding=out_sharding)


def reduce_max(operand, axes):
    """The maximum of ``operand`` over ``axes`` (NaN propagates)."""
    return reduce_max_p.bind(operand, axes=_axes(axes))


def reduce_min(operand, axes):
    """The minimum of ``operand`` over ``axes`` (NaN propagates)."""
    return reduce_min_p.bind(operand, axes=_axes(axes))


def reduce_prod(operand, axes):
    """The product of ``operand`` over ``axes``."""
    return reduce_prod_p.bind(operand, axes=_axes(axes))


def reduce_and(operand, axes):
    """Bitwise (logical, for booleans) AND of ``operand`` over ``axes``."""
    return reduce_and_p.bind(operand, axes=_axes(axes))


def reduce_or(operand, axes):
    """Bitwise (logical, for booleans) OR of ``operand`` over ``axes``."""
    return reduce_or_p.bind(operand, axes=_axes(axes))


def reduce_xor(operand, axes):
    """Bitwise (logical, for booleans) XOR of ``operand`` over ``axes``."""
    return reduce_xor_p.bind(operand, axes=_axes(axes))


# ------------------------------------------------------------------ differentiation


def _kept(shape, axes):
    return tuple(i for i in range(len(shape)) if i not in axes)


def _chooser_jvp(prim):
    """The tangent at the extremum; where several elements tie for it, their mean."""

    def jvp(primals, tangents, *, axes):
        from lamina.lax.conversion import convert_element_type
        from lamina.lax.elementwise import div, eq, mul
        from lamina.lax.shapes import broadcast_in_dim

        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        shape = aval_of(x).shape
        at_ext = eq(x, broadcast_in_dim(ans, shape, _kept(shape, axes)))
        at_ext = convert_element_type(at_ext, aval_of(x).dtype)
        counts = reduce_sum_p.bind(at_ext, axes=axes, out_sharding=None)
        picked = reduce_sum_p.bind(
            mul(ad.instantiate_zeros(t), at_ext), axes=axes, out_sharding=None
        )
        return ans, div(picked, counts)

    prim.def_jvp(jvp)


_chooser_jvp(reduce_max_p)
_chooser_jvp(reduce_min_p)
ad.deflinear(reduce_sum_p)
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p):
    ad.zero_jvp(_p)  # integer and boolean results


def _reduce_prod_jvp(primals, tangents, *, axes):
    """The tangent is the sum of ``t_j`` times the product of the other elements,
    written without dividing by zero: ``P / x_j`` over the non-zero elements, times the
    zero element when there is one (kept symbolic, so second derivatives stay right
    there), or 0 when there are several."""
    from lamina.lax.conversion import convert_element_type
    from lamina.lax.elementwise import div, eq, mul, ne, select_n
    from lamina.lax.shapes import broadcast_in_dim

    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    aval = aval_of(x)
    kept = _kept(aval.shape, axes)

    def spread(v):
        return broadcast_in_dim(v, aval.shape, kept if np.ndim(v) else ())

    one, zero = spread(np.ones((), aval.dtype)), spread(np.zeros((), aval.dtype))
    nonzero = ne(x, zero)
    safe = select_n(nonzero, one, x)
    zeros = reduce_sum_p.bind(
        convert_element_type(eq(x, zero), np.int32), axes=axes, out_sharding=None
    )
    the_zero = spread(reduce_sum_p.bind(select_n(nonzero, x, zero), axes=axes, out_sharding=None))
    one_zero_factor = select_n(nonzero, one, the_zero)
    factor = select_n(
        spread(eq(zeros, np.int32(0))),
        select_n(spread(eq(zeros, np.int32(1))), zero, one_zero_factor),
        one,
    )
    others = mul(div(spread(reduce_prod_p.bind(safe, axes=axes)), safe), factor)
    tangent = reduce_sum_p.bind(mul(ad.instantiate_zeros(t), others), axes=axes, out_sharding=None)
    return ans, tangent


reduce_prod_p.def_jvp(_reduce_prod_jvp)


def _reduce_sum_transpose(ct, operand, *, axes, out_sharding):
    """The cotangent broadcasts back over the summed axes."""
    from lamina.lax.shapes import broadcast_in_dim

    shape = operand.aval.shape
    return [broadcast_in_dim(ct, shape, _kept(shape, axes))]


reduce_sum_p.def_transpose(_reduce_sum_transpose)


# ------------------------------------------------------------------ argmax / argmin


def _arg_abstract_eval(name):
    def abstract_eval(x, *, axes, index_dtype):
        from lamina.lax._common import FLOAT, INT

        (axis,) = axes
        if not 0 <= axis < x.ndim:
            raise ValueError(f"Invalid axis {axis} for operand shape {x.shape}")
        if x.shape[axis] == 0:
            raise ValueError(
                "argmin and argmax require non-empty reduced dimension. "
                f"operand.shape={x.shape} axis={axis}"
            )
        if not dtypes.issubdtype(index_dtype, np.integer):
            raise TypeError(
                f"index_dtype must be an integer type, but got {dtypes.dtype(index_dtype).name}"
            )
        if x.dtype != dtypes.bool_:
            check_dtype(
                "gt" if name == "argmax" else "lt",
                x.dtype,
                (INT, FLOAT, ("bool", np.bool_)),
                position=0,
            )
        shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        return ShapedArray(shape, index_dtype)

    return abstract_eval


def _compare(a, b, direction, dtype):
    from lamina.lax.elementwise import _compare_type

    kind = hlo.ComparisonTypeAttr.get(_compare_type(dtype))
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction), compare_type=kind)


def _arg_lowering(direction, identity):
    """A two-operand reduce of (value, index) pairs: the better value wins (NaN beats
    everything, as the first NaN is the answer); on a tie the smaller index."""

    def lowering(ctx, x, *, axes, index_dtype):
        (axis,) = axes
        aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
        dtype = aval_in.dtype
        index_aval = ShapedArray(aval_in.shape, index_dtype)
        iota = hlo.iota(ctx.ir_type(index_aval), axis)
        value_scalar, index_scalar = ShapedArray((), dtype), ShapedArray((), index_dtype)
        inits = [
            ctx.constant(identity(dtype), value_scalar),
            ctx.constant(np.zeros((), index_dtype), index_scalar),
        ]
        value_out = ShapedArray(aval_out.shape, dtype)
        op = hlo.ReduceOp(ctx.ir_types([value_out, aval_out]), [x, iota], inits, [axis])

        def body(a, ia, b, ib):
            pick = _compare(a, b, direction, dtype)
            if dtypes.issubdtype(dtype, np.inexact):
                pick = hlo.or_(pick, _compare(a, a, "NE", dtype))
            tie = hlo.and_(_compare(a, b, "EQ", dtype), _compare(ia, ib, "LT", index_dtype))
            return [hlo.select(pick, a, b), hlo.select(hlo.or_(pick, tie), ia, ib)]

        reduce_region(op, ctx.ir_types([value_scalar, index_scalar]), body)
        return [op.results[1]]

    return lowering


argmax_p = standard_primitive(
    "argmax", _arg_abstract_eval("argmax"), _arg_lowering("GT", max_identity)
)
argmin_p = standard_primitive(
    "argmin", _arg_abstract_eval("argmin"), _arg_lowering("LT", min_identity)
)
for _p in (argmax_p, argmin_p):
    batching.defreducer(_p)
    ad.zero_jvp(_p)  # integer results


def _arg(prim, operand, axis, index_dtype):
    dtype = dtypes.check_and_canonicalize_user_dtype(index_dtype, prim.name)
    return prim.bind(operand, axes=(operator.index(axis),), index_dtype=dtype)


def argmax(operand, axis, index_dtype):
    """The index of the largest element along ``axis`` (the first, on ties; the first
    NaN, if any)."""
    return _arg(argmax_p, operand, axis, index_dtype)


def argmin(operand, axis, index_dtype):
    """The index of the smallest element along ``axis`` (the first, on ties; the first
    NaN, if any)."""
    return _arg(argmin_p, operand, axis, index_dtype)


from lamina.lax._reduce_general import reduce, reduce_p  # noqa: E402  (it uses the above)
