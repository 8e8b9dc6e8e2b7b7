"""``io_callback``: a Python function with side effects called from a program.

The call carries an effect, so it is never dropped; with ``ordered=True`` the effect
is ordered and calls run in program order (threaded by tokens), across calls of
compiled programs too.
"""

from __future__ import annotations

from lamina.interpreters import def_standard_impl, emit_python_callback, moveaxis, not_mapped
from lamina.ir import (
    Effect,
    Primitive,
    control_flow_allowed_effects,
    lowerable_effects,
    ordered_effects,
    shardable_ordered_effects,
    tree_util,
)
from lamina.lax.callbacks.flat_callback import FlatCallback, host_results, result_avals_of
from lamina.lax.control_flow.map import map as lax_map

__all__ = ["IOEffect", "OrderedIOEffect", "io_callback", "io_callback_p"]


class IOEffect(Effect):
    def __str__(self):
        return "IO"


class OrderedIOEffect(Effect):
    def __str__(self):
        return "OrderedIO"


io_effect = IOEffect()
ordered_io_effect = OrderedIOEffect()
for _t in (IOEffect, OrderedIOEffect):
    lowerable_effects.add_type(_t)
    control_flow_allowed_effects.add_type(_t)
ordered_effects.add_type(OrderedIOEffect)
shardable_ordered_effects.add_type(OrderedIOEffect)

io_callback_p = Primitive("io_callback")
io_callback_p.multiple_results = True
io_callback_p.effectful = True


def _abstract_eval(*avals, callback, result_avals, sharding, ordered):
    return list(result_avals), {ordered_io_effect if ordered else io_effect}


def _jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _transpose(cts, *args, **params):
    raise ValueError("IO callbacks do not support transpose.")


def _batching(axis_data, args, dims, *, callback, result_avals, sharding, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    mapped = [d is not not_mapped for d in dims]
    args = [a if d is not_mapped else moveaxis(a, d, 0) for a, d in zip(args, dims, strict=True)]

    def one(xs):
        it = iter(xs)
        full = [next(it) if m else a for a, m in zip(args, mapped, strict=True)]
        return io_callback_p.bind(
            *full, callback=callback, result_avals=result_avals, sharding=sharding, ordered=False
        )

    outs = lax_map(one, [a for a, m in zip(args, mapped, strict=True) if m])
    return list(outs), [0] * len(outs)


def _lowering(ctx, *args, callback, result_avals, sharding, ordered):
    def host(*flat_args):
        return host_results("jax.io_callback", callback, flat_args)

    token = ctx.get_token(ordered_io_effect) if ordered else None
    results, token = emit_python_callback(
        ctx, host, token, list(args), ctx.avals_in, ctx.avals_out, has_side_effect=True
    )
    if ordered:
        ctx.set_token(ordered_io_effect, token)
    return results


io_callback_p.def_abstract_eval(_abstract_eval)
def_standard_impl(io_callback_p)
io_callback_p.def_jvp(_jvp)
io_callback_p.def_transpose(_transpose)
io_callback_p.def_batching(_batching)
io_callback_p.def_lowering(_lowering)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` (a Python function with side effects, given
    arrays on the host CPU) from a program; its results must match
    ``result_shape_dtypes`` (a pytree of objects with ``shape`` and ``dtype``, or None).
    With ``ordered=True`` calls keep program order (and cannot be ``vmap``ped)."""
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    result_avals, out_tree = result_avals_of(result_shape_dtypes)
    outs = io_callback_p.bind(
        *flat_args,
        callback=FlatCallback(callback, in_tree),
        result_avals=tuple(result_avals),
        sharding=sharding,
        ordered=ordered,
    )
    return tree_util.tree_unflatten(out_tree, outs)
