"""``scan`` and ``map``: the ``scan`` primitive, a loop over the leading axis of its
``xs`` threading a carry, with all its rules.

``scan_p`` takes JAX 0.10.2's params: ``jaxpr`` (a ``ClosedJaxpr`` from consts, carry
and one slice of each ``xs`` to the new carry and one slice of each ``ys``),
``length``, ``reverse``, ``linear``, ``unroll``, ``num_consts``, ``num_carry`` and
``_split_transpose``. It lowers to a ``stablehlo.while`` whose body slices the ``xs``
and writes the ``ys`` with ``dynamic_slice``/``dynamic_update_slice``.

Its JVP is a ``scan`` of the body's JVP, the carries with nonzero tangents found by a
fixed point. Partial evaluation runs a ``scan`` of the body's known part now (its
residuals stacked as extra ``ys``) and stages a ``scan`` of the unknown part that reads
them as ``xs``; the carries that are unknown are found by a fixed point. The transpose
is a reversed ``scan`` of the transposed body, the constants' cotangents summed in the
carry. Under ``vmap`` the body is batched, the batched carries found by a fixed point.
Dead-code elimination drops the ``ys`` nothing reads and the carries that neither an
output nor another kept carry needs (a fixed point), with the inputs then unused.
"""

from __future__ import annotations

from lamina.interpreters import (
    RefCotangent,
    UndefinedPrimal,
    accept_ref_cotangents,
    ad,
    backward_pass,
    batching,
    def_standard_impl,
    describe_function,
    is_undefined_primal,
    partial_eval,
    set_current_trace,
    trace_to_jaxpr,
)
from lamina.ir import ClosedJaxpr, Primitive, ShapedArray, spec_of, tree_util
from lamina.lax.base.primitives import convert_element_type
from lamina.lax.control_flow import bodies
from lamina.lax.control_flow.scan_lowering import scan_lowering, unstacked

__all__ = ["scan", "scan_p"]

scan_p = Primitive("scan")
scan_p.multiple_results = True


# ---------------------------------------------------------------- the API


def _stacked(aval: ShapedArray, length: int) -> ShapedArray:
    out = aval.update(shape=(length, *aval.shape))
    s = aval.type_sharding  # the stacked axis is not split
    return (
        out if s is None else out.update(sharding=s.update(spec=type(s.spec)(None, *spec_of(aval))))
    )


