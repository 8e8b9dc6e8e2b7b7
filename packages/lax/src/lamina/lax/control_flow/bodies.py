"""What the control-flow primitives share: tracing user functions to Jaxprs whose
constants are operands, JAX's messages for mismatched types, and Jaxpr transformations
with chosen outputs forced (nonzero tangents, unknown values, batched values).

A control-flow primitive takes closed Jaxprs without constants: values a traced
function closes over (arrays, tracers of enclosing traces) become leading operands, so
every transformation sees them as ordinary inputs.
"""

from __future__ import annotations

import inspect

from lamina.interpreters import (
    ad,
    batching,
    describe_function,
    eval_jaxpr,
    partial_eval_jaxpr,
    run_discharged,
    shaped_abstractify,
    trace_to_jaxpr,
)
from lamina.ir import (
    AbstractRef,
    ClosedJaxpr,
    Var,
    axis_ordered,
    mismatch_extra,
    same_type,
    tree_util,
    vma_of,
)

__all__: list[str] = []


def abstractify(x):
    try:
        return shaped_abstractify(x)
    except TypeError:
        raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type") from None


def open_closed(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """``closed`` with its constants turned into leading inputs, and their values."""
    jaxpr = closed.jaxpr
    opened = jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars])
    return ClosedJaxpr(opened, []), list(closed.consts)


def trace_function(fun, in_tree, in_avals, debug: str | None = None):
    """Traces ``fun`` (taking the pytree ``in_tree`` of the ``in_avals``). Returns
    ``(jaxpr, consts, out_tree)``: ``jaxpr`` takes the consts, then the inputs."""
    box = {}

    def flat_fun(*flat):
        out = fun(*tree_util.tree_unflatten(in_tree, flat))
        out_flat, box["tree"] = tree_util.tree_flatten(out)
        return out_flat

    closed, _ = trace_to_jaxpr(flat_fun, in_avals, debug or describe_function(fun))
    jaxpr, consts = open_closed(closed)
    return jaxpr, consts, box["tree"]


def with_leading_inputs(closed: ClosedJaxpr, avals_before, avals_after=()) -> ClosedJaxpr:
    """``closed`` taking unused inputs of ``avals_before`` in front of its own inputs
    and of ``avals_after`` behind them."""
    before = [Var(a) for a in avals_before]
    after = [Var(a) for a in avals_after]
    jaxpr = closed.jaxpr.replace(invars=[*before, *closed.jaxpr.invars, *after])
    return ClosedJaxpr(jaxpr, closed.consts)


def jaxpr_fun(closed: ClosedJaxpr):
    def run(*args):
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    return run


def param_name(fun, position: int = 0, default: str = "c") -> str:
    try:
        params = list(inspect.signature(fun).parameters)
        return params[position] if len(params) > position else default
    except (TypeError, ValueError):
        return default


# ---------------------------------------------------------------- messages


def pvary_hint(axes, where: str) -> str:
    """JAX's suggestion for values whose varying manual axes differ."""
    return (
        f"This might be fixed by applying `jax.lax.pcast(..., {axis_ordered(axes)}, "
        f"to='varying')`{where}.\nSee https://docs.jax.dev/en/latest/notebooks/"
        "shard_map.html#scan-vma for more information.\n\n"
    )


class _Leaf:
    pass


_LEAF = _Leaf()
_AVAL_CLASS = "<class 'jax._src.core.ShapedArray'>"


def _kind(x) -> str:
    return _AVAL_CLASS if x is _LEAF else str(type(x))


def _first_mismatch(a, b, path=()):
    """The key path and kinds of the first place the pytrees ``a`` and ``b`` (with
    ``_LEAF`` leaves) differ, or None."""
    if a is _LEAF and b is _LEAF:
        return None
    if a is _LEAF or b is _LEAF or type(a) is not type(b):
        return path, _kind(a), _kind(b)
    kids_a, aux_a = tree_util.flatten_one_level_with_keys(a)
    kids_b, aux_b = tree_util.flatten_one_level_with_keys(b)
    if aux_a != aux_b or len(kids_a) != len(kids_b):
        return path, _kind(a), _kind(b)
    for (key, x), (_, y) in zip(kids_a, kids_b, strict=True):
        found = _first_mismatch(x, y, (*path, key))
        if found:
            return found
    return None


def check_carry_types(what: str, carry_name: str, in_tree, in_avals, out_tree, out_avals):
    """JAX's ``TypeError`` when a loop body's carry output differs from its input."""
    if in_tree != out_tree:
        a = tree_util.tree_unflatten(in_tree, [_LEAF] * in_tree.num_leaves)
        b = tree_util.tree_unflatten(out_tree, [_LEAF] * out_tree.num_leaves)
        path, kind_in, kind_out = _first_mismatch(a, b) or ((), "a pytree", "a pytree")
        component = (
            f"carry component {carry_name}{tree_util.keystr(path)}"
            if path
            else f"carry {carry_name}"
        )
        raise TypeError(
            f"{what} function carry input and carry output must have the same pytree "
            "structure, but they differ:\n\n"
            f"The input {component} is a {kind_in} but the corresponding component of the "
            f"carry output is a {kind_out}, so their Python types differ.\n\n"
            "Revise the function so that the carry output has the same pytree structure "
            "as the carry input."
        )
    leaves = tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
    )[0]
    for (path, _), a, b in zip(leaves, in_avals, out_avals, strict=True):
        if not same_type(a, b):
            name = f"{carry_name}{tree_util.keystr(path)}"
            extra = vma_of(b) - vma_of(a)
            which = f"the input carry {'component ' if path else ''}{name}"
            hint = pvary_hint(extra, f", to the initial carry value corresponding to "
                              f"{which}") if extra else ""  # fmt: skip
            raise TypeError(
                f"{what} function carry input and carry output must have equal types, "
                "but they differ:\n\n"
                f"The input carry {'component ' if path else ''}{name} has type "
                f"{a.str_short()} but the corresponding "
                f"output carry component has type {b.str_short()}"
                f"{mismatch_extra(a, b)}.\n\n{hint}"
                "Revise the function so that all output types match the corresponding "
                "input types."
            )


