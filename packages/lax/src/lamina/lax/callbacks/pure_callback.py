"""``pure_callback``: a Python function without side effects called from a program.

Being pure, the call has no effect: the compiler may drop it when nothing uses its
results, and ``vmap`` may call it any number of times (``vmap_method`` says how). It
has no derivative (wrap it in ``custom_jvp`` for one).
"""

from __future__ import annotations

from lamina.interpreters import def_standard_impl, emit_python_callback, moveaxis, not_mapped
from lamina.ir import Primitive, ShapedArray, tree_util
from lamina.lax.base.filling import broadcast
from lamina.lax.callbacks.flat_callback import FlatCallback, host_results, result_avals_of
from lamina.lax.control_flow.scan import scan

__all__ = ["pure_callback", "pure_callback_p"]

VMAP_METHODS = [
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
    None,
]

pure_callback_p = Primitive("pure_callback")
pure_callback_p.multiple_results = True


def _abstract_eval(*avals, callback, result_avals, sharding, vmap_method):
    return list(result_avals)


def _jvp(primals, tangents, **params):
    raise ValueError(
        "Pure callbacks do not support JVP. "
        "Please use `jax.custom_jvp` to use callbacks while taking gradients."
    )


def _transpose(cts, *args, **params):
    raise ValueError(
        "Pure callbacks do not support transpose. "
        "Please use `jax.custom_vjp` to use callbacks while taking gradients."
    )


def _lowering(ctx, *args, callback, result_avals, sharding, vmap_method):
    def host(*flat_args):
        return host_results("jax.pure_callback", callback, flat_args)

    results, _ = emit_python_callback(
        ctx, host, None, list(args), ctx.avals_in, ctx.avals_out, has_side_effect=False
    )
    return results


def _batched_aval(size: int, aval: ShapedArray) -> ShapedArray:
    return ShapedArray((size, *aval.shape), aval.dtype)


def batch_callback(primitive, axis_data, args, dims, *, vmap_method, result_avals, **params):
    """How a callback primitive with a ``vmap_method`` param is batched: by a loop
    over the batch (``sequential``, ``sequential_unrolled``) or by one call on the
    batched arrays (``expand_dims``, ``broadcast_all``, ``legacy_vectorized``)."""
    (size,) = {a.shape[d] for a, d in zip(args, dims, strict=True) if d is not not_mapped}
    args = [a if d is not_mapped else moveaxis(a, d, 0) for a, d in zip(args, dims, strict=True)]
    batched_avals = tuple(_batched_aval(size, a) for a in result_avals)
    if vmap_method == "legacy_vectorized":
        outs = primitive.bind(*args, vmap_method=vmap_method, result_avals=batched_avals, **params)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        n = size if vmap_method == "broadcast_all" else 1
        args = [
            broadcast(a, (n,)) if d is not_mapped else a for a, d in zip(args, dims, strict=True)
        ]
        outs = primitive.bind(*args, vmap_method=vmap_method, result_avals=batched_avals, **params)
    elif vmap_method in ("sequential", "sequential_unrolled"):
        mapped = [d is not not_mapped for d in dims]

        def step(carry, xs):
            it = iter(xs)
            full = [next(it) if m else a for a, m in zip(args, mapped, strict=True)]
            return carry, primitive.bind(
                *full, vmap_method=vmap_method, result_avals=result_avals, **params
            )

        xs = [a for a, m in zip(args, mapped, strict=True) if m]
        _, outs = scan(step, (), xs, unroll=vmap_method == "sequential_unrolled")
    else:
        raise NotImplementedError(
            f"vmap is only supported for the {primitive.name} primitive when vmap_method "
            "is one of 'sequential', 'sequential_unrolled', 'expand_dims', "
            f"'broadcast_all', or 'legacy_vectorized'. Got {vmap_method=}."
        )
    return list(outs), [0] * len(outs)


def _batching(axis_data, args, dims, **params):
    return batch_callback(pure_callback_p, axis_data, args, dims, **params)


pure_callback_p.def_abstract_eval(_abstract_eval)
def_standard_impl(pure_callback_p)
pure_callback_p.def_jvp(_jvp)
pure_callback_p.def_transpose(_transpose)
pure_callback_p.def_batching(_batching)
pure_callback_p.def_lowering(_lowering)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Call ``callback(*args, **kwargs)`` (a pure Python function of arrays on the host
    CPU) from a program; its results must match ``result_shape_dtypes`` (a pytree of
    objects with ``shape`` and ``dtype``). ``vmap_method`` says how ``vmap`` calls it:
    ``"sequential"`` / ``"sequential_unrolled"`` once per batch element,
    ``"expand_dims"`` once with unbatched arguments given a leading axis of size 1,
    ``"broadcast_all"`` once with every argument batched, ``"legacy_vectorized"`` once
    with the batched arguments as they are; None refuses ``vmap``."""
    if vmap_method not in VMAP_METHODS:
        raise ValueError(
            f"vmap_method must be on of the allowed methods {VMAP_METHODS}, but got: {vmap_method}"
        )
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    result_avals, out_tree = result_avals_of(result_shape_dtypes)
    outs = pure_callback_p.bind(
        *flat_args,
        callback=FlatCallback(callback, in_tree),
        result_avals=tuple(result_avals),
        sharding=sharding,
        vmap_method=vmap_method,
    )
    return tree_util.tree_unflatten(out_tree, outs)
