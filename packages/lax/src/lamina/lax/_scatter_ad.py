"""JVP and transpose rules of the scatter family (imported for its effect of
registering them)."""

from __future__ import annotations

import math

import numpy as np

from lamina.interpreters import ad, reverse, shaped_abstractify
from lamina.lax._gather import GatherDimensionNumbers, GatherScatterMode, gather_p
from lamina.lax._scatter import (
    scatter_add_p,
    scatter_jaxpr,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
    scatter_sub_p,
)
from lamina.lax.base.primitives import (
    add,
    broadcast_in_dim,
    convert_element_type,
    div,
    eq,
    iota,
    mul,
    neg,
    reshape,
    select_n,
)

__all__: list[str] = []


def _zeros(aval):
    return broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())


def _aval(x):
    return x.aval if reverse.is_undefined_primal(x) else shaped_abstractify(x)


def _gather_back(ct, indices, updates_shape, params):
    """The part of ``ct`` each update's window addresses: the gather transposing a
    scatter (out-of-bounds windows read as zeros)."""
    dn = params["dimension_numbers"]
    sizes, window = [], iter(dn.update_window_dims)
    for d in range(len(_aval(ct).shape)):
        dropped = d in dn.inserted_window_dims or d in dn.operand_batching_dims
        sizes.append(1 if dropped else updates_shape[next(window)])
    gather_dn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims,
    )
    return gather_p.bind(
        ct,
        indices,
        dimension_numbers=gather_dn,
        slice_sizes=tuple(sizes),
        indices_are_sorted=params["indices_are_sorted"],
        unique_indices=params["unique_indices"],
        mode=params["mode"],
        fill_value=0 if params["mode"] is GatherScatterMode.FILL_OR_DROP else None,
    )


def _scatter_add(base, indices, updates, params):
    """``scatter-add`` with the mode and flags in ``params`` (any update computation
    there is replaced by addition)."""
    jaxpr, consts = scatter_jaxpr("add", shaped_abstractify(base).dtype)
    kept = {k: v for k, v in params.items() if k not in ("update_jaxpr", "update_consts")}
    return scatter_add_p.bind(
        base, indices, updates, **kept, update_jaxpr=jaxpr, update_consts=consts
    )


def _tangent_zero(x):
    return ad.Zero(ad.tangent_aval(shaped_abstractify(x)))


# ------------------------------------------------------------------ add / sub


def _linear_jvp(prim):
    def rule(primals, tangents, **params):
        operand, indices, updates = primals
        t_op, _, t_up = tangents
        ans = prim.bind(operand, indices, updates, **params)
        if type(t_op) is ad.Zero and type(t_up) is ad.Zero:
            return ans, _tangent_zero(ans)
        t_op, t_up = ad.instantiate_zeros(t_op), ad.instantiate_zeros(t_up)
        return ans, prim.bind(t_op, indices, t_up, **params)

    prim.def_jvp(rule)


def _additive_transpose(negate: bool):
    def rule(ct, operand, indices, updates, **params):
        if reverse.is_undefined_primal(indices):
            raise NotImplementedError("scatter is not linear in its indices")
        ct = ad.instantiate_zeros(ct)
        ct_op = ct if reverse.is_undefined_primal(operand) else None
        ct_up = None
        if reverse.is_undefined_primal(updates):
            ct_up = _gather_back(ct, indices, updates.aval.shape, params)
            ct_up = neg(ct_up) if negate else ct_up
        return [ct_op, None, ct_up]

    return rule


_linear_jvp(scatter_add_p)
_linear_jvp(scatter_sub_p)
scatter_add_p.def_transpose(_additive_transpose(negate=False))
scatter_sub_p.def_transpose(_additive_transpose(negate=True))


# ------------------------------------------------------------------ mul