# ---------------------------------------------------------------- JVP


def jvp_jaxpr_forced(closed: ClosedJaxpr, nonzero, instantiate):
    """The JVP of ``closed``: inputs are the primals then the tangents marked
    ``nonzero``; outputs the primals then the tangents that are nonzero or marked in
    ``instantiate`` (zeros made real). Returns it and which output tangents it has."""
    in_avals = list(closed.in_avals)
    t_avals = [ad.tangent_aval(a) for a, nz in zip(in_avals, nonzero, strict=True) if nz]
    n = len(in_avals)
    box = {}

    def jvp_fun(*args):
        ps, ts = args[:n], iter(args[n:])
        tans = [
            next(ts) if nz else ad.Zero(ad.tangent_aval(a))
            for nz, a in zip(nonzero, in_avals, strict=True)
        ]
        outs_p, outs_t = ad.jvp_flat(jaxpr_fun(closed), ps, tans)
        keep = [type(t) is not ad.Zero or inst for t, inst in zip(outs_t, instantiate, strict=True)]
        box["out_nonzero"] = keep
        return [*outs_p, *[ad.instantiate_zeros(t) for t, k in zip(outs_t, keep, strict=True) if k]]

    jaxpr, _ = trace_to_jaxpr(jvp_fun, in_avals + t_avals, "jvp")
    return jaxpr, box["out_nonzero"]


def jvp_out_nonzero(closed: ClosedJaxpr, nonzero) -> list[bool]:
    return jvp_jaxpr_forced(closed, nonzero, [False] * len(closed.out_avals))[1]


# ---------------------------------------------------------------- partial evaluation


def partial_eval_forced(closed: ClosedJaxpr, unknown, instantiate):
    """Splits ``closed`` given its ``unknown`` inputs, outputs marked ``instantiate``
    unknown even if computable. Returns ``(known, staged, out_unknown, res_avals)``:
    ``known`` maps the known inputs to the known outputs then the residuals (every one,
    known inputs included); ``staged`` maps the residuals then the unknown inputs to the
    unknown outputs."""
    known, staged, out_unknown, _ = partial_eval_jaxpr(
        closed, unknown, "known", instantiate, forward=False
    )
    n_residuals = len(staged.jaxpr.invars) - sum(unknown)
    return known, staged, list(out_unknown), list(staged.in_avals[:n_residuals])


def out_unknown_of(closed: ClosedJaxpr, unknown) -> list[bool]:
    return partial_eval_forced(closed, unknown, [False] * len(closed.out_avals))[2]


# ---------------------------------------------------------------- batching


def batch_jaxpr_forced(closed: ClosedJaxpr, axis_data, in_dims, out_dims_wanted):
    """``closed`` batched for inputs at ``in_dims``; each output is moved to the dim in
    ``out_dims_wanted`` (``None``: left where it comes out, ``not_mapped`` kept only
    if it comes out unbatched). Returns it and the outputs' dims."""
    in_avals = []
    for aval, d in zip(closed.in_avals, in_dims, strict=True):
        if d is not batching.not_mapped:
            shape = list(aval.shape)
            shape.insert(d, axis_data.size)
            aval = aval.update(shape=tuple(shape))
        in_avals.append(aval)
    box = {}

    def batched(*args):
        outs, dims = batching.batch_flat(jaxpr_fun(closed), axis_data, args, in_dims)
        final = []
        for x, d, want in zip(outs, dims, out_dims_wanted, strict=True):
            if want is None or want is batching.not_mapped:
                final.append((x, d))
            else:
                final.append((batching.matchaxis(axis_data, d, want, x), want))
        box["dims"] = [d for _, d in final]
        return [x for x, _ in final]

    jaxpr, _ = trace_to_jaxpr(batched, in_avals, "batched")
    return jaxpr, box["dims"]


# ---------------------------------------------------------------- discharge


def is_ref(aval) -> bool:
    return type(aval) is AbstractRef


def value_type(aval):
    """The type of the array a reference of type ``aval`` holds (others unchanged)."""
    return aval.inner_aval if type(aval) is AbstractRef else aval


def discharged_fun(closed: ClosedJaxpr):
    """``closed`` run with arrays for its reference inputs: ``f(*args)`` returns its
    outputs followed by the final array of each reference input, in input order."""

    def run(*args):
        outs, finals = run_discharged(closed.jaxpr, closed.consts, args)
        return [*outs, *[finals[v] for v in closed.jaxpr.invars if is_ref(v.aval)]]

    return run


def retrace(fun, in_avals, debug: str) -> tuple[ClosedJaxpr, list]:
    """``fun`` traced for ``in_avals``: a Jaxpr taking its constants as leading inputs,
    and their values."""
    closed, _ = trace_to_jaxpr(fun, in_avals, debug)
    return open_closed(closed)
