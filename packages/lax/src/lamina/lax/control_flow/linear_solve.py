"""The ``custom_linear_solve`` primitive (``linear_solve_p``): ``x`` with
``matvec(x) == b``, computed by a solve Jaxpr whose own operations are never
differentiated.

Operands are the constants of the four Jaxprs (``matvec``, ``vecmat``, ``solve``,
``transpose_solve``, counted by ``const_lengths``) then the leaves of ``b``; results are
the leaves of ``x`` then any auxiliary outputs of ``solve``. The solution is linear in
``b`` and depends on the constants only through the problem, so:

* JVP: ``x_dot = solve(b_dot - matvec_dot(x))``, where ``matvec_dot`` is the tangent of
  the matrix action with respect to its constants, ``x`` held fixed;
* transpose (in ``b`` only): the same primitive on the transposed problem (``vecmat``
  as the matrix action, ``transpose_solve`` as the solver);
* batching: every Jaxpr batched with ``b`` (and so ``x``) batched at axis 0.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from lamina.interpreters import (
    ad,
    batching,
    def_standard_impl,
    eval_jaxpr,
    is_undefined_primal,
    lower_jaxpr_body,
)
from lamina.ir import Primitive
from lamina.lax.base.primitives import neg
from lamina.lax.control_flow import bodies

__all__ = ["linear_solve_p"]


class _LinearSolveTuple(NamedTuple):
    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> _LinearSolveTuple:
        return _LinearSolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _split(args, const_lengths: _LinearSolveTuple):
    """The operands as four const lists (a ``_LinearSolveTuple``) and the ``b`` leaves."""
    groups, start = [], 0
    for n in const_lengths:
        groups.append(list(args[start : start + n]))
        start += n
    return _LinearSolveTuple(*groups), list(args[start:])


def bind_linear_solve(consts: _LinearSolveTuple, b, jaxprs: _LinearSolveTuple) -> list:
    lengths = _LinearSolveTuple(*(len(c) for c in consts))
    return linear_solve_p.bind(
        *consts.matvec,
        *consts.vecmat,
        *consts.solve,
        *consts.transpose_solve,
        *b,
        const_lengths=lengths,
        jaxprs=jaxprs,
    )


def _abstract_eval(*avals, const_lengths, jaxprs):
    return list(jaxprs.solve.out_avals)


def _lowering(ctx, *args, const_lengths, jaxprs):
    consts, b = _split(args, const_lengths)
    solve = jaxprs.solve
    return lower_jaxpr_body(ctx.module_context, solve.jaxpr, solve.consts, [*consts.solve, *b])


def _jvp(primals, tangents, *, const_lengths, jaxprs):
    consts, b = _split(primals, const_lengths)
    const_tangents, b_tangents = _split(tangents, const_lengths)
    outs = linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    x = outs[: len(b)]
    zeros = [ad.Zero(ad.tangent_aval(a)) for a in jaxprs.solve.out_avals]
    rhs = list(b_tangents)
    if any(type(t) is not ad.Zero for t in const_tangents.matvec):
        matvec = jaxprs.matvec

        def action(*matvec_consts):
            return eval_jaxpr(matvec.jaxpr, matvec.consts, *matvec_consts, *x)

        _, action_dots = ad.jvp_flat(action, consts.matvec, const_tangents.matvec)
        rhs = [_sub_tangents(r, d) for r, d in zip(rhs, action_dots, strict=True)]
    if all(type(r) is ad.Zero for r in rhs):
        return outs, zeros
    rhs = [ad.instantiate_zeros(r) for r in rhs]
    x_dot = bind_linear_solve(consts, rhs, jaxprs)[: len(b)]
    return outs, [*x_dot, *zeros[len(b) :]]


def _sub_tangents(t, s):
    if type(s) is ad.Zero:
        return t
    return neg(s) if type(t) is ad.Zero else ad.add_tangents(t, neg(s))


def _transpose(cts, *args, const_lengths, jaxprs):
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backpropagation")
    consts, b = _split(args, const_lengths)
    if any(is_undefined_primal(c) for group in consts for c in group):
        raise NotImplementedError(
            "custom_linear_solve is linear only in b; it cannot be transposed with "
            "respect to the constants of its functions"
        )
    cts_x = cts[: len(b)]
    n_consts = sum(const_lengths)
    if all(type(c) is ad.Zero for c in cts_x):
        return [None] * n_consts + [ad.Zero(ad.tangent_aval(x.aval)) for x in b]
    cts_x = [ad.instantiate_zeros(c) for c in cts_x]
    cts_b = bind_linear_solve(consts.transpose(), cts_x, jaxprs.transpose())[: len(b)]
    return [None] * n_consts + cts_b


def _batching(axis_data, vals, dims, *, const_lengths, jaxprs):
    consts, b = _split(vals, const_lengths)
    const_dims, b_dims = _split(dims, const_lengths)
    # x has b's structure, so b batched at axis 0 makes every Jaxpr's vector argument
    # and result batched there too.
    b = [batching.matchaxis(axis_data, d, 0, x) for x, d in zip(b, b_dims, strict=True)]
    vector_dims = [0] * len(b)
    batched = []
    for jaxpr, group_dims in zip(jaxprs, const_dims, strict=True):
        if jaxpr is None:
            batched.append(None)
            continue
        wanted = [0] * len(jaxpr.out_avals)
        batched.append(
            bodies.batch_jaxpr_forced(jaxpr, axis_data, [*group_dims, *vector_dims], wanted)[0]
        )
    outs = bind_linear_solve(consts, b, _LinearSolveTuple(*batched))
    return outs, [0] * len(outs)


linear_solve_p = Primitive("custom_linear_solve")
linear_solve_p.multiple_results = True
linear_solve_p.def_abstract_eval(_abstract_eval)
linear_solve_p.def_lowering(_lowering)
def_standard_impl(linear_solve_p)
linear_solve_p.def_jvp(_jvp)
linear_solve_p.def_transpose(_transpose)
batching.batching_rules[linear_solve_p] = _batching
