"""The general ``reduce``: operands (a pytree) folded over ``dimensions`` with a user
computation, traced to a Jaxpr that becomes the body of ``stablehlo.reduce``.

``reduce_p`` has JAX 0.10.2's params ``computation``, ``jaxpr`` (a ClosedJaxpr of
scalars) and ``dimensions``; its operands are the arrays then the initial values. As in
JAX, a monoid computation (``add`` from 0, ``mul`` from 1, ``max``/``min`` from their
identities, ``bitwise_and``/``or``/``xor`` of booleans) with a concrete initial value
becomes the matching ``reduce_*`` primitive.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from lamina.interpreters import (
    Tracer,
    ad,
    batching,
    def_standard_impl,
    eval_jaxpr,
    lower_jaxpr_body,
    trace_to_jaxpr,
)
from lamina.interpreters.mlir import hlo
from lamina.ir import Primitive, ShapedArray, dtypes, spec_of, tree_util
from lamina.lax.base import primitives as prims
from lamina.lax.base.operands import ANY, aval_of
from lamina.lax.base.primitives import broadcast_in_dim, reshape
from lamina.lax.base.reshaping import pad, slice, squeeze

__all__ = ["reduce", "reduce_p"]


def scalar_jaxpr(computation, init_tree, scalar_avals, name):
    """``computation(a, b)`` traced on scalars of ``scalar_avals`` (two copies of the
    initial values' tree); its flat outputs must match the initial values."""

    def flat(*args):
        n = len(scalar_avals)
        a = tree_util.tree_unflatten(init_tree, list(args[:n]))
        b = tree_util.tree_unflatten(init_tree, list(args[n:]))
        out, out_tree = tree_util.tree_flatten(computation(a, b))
        if len(out) != n:
            raise ValueError(
                f"{name} computation must produce {n} values (one for each initial "
                f"value), but produces {len(out)} instead"
            )
        if out_tree != init_tree:
            raise ValueError(
                f"{name} computation output must have the same tree structure as "
                f"init_values: {out_tree} vs. {init_tree}"
            )
        return out

    closed, _ = trace_to_jaxpr(flat, list(scalar_avals) * 2, name)
    for var, aval in zip(closed.jaxpr.outvars, scalar_avals, strict=True):
        if var.aval.shape != () or var.aval.dtype != aval.dtype:
            raise TypeError(
                f"{name} computation must return scalars of the initial values' dtypes "
                f"{[a.dtype.name for a in scalar_avals]}, got {var.aval.str_short()}"
            )
    return closed


def pair_jvp_jaxpr(closed, differentiable):
    """The reduction Jaxpr over (primal, tangent) pairs: inputs ``(acc_p..., acc_t...,
    x_p..., x_t...)`` for the ``differentiable`` operands, outputs ``(p..., t...)``. A
    fold of an associative computation stays associative on pairs."""
    n = len(differentiable)
    avals = closed.in_avals[:n]
    t_avals = [a for a, d in zip(avals, differentiable, strict=True) if d]
    k = len(t_avals)

    def fun(*args):
        acc_p, acc_t = args[:n], iter(args[n : n + k])
        x_p, x_t = args[n + k : 2 * n + k], iter(args[2 * n + k :])
        tans = [
            next(acc_t) if d else ad.Zero(ad.tangent_aval(a))
            for a, d in zip(avals, differentiable, strict=True)
        ]
        tans += [
            next(x_t) if d else ad.Zero(ad.tangent_aval(a))
            for a, d in zip(avals, differentiable, strict=True)
        ]
        outs, out_t = ad.jvp_flat(
            lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), [*acc_p, *x_p], tans
        )
        kept = [ad.instantiate_zeros(t) for t, d in zip(out_t, differentiable, strict=True) if d]
        return [*outs, *kept]

    pair, _ = trace_to_jaxpr(fun, [*avals, *t_avals] * 2, "jvp of reduction")
    return pair


# ------------------------------------------------------------------ the primitive


