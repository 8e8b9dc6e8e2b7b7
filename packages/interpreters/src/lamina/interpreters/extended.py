"""Arrays of extended dtypes (PRNG keys, ``key<fry>``): how the interpreters run them.

An array of an extended dtype has a *logical* type, ``ShapedArray(shape, key<fry>)``,
which Jaxprs, tracers and transformations see, and *physical* data: a concrete array
of type :func:`~lamina.ir.core.physical_aval` (``uint32[*shape, 2]``) that lowering and
execution see. Concrete extended arrays keep that data as ``_base_array`` and are made
from it by their dtype's ``wrap_physical``.

Here are the three places the two views meet:

* lowering: :func:`allow_extended` lets a structural primitive (``reshape``,
  ``broadcast_in_dim``, ``gather``, ...) take extended operands. Such a primitive acts
  on each element as a whole, so on the physical data it is the same primitive
  vectorized over the element's trailing dimensions: its lowering on extended operands
  is its own batching rule applied to those dimensions. One rule serves every
  structural primitive; none needs a copy that knows about trailing dimensions.
* execution: :class:`PhysicalCall` runs a compiled module on the physical data of its
  arguments and wraps the results of extended type back into arrays;
  :func:`apply_extended` is eager dispatch for primitives with extended operands.
* values: :func:`is_extended_value`, :func:`physical_value`.
"""

from __future__ import annotations

from lamina.ir import (
    Primitive,
    abstract_eval_rules,
    is_extended_aval,
    lowering_rules,
    physical_aval,
)

__all__ = [
    "PhysicalCall",
    "allow_extended",
    "apply_extended",
    "extended_lowering",
    "is_extended_value",
    "lower_on_physical",
    "physical_value",
]


def is_extended_value(x) -> bool:
    """Whether ``x`` is a concrete array of an extended dtype."""
    return hasattr(x, "_base_array") and is_extended_aval(getattr(x, "aval", None))


def physical_value(x):
    """The physical data of a concrete extended array; anything else as it is."""
    return x._base_array if is_extended_value(x) else x


# --------------------------------------------------------------------- lowering


def _element_ndim(avals) -> int:
    ndims = {len(a.dtype.physical_element_shape) for a in avals if is_extended_aval(a)}
    if len(ndims) > 1:
        raise TypeError(f"operands of different extended dtypes: {[str(a) for a in avals]}")
    return ndims.pop() if ndims else 0


def extended_lowering(primitive: Primitive, ctx, *args, **params):
    """Lower ``primitive`` on extended operands: on the physical data it is the
    primitive mapped (``vmap``) over the element's trailing dimensions, which stay last
    in every extended result."""
    from lamina.interpreters.batching import vmap

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
    from lamina.interpreters.staging import trace_to_jaxpr

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
            if any(is_extended_aval(a) for a in (*ctx.avals_in, *ctx.avals_out)):
                return extended_rule(ctx, *args, **params)
            return _rule(ctx, *args, **params)

        lowering_rules[primitive][platform] = lower
    return primitive


# --------------------------------------------------------------------- execution


class PhysicalCall:
    """A compiled module taking and returning physical data, called with logical
    values: extended arguments give their data, extended results are wrapped."""

    __slots__ = ("_compiled", "_out_avals")

    def __init__(self, compiled, out_avals):
        self._compiled = compiled
        self._out_avals = list(out_avals)

    def __call__(self, *args) -> list:
        outs = self._compiled(*[physical_value(a) for a in args])
        return [
            a.dtype.wrap_physical(o) if is_extended_aval(a) else o
            for o, a in zip(outs, self._out_avals, strict=True)
        ]


_calls: dict = {}  # (primitive, params, input types, device) -> PhysicalCall


def apply_extended(primitive: Primitive, args, params):
    """Eager dispatch of ``primitive`` with some extended operands: the one-primitive
    executable of the logical types (compiled once, as :mod:`.dispatch` does), run on
    the physical data."""
    from lamina.interpreters import dispatch  # imports this module

    args = [dispatch._to_physical_operand(x) for x in args]
    device = None
    for x in args:
        data = physical_value(x)
        if data._committed:
            device = dispatch._committed_device(device, data)
    avals = tuple(x.aval for x in args)
    key = (primitive, dispatch._params_key(params), avals, device)
    call = _calls.get(key)
    if call is None:
        compiled = dispatch.primitive_executable(primitive, avals, params, device)
        out = abstract_eval_rules[primitive](*avals, **params)
        call = _calls[key] = PhysicalCall(
            compiled, list(out) if primitive.multiple_results else [out]
        )
    outs = call(*args)
    return outs if primitive.multiple_results else outs[0]


def clear_cache() -> None:
    _calls.clear()