def _scatter_mul_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    t_op, _, t_up = tangents
    ans = scatter_mul_p.bind(operand, indices, updates, **params)
    out = _tangent_zero(ans)
    if type(t_op) is not ad.Zero:
        out = scatter_mul_p.bind(t_op, indices, updates, **params)
    if type(t_up) is not ad.Zero:
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`"
            )
        # Each element is hit by at most one update u: d(x*u) = x*du there.
        placed = scatter_p.bind(
            _zeros(shaped_abstractify(operand)),
            indices,
            t_up,
            **{**params, "update_jaxpr": None, "update_consts": ()},
        )
        out = ad.add_tangents(out, mul(operand, placed))
    return ans, out


def _scatter_mul_transpose(ct, operand, indices, updates, **params):
    if reverse.is_undefined_primal(updates) or reverse.is_undefined_primal(indices):
        raise NotImplementedError("scatter_mul is only linear in its operand")
    ct = ad.instantiate_zeros(ct)
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


scatter_mul_p.def_jvp(_scatter_mul_jvp)
scatter_mul_p.def_transpose(_scatter_mul_transpose)


# ------------------------------------------------------------------ min / max


def _extremal_jvp(prim):
    """Ties share the derivative equally among the operand and the updates that reach
    the extreme value."""

    def rule(primals, tangents, **params):
        operand, indices, updates = primals
        t_op, _, t_up = tangents
        ans = prim.bind(operand, indices, updates, **params)
        if type(t_op) is ad.Zero and type(t_up) is ad.Zero:
            return ans, _tangent_zero(ans)
        t_op, t_up = ad.instantiate_zeros(t_op), ad.instantiate_zeros(t_up)
        dtype = shaped_abstractify(ans).dtype
        up_shape = shaped_abstractify(updates).shape
        reached = _gather_back(ans, indices, up_shape, params)
        op_hit = convert_element_type(eq(operand, ans), dtype)
        up_hit = convert_element_type(eq(updates, reached), dtype)
        zeros = _zeros(shaped_abstractify(ans))
        count = add(op_hit, _scatter_add(zeros, indices, up_hit, params))
        total = add(mul(op_hit, t_op), _scatter_add(zeros, indices, mul(up_hit, t_up), params))
        return ans, div(total, count)

    prim.def_jvp(rule)


_extremal_jvp(scatter_min_p)
_extremal_jvp(scatter_max_p)


# ------------------------------------------------------------------ scatter (overwrite)


def _update_ids(updates_shape, update_window_dims):
    """uint32 ids, 1, 2, ..., one per update window, broadcast over its window."""
    scatter_dims = [d for d in range(len(updates_shape)) if d not in update_window_dims]
    scatter_shape = tuple(updates_shape[d] for d in scatter_dims)
    ids = reshape(iota(np.uint32, math.prod(scatter_shape)), scatter_shape)
    ids = add(ids, np.ones((), np.uint32))
    return broadcast_in_dim(ids, tuple(updates_shape), tuple(scatter_dims))


def _scatter_jvp(primals, tangents, *, update_jaxpr, update_consts, **params):
    operand, indices, updates = primals
    t_op, _, t_up = tangents
    full = {**params, "update_jaxpr": update_jaxpr, "update_consts": update_consts}
    if update_jaxpr is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")
    if type(t_op) is ad.Zero and type(t_up) is ad.Zero:
        ans = scatter_p.bind(operand, indices, updates, **full)
        return ans, _tangent_zero(ans)
    t_op, t_up = ad.instantiate_zeros(t_op), ad.instantiate_zeros(t_up)
    if params["unique_indices"]:
        ans = scatter_p.bind(operand, indices, updates, **full)
        return ans, scatter_p.bind(t_op, indices, t_up, **full)
    # Several updates may hit one element and only one of them wins: find the winner by
    # scattering per-window ids, then keep only winning updates and untouched operand
    # elements, so that the result is a (linear) scatter-add.
    op_aval = shaped_abstractify(operand)
    up_shape = shaped_abstractify(updates).shape
    ids = _update_ids(up_shape, params["dimension_numbers"].update_window_dims)
    id_zeros = _zeros(op_aval.update(dtype=np.dtype(np.uint32)))
    scattered_ids = scatter_p.bind(id_zeros, indices, ids, **full)
    winners = _gather_back(scattered_ids, indices, up_shape, params)
    untouched = eq(scattered_ids, _zeros(op_aval.update(dtype=np.dtype(np.uint32))))
    won = eq(ids, winners)

    def combine(x, u):
        x_kept = select_n(untouched, _zeros(shaped_abstractify(x)), x)
        u_kept = select_n(won, _zeros(shaped_abstractify(u)), u)
        return _scatter_add(x_kept, indices, u_kept, params)

    return combine(operand, updates), combine(t_op, t_up)


def _scatter_transpose(ct, operand, indices, updates, *, update_jaxpr, update_consts,
                       **params):  # fmt: skip
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where unique_indices=True")
    if reverse.is_undefined_primal(indices):
        raise NotImplementedError("scatter is not linear in its indices")
    ct = ad.instantiate_zeros(ct)
    up_aval = _aval(updates)
    ct_op = ct_up = None
    if reverse.is_undefined_primal(operand):
        ct_op = scatter_p.bind(
            ct, indices, _zeros(up_aval), update_jaxpr=None, update_consts=(), **params
        )
    if reverse.is_undefined_primal(updates):
        ct_up = _gather_back(ct, indices, up_aval.shape, params)
    return [ct_op, None, ct_up]


scatter_p.def_jvp(_scatter_jvp)
scatter_p.def_transpose(_scatter_transpose)