def _check_xs_unsplit(xs_avals) -> None:
    for a in xs_avals:
        if a.type_sharding is not None and spec_of(a)[0] is not None:
            raise ValueError(
                f"0th dimension of all xs should be replicated. Got {a.type_sharding.spec}"
            )


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loops ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns the
    final carry and the stacked ``y``s."""
    if not callable(f):
        raise TypeError("scan: f argument should be a callable.")
    xs_flat = tree_util.tree_leaves(xs)
    xs_avals = [bodies.abstractify(x) for x in xs_flat]
    for a in xs_avals:
        if not a.shape:
            raise ValueError(f"scan got value with no leading axis to scan over: {a.str_short()}.")
    _check_xs_unsplit(xs_avals)
    lengths = [a.shape[0] for a in xs_avals]
    if length is not None:
        try:
            length = int(length)
        except Exception:
            raise TypeError(f"length argument to scan must be an int, but got {length}") from None
        if any(n != length for n in lengths):
            shown = ", ".join(str(n) for n in lengths)
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with leading "
                f"axis sizes {shown}."
            )
    elif not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    elif len(set(lengths)) > 1:
        shown = ", ".join(str(n) for n in lengths)
        raise ValueError(f"scan got values with different leading axis sizes: {shown}.")
    else:
        length = lengths[0]
    if isinstance(unroll, bool):
        unroll = max(length, 1) if unroll else 1
    init_flat, init_tree = tree_util.tree_flatten(init)
    init_avals = [bodies.abstractify(x) for x in init_flat]
    # The carry's weak types follow the body's output, as in JAX: trace once, and
    # again with strong types where the output carry is strongly typed.
    in_tree = tree_util.tree_structure((init, xs))
    x_avals = [unstacked(a) for a in xs_avals]
    jaxpr, consts, out_tree = _trace_body(f, in_tree, init_avals + x_avals)
    _, carry_out_avals = _check_body_out(f, init_tree, init_avals, out_tree, jaxpr)
    if any(
        a.weak_type and not b.weak_type for a, b in zip(init_avals, carry_out_avals, strict=True)
    ):
        init_avals = [
            a.update(weak_type=a.weak_type and b.weak_type)
            for a, b in zip(init_avals, carry_out_avals, strict=True)
        ]
        jaxpr, consts, out_tree = _trace_body(f, in_tree, init_avals + x_avals)
        _check_body_out(f, init_tree, init_avals, out_tree, jaxpr)

        init_flat = [
            convert_element_type(x, a.dtype)
            if bodies.abstractify(x).weak_type != a.weak_type
            else x
            for x, a in zip(init_flat, init_avals, strict=True)
        ]
    ys_tree = tree_util.treedef_children(out_tree)[1]
    outs = scan_p.bind(
        *consts,
        *init_flat,
        *xs_flat,
        jaxpr=jaxpr,
        length=length,
        reverse=bool(reverse),
        linear=(False,) * (len(consts) + len(init_flat) + len(xs_flat)),
        unroll=unroll,
        num_consts=len(consts),
        num_carry=len(init_flat),
        _split_transpose=_split_transpose,
    )
    n = len(init_flat)
    return (
        tree_util.tree_unflatten(init_tree, outs[:n]),
        tree_util.tree_unflatten(ys_tree, outs[n:]),
    )


def _trace_body(f, in_tree, avals):
    return bodies.trace_function(lambda c, x: f(c, x), in_tree, avals, describe_function(f))


def _check_body_out(f, init_tree, init_avals, out_tree, jaxpr):
    children = tree_util.treedef_children(out_tree) if out_tree.num_nodes > 1 else []
    if len(children) != 2 or str(out_tree).removeprefix("PyTreeDef(")[:1] not in "([":
        raise TypeError(
            "scan body output must be a pair, got "
            f"{tree_util.tree_unflatten(out_tree, [a.str_short() for a in jaxpr.out_avals])}."
        )
    carry_tree = children[0]
    n = carry_tree.num_leaves
    carry_out_avals = list(jaxpr.out_avals[:n])
    bodies.check_carry_types(
        "scan body", bodies.param_name(f), init_tree, init_avals, carry_tree, carry_out_avals
    )
    return carry_tree, carry_out_avals


# ---------------------------------------------------------------- rules


def _scan_abstract_eval(*avals, jaxpr, length, num_consts, num_carry, **_):
    body_out = jaxpr.out_avals
    carry = list(body_out[:num_carry])
    ys = [_stacked(a, length) for a in body_out[num_carry:]]
    return carry + ys


def _split(seq, num_consts, num_carry):
    return (
        list(seq[:num_consts]),
        list(seq[num_consts : num_consts + num_carry]),
        list(seq[num_consts + num_carry :]),
    )


def _permuted(closed: ClosedJaxpr, in_order, out_order) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(
        j.replace(
            invars=[j.invars[i] for i in in_order], outvars=[j.outvars[i] for i in out_order]
        ),
        closed.consts,
    )


def _bind_scan(consts, carry, xs, jaxpr, **params):
    n = len(consts) + len(carry) + len(xs)
    params = dict(params, num_consts=len(consts), num_carry=len(carry), linear=(False,) * n)
    return scan_p.bind(*consts, *carry, *xs, jaxpr=jaxpr, **params)


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, **params):
    nz = [type(t) is not ad.Zero for t in tangents]
    c_nz, carry_nz, x_nz = _split(nz, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry
    while True:
        out_nz = bodies.jvp_out_nonzero(jaxpr, c_nz + carry_nz + x_nz)
        new = [a or b for a, b in zip(carry_nz, out_nz[:num_carry], strict=True)]
        if new == carry_nz:
            break
        carry_nz = new
    instantiate = carry_nz + [False] * n_ys
    jvp, out_t_nz = bodies.jvp_jaxpr_forced(jaxpr, c_nz + carry_nz + x_nz, instantiate)
    # Reorder: [c, carry, x, c_t, carry_t, x_t] -> [c, c_t, carry, carry_t, x, x_t].
    n_in = len(nz)
    nc_t, ncarry_t = sum(c_nz), sum(carry_nz)
    p_c, p_carry, p_x = _split(list(range(n_in)), num_consts, num_carry)
    t = list(range(n_in, n_in + sum(c_nz) + sum(carry_nz) + sum(x_nz)))
    t_c, t_carry, t_x = t[:nc_t], t[nc_t : nc_t + ncarry_t], t[nc_t + ncarry_t :]
    in_order = p_c + t_c + p_carry + t_carry + p_x + t_x
    n_out = len(jaxpr.out_avals)
    ys_t_nz = out_t_nz[num_carry:]
    o_t = list(range(n_out, n_out + ncarry_t + sum(ys_t_nz)))
    out_order = (
        list(range(num_carry)) + o_t[:ncarry_t] + list(range(num_carry, n_out)) + o_t[ncarry_t:]
    )
    jvp = _permuted(jvp, in_order, out_order)
    consts, carry, xs = _split(primals, num_consts, num_carry)
    t_consts, _, t_xs = _split(tangents, num_consts, num_carry)
    t_carry = [
        ad.instantiate_zeros(t) if n else None
        for t, n in zip(tangents[num_consts : num_consts + num_carry], carry_nz, strict=True)
    ]
    outs = _bind_scan(
        consts + [t for t in t_consts if type(t) is not ad.Zero],
        carry + [t for t in t_carry if t is not None],
        xs + [t for t in t_xs if type(t) is not ad.Zero],
        jvp,
        **params,
    )
    carry_out, carry_t = outs[:num_carry], outs[num_carry : num_carry + ncarry_t]
    ys, ys_t = (
        outs[num_carry + ncarry_t : num_carry + ncarry_t + n_ys],
        outs[num_carry + ncarry_t + n_ys :],
    )
    carry_t_it, ys_t_it = iter(carry_t), iter(ys_t)
    out_avals = _scan_abstract_eval(
        jaxpr=jaxpr, num_consts=num_consts, num_carry=num_carry, **params
    )
    tangents_out = [
        next(carry_t_it) if n else ad.Zero(ad.tangent_aval(a))
        for n, a in zip(carry_nz, out_avals[:num_carry], strict=True)
    ] + [
        next(ys_t_it) if n else ad.Zero(ad.tangent_aval(a))
        for n, a in zip(ys_t_nz, out_avals[num_carry:], strict=True)
    ]
    return carry_out + ys, tangents_out


def _scan_partial_eval(trace, args, *, jaxpr, num_consts, num_carry, length, **params):
    uk = [trace.is_unknown(x) for x in args]
    c_uk, carry_uk, x_uk = _split(uk, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry
    while True:
        out_uk = bodies.out_unknown_of(jaxpr, c_uk + carry_uk + x_uk)
        new = [a or b for a, b in zip(carry_uk, out_uk[:num_carry], strict=True)]
        if new == carry_uk:
            break
        carry_uk = new
    unknown = c_uk + carry_uk + x_uk
    known, staged, out_uk, res_avals = bodies.partial_eval_forced(
        jaxpr, unknown, carry_uk + [False] * n_ys
    )
    consts, carry, xs = _split(args, num_consts, num_carry)
    k_consts = [x for x, u in zip(consts, c_uk, strict=True) if not u]
    k_carry = [x for x, u in zip(carry, carry_uk, strict=True) if not u]
    k_xs = [x for x, u in zip(xs, x_uk, strict=True) if not u]
    n_k_carry = len(k_carry)
    n_k_ys = sum(1 for u in out_uk[num_carry:] if not u)
    n_res = len(res_avals)
    res_c, stacked, res_x = _forwarded_residuals(known, len(k_consts), n_k_carry, n_k_ys)
    if len(stacked) < n_res:
        kept = list(range(n_k_carry + n_k_ys)) + [n_k_carry + n_k_ys + j for j in stacked]
        known = _permuted(known, range(len(known.in_avals)), kept)
    with set_current_trace(trace.parent):
        k_outs = _bind_scan(k_consts, k_carry, k_xs, known, length=length, **params)
    k_carry_out = k_outs[:n_k_carry]
    k_ys = k_outs[n_k_carry : n_k_carry + n_k_ys]
    residuals = k_outs[n_k_carry + n_k_ys :]
    res_c_vals = [k_consts[p] for _, p in res_c]
    # the stacked residuals and the xs read as residuals, in the residuals' order (JAX's)
    res_xs = sorted([*zip(stacked, residuals, strict=True),
                     *((j, k_xs[p]) for j, p in res_x)], key=lambda jv: jv[0])  # fmt: skip
    # staged takes [residuals, unknown consts, unknown carry, unknown xs]; the scan
    # wants [consts, carry, xs]: loop-invariant residuals join the consts, residuals
    # that are slices of known xs read those xs, the others are stacked by the known scan.
    u_c = [x for x, u in zip(consts, c_uk, strict=True) if u]
    u_carry = [
        x if u_in else ad.instantiate_zeros(x) if False else x
        for x, u_in in zip(carry, carry_uk, strict=True)
        if u_in
    ]
    u_xs = [x for x, u in zip(xs, x_uk, strict=True) if u]
    rest = list(range(n_res, n_res + len(u_c) + len(u_carry) + len(u_xs)))
    in_order = (
        rest[: len(u_c)] + [j for j, _ in res_c]
        + rest[len(u_c) : len(u_c) + len(u_carry)]
        + [j for j, _ in res_xs] + rest[len(u_c) + len(u_carry) :]
    )  # fmt: skip
    staged = _permuted(staged, in_order, list(range(len(staged.out_avals))))
    # Known values of an unknown carry enter the staged scan as constants.
    staged_consts = [*u_c, *res_c_vals]
    u_outs = trace.staging.process_primitive(
        scan_p,
        [*staged_consts, *u_carry, *(v for _, v in res_xs), *u_xs],
        dict(
            params,
            jaxpr=staged,
            length=length,
            num_consts=len(staged_consts),
            num_carry=len(u_carry),
            linear=(False,) * len(in_order),
        ),
    )
    k_it = iter(k_carry_out + k_ys)
    u_it = iter(u_outs)
    return [next(u_it) if u else next(k_it) for u in out_uk]


scan_p.def_partial_eval(_scan_partial_eval)


def _forwarded_residuals(known: ClosedJaxpr, n_consts, n_carry, n_ys):
    """Sorts the residual outputs of ``known`` (inputs: consts, carry, xs): those that
    are a const input, as ``(index, const position)``; the indices of those that must
    be stacked; those that are an xs input, as ``(index, xs position)``."""
    j = known.jaxpr
    position = {id(v): i for i, v in enumerate(j.invars)}
    res_c, stacked, res_x = [], [], []
    for index, v in enumerate(j.outvars[n_carry + n_ys :]):
        p = position.get(id(v))
        if p is not None and p < n_consts:
            res_c.append((index, p))
        elif p is not None and p >= n_consts + n_carry:
            res_x.append((index, p - n_consts - n_carry))
        else:
            stacked.append(index)
    return res_c, stacked, res_x


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse, **params):
    consts, carry, xs = _split(args, num_consts, num_carry)
    # A tangent reference among the constants comes as its RefCotangent: the reversed
    # scan takes the cotangent reference as a constant and adds into it in place.
    c_ref = [type(x) is RefCotangent for x in consts]
    c_lin = [is_undefined_primal(x) for x in consts]
    x_lin = [is_undefined_primal(x) for x in xs]
    res_c = [x for x, u, r in zip(consts, c_lin, c_ref, strict=True) if not (u or r)]
    ref_c = [x.instantiate() for x in consts if type(x) is RefCotangent]
    res_x = [x for x, u in zip(xs, x_lin, strict=True) if not u]
    c_avals = [ad.tangent_aval(x.aval) for x in consts if is_undefined_primal(x)]
    carry_avals = [ad.tangent_aval(a) for a in jaxpr.in_avals[num_consts : num_consts + num_carry]]
    x_in_avals = jaxpr.in_avals[num_consts + num_carry :]
    ys_avals = [ad.tangent_aval(a) for a in jaxpr.out_avals[num_carry:]]
    res_c_avals = [bodies.abstractify(x) for x in res_c]
    ref_c_avals = [bodies.abstractify(x) for x in ref_c]
    res_x_avals = [a for a, u in zip(x_in_avals, x_lin, strict=True) if not u]
    n_rc, n_ca, n_cy = len(res_c) + len(ref_c), len(c_avals), len(carry_avals)

    def body(*vals):
        rc, acc = vals[:n_rc], vals[n_rc : n_rc + n_ca]
        ct_carry = vals[n_rc + n_ca : n_rc + n_ca + n_cy]
        ct_y = vals[n_rc + n_ca + n_cy : n_rc + n_ca + n_cy + len(ys_avals)]
        rx = iter(vals[n_rc + n_ca + n_cy + len(ys_avals) :])
        rc_it, ref_it = iter(rc[: len(res_c)]), iter(rc[len(res_c) :])
        primals = (
            [RefCotangent(a, next(ref_it)) if r else UndefinedPrimal(a) if u else next(rc_it)
             for a, u, r in zip(jaxpr.in_avals[:num_consts], c_lin, c_ref, strict=True)]
            + [UndefinedPrimal(a) for a in jaxpr.in_avals[num_consts : num_consts + num_carry]]
            + [UndefinedPrimal(a) if u else next(rx)
               for a, u in zip(x_in_avals, x_lin, strict=True)]
        )  # fmt: skip
        # The constants' cotangents are added into their accumulators as they are made.
        acc_it = iter(acc)
        seeds = [next(acc_it) if u else None for u in c_lin]
        seeds = [None if r else a for a, r in zip(seeds, c_ref, strict=True)]
        outs = backward_pass(jaxpr.jaxpr, jaxpr.consts, primals, [*ct_carry, *ct_y], seeds)
        outs = [ad.instantiate_zeros(o) if type(o) is ad.Zero else o for o in outs]
        ct_c, ct_carry_in, ct_x = _split(outs, num_consts, num_carry)
        lin = [(o, s) for o, s, u in zip(ct_c, seeds, c_lin, strict=True) if u]
        new_acc = [o if s is not None else ad.add_tangents(a, o)
                   for (o, s), a in zip(lin, acc, strict=True)]  # fmt: skip
        ct_x = [o for o, u in zip(ct_x, x_lin, strict=True) if u]
        return [*new_acc, *ct_carry_in, *ct_x]

    in_avals = res_c_avals + ref_c_avals + c_avals + carry_avals + ys_avals + res_x_avals
    body_t, _ = trace_to_jaxpr(body, in_avals, "scan transpose")
    ct_carry = [ad.instantiate_zeros(c) for c in cts[:num_carry]]
    ct_ys = [ad.instantiate_zeros(c) for c in cts[num_carry:]]
    acc0 = [ad.zeros_like_aval(a) for a in c_avals]  # after the carry's zeros, as JAX
    outs = _bind_scan(
        [*res_c, *ref_c], acc0 + ct_carry, ct_ys + res_x, body_t,
        length=length, reverse=not reverse, **params,
    )  # fmt: skip
    ct_consts, ct_init, ct_xs = outs[:n_ca], outs[n_ca : n_ca + n_cy], outs[n_ca + n_cy :]
    c_it, x_it = iter(ct_consts), iter(ct_xs)
    result = [next(c_it) if u else None for u in c_lin]
    result += [ct if is_undefined_primal(x) else None for x, ct in zip(carry, ct_init, strict=True)]
    result += [next(x_it) if u else None for u in x_lin]
    return result


def _scan_batching(axis_data, vals, dims, *, jaxpr, num_consts, num_carry, **params):
    nm = batching.not_mapped
    c_d, carry_d, x_d = _split(dims, num_consts, num_carry)
    c_b = [d is not nm for d in c_d]
    carry_b = [d is not nm for d in carry_d]
    x_b = [d is not nm for d in x_d]
    n_ys = len(jaxpr.out_avals) - num_carry
    while True:
        in_dims = [0 if b else nm for b in c_b + carry_b + x_b]
        _, out_d = bodies.batch_jaxpr_forced(
            jaxpr, axis_data, in_dims, [None] * len(jaxpr.out_avals)
        )
        new = [a or (d is not nm) for a, d in zip(carry_b, out_d[:num_carry], strict=True)]
        if new == carry_b:
            break
        carry_b = new
    in_dims = [0 if b else nm for b in c_b + carry_b + x_b]
    want = [0 if b else nm for b in carry_b] + [0] * n_ys
    body, out_d = bodies.batch_jaxpr_forced(jaxpr, axis_data, in_dims, want)
    consts, carry, xs = _split(vals, num_consts, num_carry)
    consts = [
        batching.moveaxis(x, d, 0) if d is not nm else x for x, d in zip(consts, c_d, strict=True)
    ]
    carry = [
        batching.matchaxis(axis_data, d, 0, x) if b else x
        for x, d, b in zip(carry, carry_d, carry_b, strict=True)
    ]
    xs = [batching.moveaxis(x, d, 1) if d is not nm else x for x, d in zip(xs, x_d, strict=True)]
    outs = _bind_scan(consts, carry, xs, body, **params)
    out_dims = [0 if b else nm for b in carry_b] + [
        1 if d is not nm else nm for d in out_d[num_carry:]
    ]
    return outs, out_dims


def _scan_pp(params):
    shown = [(k, params[k]) for k in ("jaxpr", "length")]
    if any(params["linear"]):
        shown.append(("linear", params["linear"]))
    shown += [(k, params[k]) for k in ("num_carry", "num_consts", "reverse", "unroll")]
    if params["_split_transpose"]:
        shown.append(("_split_transpose", True))
    return shown


def _scan_complete(params, in_avals, out_avals):
    params = dict(params)
    params.setdefault("linear", (False,) * len(in_avals))
    params.setdefault("_split_transpose", False)
    return params


def _scan_dce(used_outputs, eqn):
    closed = eqn.params["jaxpr"]
    if closed.jaxpr.effects or eqn.effects:
        return [True] * len(eqn.invars), eqn
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    num_consts, num_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    num_xs = len(eqn.invars) - num_consts - num_carry
    used_carry, used_ys = list(used_outputs[:num_carry]), list(used_outputs[num_carry:])
    while True:
        # A carry read by the body must also be computed by it: grow until stable.
        inner, used_inputs = partial_eval.dce_jaxpr(
            closed.jaxpr,
            used_carry + used_ys,
            instantiate=[False] * num_consts + used_carry + [False] * num_xs,
        )
        used_carry_in = used_inputs[num_consts : num_consts + num_carry]
        if used_carry_in == used_carry:
            break
        used_carry = [a or b for a, b in zip(used_carry, used_carry_in, strict=True)]
    used_outputs = used_carry + used_ys
    if inner is closed.jaxpr and all(used_inputs):
        return used_inputs, eqn
    params = dict(
        eqn.params,
        jaxpr=ClosedJaxpr(inner, closed.consts),
        num_consts=sum(used_inputs[:num_consts]),
        num_carry=sum(used_carry),
        linear=tuple(x for x, u in zip(eqn.params["linear"], used_inputs, strict=True) if u),
    )
    new_eqn = eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params=params,
    )
    return used_inputs, new_eqn


scan_p.def_abstract_eval(_scan_abstract_eval)
scan_p.def_lowering(scan_lowering)
def_standard_impl(scan_p)
scan_p.def_jvp(_scan_jvp)
scan_p.def_transpose(_scan_transpose)
accept_ref_cotangents(scan_p)
batching.batching_rules[scan_p] = _scan_batching
scan_p.def_pp_params(_scan_pp, _scan_complete)
partial_eval.dce_rules[scan_p] = _scan_dce


# ---------------------------------------------------------------- discharge


def _scan_discharge(in_avals, out_avals, *args, jaxpr, num_consts, num_carry, linear, **params):
    """References among the constants become leading carries of a scan of the
    discharged body."""
    consts, carry, xs = _split(list(args), num_consts, num_carry)
    const_avals = in_avals[:num_consts]
    refs = [i for i, a in enumerate(const_avals) if bodies.is_ref(a)]
    others = [i for i, a in enumerate(const_avals) if not bodies.is_ref(a)]
    run = bodies.discharged_fun(jaxpr)
    n_out = len(jaxpr.out_avals)

    def body(*flat):
        plain, held, rest = (
            flat[: len(others)],
            flat[len(others) : len(others) + len(refs)],
            flat[len(others) + len(refs) :],
        )
        full = [None] * num_consts
        for i, v in zip(others, plain, strict=True):
            full[i] = v
        for i, v in zip(refs, held, strict=True):
            full[i] = v
        outs = run(*full, *rest)
        return [*outs[n_out:], *outs[:n_out]]

    body_avals = [
        *[const_avals[i] for i in others],
        *[const_avals[i].inner_aval for i in refs],
        *[bodies.value_type(a) for a in jaxpr.in_avals[num_consts:]],
    ]
    new_jaxpr, new_consts = bodies.retrace(body, body_avals, "discharged scan body")
    operands = [*new_consts, *[consts[i] for i in others], *[consts[i] for i in refs], *carry, *xs]
    outs = scan_p.bind(
        *operands,
        jaxpr=new_jaxpr,
        num_consts=len(new_consts) + len(others),
        num_carry=len(refs) + num_carry,
        linear=(False,) * len(operands),
        **params,
    )
    finals = iter(outs[: len(refs)])
    new_values = [next(finals) if bodies.is_ref(a) else None for a in in_avals]
    return new_values, outs[len(refs) :]


scan_p.def_discharge(_scan_discharge)