def _abstract_eval(*avals, computation, jaxpr, dimensions):
    n = len(avals) // 2
    operands, inits = avals[:n], avals[n:]
    if any(o.dtype != i.dtype for o, i in zip(operands, inits, strict=True)):
        raise TypeError(
            "reduce operand dtypes should match corresponding initial value dtypes, got "
            f"operands={list(operands)} and initial_values={list(inits)}"
        )
    if len({o.shape for o in operands}) > 1:
        raise ValueError(
            f"reduce operands must all have the same shape, got {[o.shape for o in operands]}"
        )
    return [
        prims._reduced_aval("reduce", o, dimensions, ANY).update(weak_type=False) for o in operands
    ]


def _lowering(ctx, *args, computation, jaxpr, dimensions):
    n = len(args) // 2
    op = hlo.ReduceOp(ctx.ir_types(ctx.avals_out), list(args[:n]), list(args[n:]), list(dimensions))
    scalars = [ShapedArray((), a.dtype) for a in ctx.avals_out]
    mctx = ctx.module_context
    prims.reduce_region(
        op,
        ctx.ir_types(scalars),
        lambda *xs: lower_jaxpr_body(mctx, jaxpr.jaxpr, jaxpr.consts, list(xs)),
    )
    return list(op.results)


reduce_p = Primitive("reduce")
reduce_p.multiple_results = True
reduce_p.def_abstract_eval(_abstract_eval)
reduce_p.def_lowering(_lowering)
reduce_p.def_sharding(  # each operand's kept dimensions keep their splits
    lambda *avals, dimensions, **_: [
        tuple(e for i, e in enumerate(spec_of(o)) if i not in dimensions)
        for o in avals[: len(avals) // 2]
    ]
)
def_standard_impl(reduce_p)


def _batching(axis_data, vals, dims, *, computation, jaxpr, dimensions):
    n = len(vals) // 2
    if any(d is not batching.not_mapped for d in dims[n:]):
        raise NotImplementedError("reduce with batched initial values is not supported under vmap")
    operands = [
        batching.bdim_at_front(v, d, axis_data.size)
        for v, d in zip(vals[:n], dims[:n], strict=True)
    ]
    dims_moved = tuple(d + 1 for d in dimensions)
    outs = reduce_p.bind(
        *operands, *vals[n:], computation=computation, jaxpr=jaxpr, dimensions=dims_moved
    )
    return outs, [0] * n


reduce_p.def_batching(_batching)


def tree_reduce_jvp(reducer, init_values, primals, tangents, axes):
    """JAX's JVP of a reduction: the JVP of the same reduction written as a tree of
    halvings (slices, padded with the initial values where a level is odd) combined
    elementwise by ``reducer`` (a function of lhs... and rhs... returning a list), over
    the reduced axes moved to the front and flattened. Returns the primal outputs and
    their tangents."""
    shape = tuple(aval_of(primals[0]).shape)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    size = math.prod(shape[a] for a in axes)
    new_shape = (size, *(shape[i] for i in kept))
    permutation = tuple(axes) + kept
    primals = [reshape(x, new_shape, permutation) for x in primals]
    tangents = [t if ad.is_zero(t) else reshape(t, new_shape, permutation) for t in tangents]
    for _ in range(len(kept) + 1):
        reducer = batching.vmap(reducer)
    ndim = len(new_shape)

    def halves(x, start, stop):
        starts, limits = [0] * ndim, list(aval_of(x).shape)
        starts[0], limits[0] = start, stop
        return slice(x, starts, limits, [1] * ndim)

    def tree(*xs):
        while aval_of(xs[0]).shape[0] > 1:
            n = aval_of(xs[0]).shape[0]
            n1 = (n + 1) // 2
            xs1 = [halves(x, 0, n1) for x in xs]
            xs2 = [halves(x, n1, n) for x in xs]
            if n - n1 != n1:
                config = [(0, 1, 0)] + [(0, 0, 0)] * (ndim - 1)
                xs2 = [pad(x, i, config) for x, i in zip(xs2, init_values, strict=True)]
            xs = reducer(*xs1, *xs2)
        if aval_of(xs[0]).shape[0] == 0:
            return [broadcast_in_dim(i, new_shape[1:], ()) for i in init_values]
        return [squeeze(x, (0,)) for x in xs]

    return ad.jvp_flat(tree, primals, tangents)


def _jvp(primals, tangents, *, computation, jaxpr, dimensions):
    """As JAX: the JVP of the same reduction written as a tree of halvings (so reverse
    mode works too)."""
    n = len(primals) // 2
    if any(not ad.is_zero(t) for t in tangents[n:]):
        raise NotImplementedError(
            "Gradient of general lax.reduce with non-zero tangents for initial values to "
            "reduction not implemented"
        )

    def reducer(*xs):
        return list(eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs))

    return tree_reduce_jvp(reducer, primals[n:], primals[:n], tangents[:n], dimensions)


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,) = primals
    one = np.ones((), aval_of(x).dtype)
    (ans,), (t,) = tree_reduce_jvp(lambda a, b: [prims.mul(a, b)], [one], primals, tangents, axes)
    return ans, t


