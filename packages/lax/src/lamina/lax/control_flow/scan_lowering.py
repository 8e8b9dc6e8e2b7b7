"""The lowering of ``scan``: a ``stablehlo.while`` over an int32 counter whose body reads
one slice of each ``xs`` and writes one slice of each ``ys`` (from the end when
``reverse``), as JAX does: through calls of the private functions
``@dynamic_index_in_dim`` and ``@dynamic_update_index_in_dim``. The loop carries the xs
and the constants first, then the counter, the carry and the ys.

Each step calls the body as a private function (``func.call @closed_call``; inlined
when it carries ordered effects, whose tokens must flow through it). XLA inlines the
call, and the order it then gives unordered side effects of one step (the prints of a
batch under ``vmap``) is JAX's: emitted in place they run in the opposite order.

With ``unroll=u`` each trip of the loop runs ``u`` steps (XLA then sees, and can fuse
across, ``u`` consecutive bodies); the ``length % u`` steps left over run after the
loop, as straight-line code.

Equations of the body that depend only on loop constants (a bias broadcast to the
batch, a transposed weight) are emitted once before the loop and their results enter
it as more constants: XLA's own loop-invariant code motion leaves cheap operations
such as broadcasts inside the loop, to be recomputed on every step. Constants the
loop then no longer reads (the bias itself) are not carried through it.
"""

from __future__ import annotations

import functools

import numpy as np

from lamina.interpreters import lower_jaxpr_body, trace_to_jaxpr
from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import eval_dynamic_shape, hlo, ir
from lamina.ir import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    Literal,
    ShapedArray,
    is_constant_shape,
    is_symbolic_dim,
    physical_aval,
    spec_of,
)
from lamina.lax.slicing.dynamic_slicing import dynamic_index_in_dim, dynamic_update_index_in_dim

__all__ = ["scan_lowering", "unstacked"]

_I32 = ShapedArray((), np.dtype(np.int32))


def unstacked(aval: ShapedArray) -> ShapedArray:
    """The type of one slice along the leading axis of a stacked value; over explicit
    axes a slice keeps the other dimensions' splits."""
    out = aval.update(shape=aval.shape[1:])
    s = aval.type_sharding
    return (
        out if s is None else out.update(sharding=s.update(spec=type(s.spec)(*spec_of(aval)[1:])))
    )


def _i32(value):
    """An int32 scalar: a constant, or the value of a symbolic dimension."""
    if is_symbolic_dim(value):
        (v,) = eval_dynamic_shape(None, (value,))
        return hlo.convert(mb.ir_type(_I32), v)
    return mb.constant(np.int32(value), _I32)


class _Steps:
    """Emits scan steps: step ``i`` (an int32 value) reads xs[i], runs the body on
    (consts, carry, x) and writes ys[i] (index ``length - 1 - i`` when reversed)."""

    def __init__(self, ctx, jaxpr, length, reverse, num_consts, num_carry):
        self.ctx, self.jaxpr, self.length, self.reverse = ctx, jaxpr, length, reverse
        self.num_consts, self.num_carry = num_consts, num_carry
        # Slices of stacked keys are slices of their physical data (trailing dims kept).
        self.xs_avals = [physical_aval(a) for a in ctx.avals_in[num_consts + num_carry :]]
        self.ys_avals = [physical_aval(a) for a in ctx.avals_out[num_carry:]]

    def run(self, i, consts, carry, xs, ys):
        idx = hlo.subtract(hlo.subtract(_i32(self.length), i), _i32(1)) if self.reverse else i
        x_slices = [self._index(x, a, idx) for x, a in zip(xs, self.xs_avals, strict=True)]
        outs = self.ctx.call(self.jaxpr, [*consts, *carry, *x_slices], name="closed_call")
        new_ys = [
            self._update(y, a, idx, out)
            for y, a, out in zip(ys, self.ys_avals, outs[self.num_carry :], strict=True)
        ]
        return outs[: self.num_carry], new_ys

    def _index(self, x, aval, idx):
        if not is_constant_shape(aval.shape):
            return _index(x, aval, idx)
        (out,) = self.ctx.call(_index_call(aval), [x, idx], inline=True)
        return out

    def _update(self, ys, aval, idx, y):
        if not is_constant_shape(aval.shape):
            return _update(ys, aval, idx, y)
        (out,) = self.ctx.call(_update_call(aval), [ys, y, idx], inline=True)
        return out


