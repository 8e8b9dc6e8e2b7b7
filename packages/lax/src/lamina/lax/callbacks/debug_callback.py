"""``debug_callback``: a Python function called for its side effects while debugging.

The call carries ``DebugEffect`` (``OrderedDebugEffect`` when ordered), so it is kept
in programs, runs on the primal values under differentiation, once per batch element
under ``vmap``, and on every iteration of loops. Outside a trace it calls the function
straight away.
"""

from __future__ import annotations

from lamina.interpreters import emit_python_callback, not_mapped, shaped_abstractify
from lamina.ir import (
    Effect,
    Primitive,
    control_flow_allowed_effects,
    custom_derivatives_allowed_effects,
    lowerable_effects,
    ordered_effects,
    remat_allowed_effects,
    tree_util,
)
from lamina.lax.base.reshaping import index_in_dim
from lamina.lax.callbacks.flat_callback import call_on_host

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "debug_callback",
    "debug_callback_p",
    "debug_effect",
    "def_debug_rules",
    "lower_debug_callback",
    "merge_callback_args",
    "ordered_debug_effect",
    "run_debug_callback",
    "split_callback_args",
]


class DebugEffect(Effect):
    def __str__(self):
        return "Debug"


class OrderedDebugEffect(Effect):
    def __str__(self):
        return "OrderedDebug"


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()
for _t in (DebugEffect, OrderedDebugEffect):
    lowerable_effects.add_type(_t)
    control_flow_allowed_effects.add_type(_t)
    remat_allowed_effects.add_type(_t)
    custom_derivatives_allowed_effects.add_type(_t)
ordered_effects.add_type(OrderedDebugEffect)


def run_debug_callback(callback, args) -> list:
    """Call ``callback`` on ``args`` brought to the host CPU; no results."""
    call_on_host("jax.debug.callback", callback, args)
    return []


def lower_debug_callback(ctx, args, host, effect, partitioned):
    """Emit a call of ``host`` (NumPy arrays in, nothing out) carrying ``effect``."""

    def call(*flat_args):
        host(*flat_args)
        return ()

    ordered = ordered_effects.contains(effect)
    token = ctx.get_token(effect) if ordered else None
    results, token = emit_python_callback(
        ctx, call, token, list(args), ctx.avals_in, [], has_side_effect=True,
        partitioned=partitioned,
    )  # fmt: skip
    if ordered:
        ctx.set_token(effect, token)
    return results


def def_debug_rules(primitive: Primitive, effect_of, lower) -> None:
    """Register the rules shared by debugging callbacks on ``primitive`` (a
    ``multiple_results`` primitive with no results): effects from ``effect_of(params)``,
    JVP on the primals, no cotangents, batching by one call per batch element."""
    primitive.multiple_results = True
    primitive.effectful = True

    def abstract_eval(*avals, **params):
        return [], {effect_of(params)}

    def jvp(primals, tangents, **params):
        return primitive.bind(*primals, **params), []

    def transpose(cts, *args, **params):
        return [None] * len(args)

    def batching(axis_data, args, dims, **params):
        (size,) = {a.shape[d] for a, d in zip(args, dims, strict=True) if d is not not_mapped}
        for i in range(size):
            primitive.bind(
                *[
                    a if d is not_mapped else index_in_dim(a, i, d, keepdims=False)
                    for a, d in zip(args, dims, strict=True)
                ],
                **params,
            )
        return [], []

    primitive.def_abstract_eval(abstract_eval)
    primitive.def_jvp(jvp)
    primitive.def_transpose(transpose)
    primitive.def_batching(batching)
    primitive.def_lowering(lower, "cpu")
    primitive.def_lowering(lower, "gpu")


debug_callback_p = Primitive("debug_callback")


def _impl(*args, callback, effect, partitioned):
    return run_debug_callback(callback, args)


def _lowering(ctx, *args, callback, effect, partitioned):
    def host(*flat_args):
        run_debug_callback(callback, flat_args)

    return lower_debug_callback(ctx, args, host, effect, partitioned)


debug_callback_p.def_impl(_impl)
def_debug_rules(debug_callback_p, lambda params: params["effect"], _lowering)


def split_callback_args(args, kwargs):
    """The treedef of ``(args, kwargs)``, its array leaves, and the other leaves by
    position (passed to the callback as they are)."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    static, dynamic = {}, []
    for i, leaf in enumerate(leaves):
        try:
            shaped_abstractify(leaf)
        except (AssertionError, TypeError):
            static[i] = leaf
        else:
            dynamic.append(leaf)
    return in_tree, dynamic, static


def merge_callback_args(in_tree, dynamic, static):
    """The ``(args, kwargs)`` of :func:`split_callback_args` put back together."""
    it = iter(dynamic)
    leaves = [static[i] if i in static else next(it) for i in range(len(static) + len(dynamic))]
    return tree_util.tree_unflatten(in_tree, leaves)


def debug_callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` (returning None) from a program, for its side
    effects; ``ordered=True`` keeps program order among ordered callbacks. Without
    ``callback`` returns a function taking ``callback, *args, **kwargs``."""

    def _debug_callback(callback, *c_args, **c_kwargs):
        if not callable(callback):
            raise TypeError(
                "first argument to jax.debug.callback must be callable, "
                f"but got an object of type {type(callback)}"
            )
        in_tree, dynamic, static = split_callback_args(c_args, c_kwargs)

        def _flat_callback(*flat):
            a, k = merge_callback_args(in_tree, flat, static)
            callback(*a, **k)
            return ()

        debug_callback_p.bind(
            *dynamic,
            callback=_flat_callback,
            effect=ordered_debug_effect if ordered else debug_effect,
            partitioned=partitioned,
        )

    if callback is not None:
        _debug_callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(
            f"debug_callback received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return _debug_callback
