"""Lowering primitives on operands of extended dtypes (PRNG keys).

:func:`allow_extended` lets a structural primitive (``reshape``, ``broadcast_in_dim``,
``gather``, ...) take extended operands. Such a primitive acts on each element as a
whole, so on the physical data (:mod:`..runtime.extended`) it is the same primitive vectorized
over the element's trailing dimensions: its lowering on extended operands is its own
batching rule applied to those dimensions. One rule serves every structural
primitive; none needs a copy that knows about trailing dimensions.
"""

from __future__ import annotations

from lamina.interpreters.jaxprs.staging import trace_to_jaxpr
from lamina.interpreters.transformations.batching import vmap
from lamina.ir import Primitive, is_extended_aval, lowering_rules, physical_aval

__all__ = ["allow_extended", "extended_lowering", "lower_on_physical"]


def _element_ndim(avals) -> int:
    ndims = {len(a.dtype.physical_element_shape) for a in avals if is_extended_aval(a)}
    if len(ndims) > 1:
        raise TypeError(f"operands of different extended dtypes: {[str(a) for a in avals]}")
    return ndims.pop() if ndims else 0


def extended_lowering(primitive: Primitive, ctx, *args, **params):
    """Lower ``primitive`` on extended operands: on the physical data it is the
    primitive mapped (``vmap``) over the element's trailing dimensions, which stay last
    in every extended result."""
    avals_in = list(ctx.avals_in)
    element_ndim = _element_ndim([*avals_in, *ctx.avals_out])
    in_axes = [-1 if is_extended_aval(a) else None for a in avals_in]
    out_axes = [-1 if is_extended_aval(a) else None for a in ctx.avals_out]

    def bind(*xs):
        out = primitive.bind(*xs, **params)
        return list(out) if primitive.multiple_results else [out]

    mapped = bind
    for _ in range(element_ndim):  # innermost map: the first element dimension
        mapped = vmap(mapped, in_axes=in_axes, out_axes=out_axes)
    return lower_on_physical(ctx, mapped, *args, name=primitive.name)


def lower_on_physical(ctx, fun, *args, name: str = "physical"):
    """Emit ``fun`` (written with primitives, taking and returning lists of arrays)
    applied to the physical data ``args`` of operands of types ``ctx.avals_in``."""
    closed, _ = trace_to_jaxpr(fun, [physical_aval(a) for a in ctx.avals_in], name)
    return ctx.call(closed, args, inline=True)


def allow_extended(primitive: Primitive, extended_rule=None) -> Primitive:
    """Let ``primitive`` lower with operands or results of extended dtypes: through
    ``extended_rule(ctx, *args, **params)`` if given, else (for a structural
    primitive, which moves whole elements around) through :func:`extended_lowering`."""
    if extended_rule is None:

        def extended_rule(ctx, *args, **params):
            return extended_lowering(primitive, ctx, *args, **params)

    for platform, rule in list(lowering_rules[primitive].items()):

        def lower(ctx, *args, _rule=rule, **params):
            for a in ctx.avals_in:
                if is_extended_aval(a):
                    return extended_rule(ctx, *args, **params)
            for a in ctx.avals_out:
                if is_extended_aval(a):
                    return extended_rule(ctx, *args, **params)
            return _rule(ctx, *args, **params)

        lowering_rules[primitive][platform] = lower
    return primitive