@functools.lru_cache(maxsize=256)
def _index_call(aval: ShapedArray) -> ClosedJaxpr:
    """A Jaxpr calling ``dynamic_index_in_dim`` (a named ``jit``) on (xs, index)."""

    def index(x, i):
        return [dynamic_index_in_dim(x, i, 0, keepdims=False, allow_negative_indices=False)]

    return trace_to_jaxpr(index, [aval, _I32], "scan")[0]


@functools.lru_cache(maxsize=256)
def _update_call(aval: ShapedArray) -> ClosedJaxpr:
    """A Jaxpr calling ``dynamic_update_index_in_dim`` on (ys, y, index)."""

    def update(ys, y, i):
        return [dynamic_update_index_in_dim(ys, y, i, 0, allow_negative_indices=False)]

    return trace_to_jaxpr(update, [aval, unstacked(aval), _I32], "scan")[0]


def _hoist_invariants(jaxpr: ClosedJaxpr, num_consts: int):
    """(invariant part, rest): the first maps the loop constants to the values of the
    equations that depend on nothing else; the rest takes those values as further
    constants. None when nothing is invariant."""
    inner = jaxpr.jaxpr
    invariant = set(inner.constvars) | set(inner.invars[:num_consts])
    hoisted, kept = [], []
    for eqn in inner.eqns:
        ins = [a for a in eqn.invars if not isinstance(a, Literal)]
        if not eqn.effects and all(a in invariant for a in ins):
            hoisted.append(eqn)
            invariant.update(v for v in eqn.outvars if not isinstance(v, DropVar))
        else:
            kept.append(eqn)
    if not hoisted:
        return None
    needed = {a for e in kept for a in e.invars if not isinstance(a, Literal)}
    needed |= {a for a in inner.outvars if not isinstance(a, Literal)}
    values = [v for e in hoisted for v in e.outvars if not isinstance(v, DropVar) and v in needed]
    consts_in = inner.invars[:num_consts]
    head = Jaxpr(inner.constvars, consts_in, values, hoisted)
    rest = Jaxpr(inner.constvars, [*consts_in, *values, *inner.invars[num_consts:]],
                 inner.outvars, kept, inner.effects)  # fmt: skip
    return ClosedJaxpr(head, jaxpr.consts), ClosedJaxpr(rest, jaxpr.consts)


def _merge_same_consts(jaxpr: ClosedJaxpr, consts: list) -> ClosedJaxpr:
    """``jaxpr`` reading one input for loop constants that are the same value (hoisted
    equations that lower to no operation, say), so that it is carried once."""
    inner = jaxpr.jaxpr
    first, subst = {}, {}
    for v, value in zip(inner.invars[: len(consts)], consts, strict=True):
        if value in first:
            subst[v] = first[value]
        else:
            first[value] = v
    if not subst:
        return jaxpr
    swap = lambda atoms: [a if isinstance(a, Literal) else subst.get(a, a) for a in atoms]  # noqa: E731
    eqns = [e.replace(invars=swap(e.invars)) for e in inner.eqns]
    return ClosedJaxpr(inner.replace(eqns=eqns, outvars=swap(inner.outvars)), jaxpr.consts)


def _drop_unused_consts(jaxpr: ClosedJaxpr, num_consts: int):
    """(``jaxpr`` without the loop constants it never reads, indices of those kept): a
    constant whose only use was hoisted out of the loop need not be carried through it."""
    inner = jaxpr.jaxpr
    used = {a for e in inner.eqns for a in e.invars if not isinstance(a, Literal)}
    used.update(a for a in inner.outvars if not isinstance(a, Literal))
    kept = [i for i, v in enumerate(inner.invars[:num_consts]) if v in used]
    if len(kept) == num_consts:
        return jaxpr, kept
    invars = [inner.invars[i] for i in kept] + inner.invars[num_consts:]
    return ClosedJaxpr(inner.replace(invars=invars), jaxpr.consts), kept