# reduce_prod's rule is the tree reduction defined here.
prims.reduce_prod_p.def_jvp(_reduce_prod_jvp)
reduce_p.def_jvp(_jvp)


# ------------------------------------------------------------------ the function


def _is_concrete_scalar(x) -> bool:
    if isinstance(x, Tracer):
        return False
    return np.shape(x) == ()


def _monoid_reducer(computation, init_values):
    """The ``reduce_*`` primitive's function that ``computation`` from ``init_values``
    is, as JAX recognises them; None otherwise."""
    if len(init_values) != 1 or not _is_concrete_scalar(init_values[0]):
        return None
    (init,) = init_values
    dtype = aval_of(init).dtype
    value = np.asarray(init)
    table = [
        ("add", lambda: 0, prims.reduce_sum),
        ("mul", lambda: 1, prims.reduce_prod),
        ("max", lambda: prims.max_identity(dtype), prims.reduce_max),
        ("min", lambda: prims.min_identity(dtype), prims.reduce_min),
    ]
    if dtype == dtypes.bool_:
        table += [
            ("bitwise_and", lambda: True, prims.reduce_and),
            ("bitwise_or", lambda: False, prims.reduce_or),
            ("bitwise_xor", lambda: False, prims.reduce_xor),
        ]
    for name, identity, reducer in table:
        op = getattr(prims, name, None)
        if op is not None and computation is op:
            return reducer if np.equal(value, identity()) else None
    return None


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """Folds ``operands`` (arrays, or a pytree of them) over ``dimensions`` with
    ``computation(accumulator, element)`` from ``init_values`` (scalars of the same tree).
    ``computation`` should be associative and commutative: XLA may fold in any order."""
    flat_operands, operand_tree = tree_util.tree_flatten(operands)
    flat_inits, init_tree = tree_util.tree_flatten(init_values)
    if operand_tree != init_tree:
        raise ValueError(
            "Operands must have the same tree structure as init_values: "
            f"{operand_tree} vs. {init_tree}"
        )
    if len(flat_operands) != len(flat_inits):
        raise ValueError(
            "Must have same total number of operands as init_values: "
            f"{len(flat_operands)} vs. {len(flat_inits)}"
        )
    dimensions = tuple(operator.index(d) for d in dimensions)
    monoid = _monoid_reducer(computation, flat_inits)
    if monoid is not None:
        return tree_util.tree_unflatten(operand_tree, [monoid(flat_operands[0], dimensions)])
    scalars = [ShapedArray((), aval_of(x).dtype) for x in flat_inits]
    closed = scalar_jaxpr(computation, init_tree, scalars, "reduce")
    outs = reduce_p.bind(
        *flat_operands, *flat_inits, computation=computation, jaxpr=closed, dimensions=dimensions
    )
    return tree_util.tree_unflatten(operand_tree, outs)