def scan_lowering(ctx, *args, jaxpr, length, reverse, num_consts, num_carry, unroll=1, **_):
    consts = list(args[:num_consts])
    carry = list(args[num_consts : num_consts + num_carry])
    xs = list(args[num_consts + num_carry :])
    symbolic = is_symbolic_dim(length)
    split = _hoist_invariants(jaxpr, num_consts) if not symbolic and length > 1 else None
    if split is not None:
        head, jaxpr = split
        values = lower_jaxpr_body(ctx.module_context, head.jaxpr, head.consts, consts)
        consts = consts + values
        ctx = ctx.replace(
            avals_in=[*ctx.avals_in[:num_consts], *head.jaxpr.out_avals, *ctx.avals_in[num_consts:]]
        )
        num_consts = len(consts)
        jaxpr = _merge_same_consts(jaxpr, consts)
    jaxpr, kept = _drop_unused_consts(jaxpr, num_consts)
    if len(kept) < num_consts:
        consts = [consts[i] for i in kept]
        avals_in = [ctx.avals_in[i] for i in kept] + ctx.avals_in[num_consts:]
        ctx = ctx.replace(avals_in=avals_in)
        num_consts = len(kept)
    steps = _Steps(ctx, jaxpr, length, reverse, num_consts, num_carry)
    ys = [mb.broadcast_to(mb.constant(np.zeros((), a.dtype), a.update(shape=())),
                          a.update(shape=()), a.shape) for a in steps.ys_avals]  # fmt: skip
    if symbolic:  # a loop of a length read from the shapes (at least 1)
        carry, ys = _loop(ctx, steps, length, 1, consts, carry, xs, ys)
        return list(carry) + list(ys)
    unroll = max(1, min(int(unroll), length)) if length else 1
    trips = length // unroll
    if trips:
        carry, ys = _loop(ctx, steps, trips, unroll, consts, carry, xs, ys)
    for i in range(trips * unroll, length):
        carry, ys = steps.run(_i32(i), consts, carry, xs, ys)
    return list(carry) + list(ys)


def _loop(ctx, steps, trips, unroll, consts, carry, xs, ys):
    """``trips`` trips of a while loop, each running ``unroll`` steps."""
    n_consts, n_carry, n_xs = len(consts), len(carry), len(xs)
    effects = ctx.ordered_effects(steps.jaxpr)  # their tokens are carried last
    state = [*xs, *consts, _i32(0), *carry, *ys]
    n = len(state)
    avals_in = ctx.avals_in
    state_avals = [*avals_in[n_consts + n_carry :], *avals_in[:n_consts], _I32,
                   *avals_in[n_consts : n_consts + n_carry], *steps.ys_avals]  # fmt: skip
    types = ctx.ir_types(state_avals) + [hlo.TokenType.get()] * len(effects)
    loop = hlo.WhileOp(types, [*state, *ctx.tokens(effects)])
    cond_block = loop.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        direction = hlo.ComparisonDirectionAttr.get("LT")
        kind = hlo.ComparisonTypeAttr.get("SIGNED")
        pred = hlo.compare(cond_block.arguments[n_xs + n_consts], _i32(trips * unroll), direction,
                           compare_type=kind)  # fmt: skip
        hlo.return_([pred])
    body_block = loop.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        vals = list(body_block.arguments)
        ctx.set_tokens(effects, vals[n:])
        vals = vals[:n]
        xs_v, c_v = vals[:n_xs], vals[n_xs : n_xs + n_consts]
        i = vals[n_xs + n_consts]
        carry_v = vals[n_xs + n_consts + 1 : n_xs + n_consts + 1 + n_carry]
        ys_v = vals[n_xs + n_consts + 1 + n_carry :]
        for j in range(unroll):
            step = hlo.add(i, _i32(j)) if j else i
            carry_v, ys_v = steps.run(step, c_v, carry_v, xs_v, ys_v)
        tokens = ctx.tokens(effects)
        hlo.return_([*xs_v, *c_v, hlo.add(i, _i32(unroll)), *carry_v, *ys_v, *tokens])
    results = list(loop.results)
    ctx.set_tokens(effects, results[n:])
    results = results[:n]
    first = n_xs + n_consts + 1
    return results[first : first + n_carry], results[first + n_carry :]


def _starts(idx, rank):
    return [idx] + [_i32(0)] * (rank - 1)


def _index(x, aval, idx):
    one = aval.update(shape=(1, *aval.shape[1:]))
    if is_constant_shape(aval.shape):
        sl = hlo.dynamic_slice(x, _starts(idx, len(aval.shape)), list(one.shape))
    else:  # symbolic sizes: the slice's bounds computed in the program
        starts = _vector([idx, *([_i32(0)] * (len(aval.shape) - 1))])
        limits = hlo.add(starts, _vector([_i32(d) for d in one.shape]))  # what refinement reads
        strides = _vector([_i32(1)] * len(aval.shape))
        sl = hlo.real_dynamic_slice(mb.ir_type(one), x, starts, limits, strides)
    return mb.reshape(sl, unstacked(aval))


def _vector(scalars):
    one = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32))
    return hlo.concatenate([hlo.reshape(one, v) for v in scalars], 0)


def _update(ys, aval, idx, y):
    one = aval.update(shape=(1, *aval.shape[1:]))
    y1 = mb.reshape(y, one)
    return hlo.dynamic_update_slice(ys, y1, _starts(idx, len(aval.shape)))
