"""Arrays of extended dtypes (PRNG keys, ``key<fry>``): their logical and physical views.

An array of an extended dtype has a *logical* type, ``ShapedArray(shape, key<fry>)``,
which Jaxprs, tracers and transformations see, and *physical* data: a concrete array
of type :func:`~lamina.ir.physical_aval` (``uint32[*shape, 2]``) that lowering and
execution see. Concrete extended arrays keep that data as ``_base_array`` and are made
from it by their dtype's ``wrap_physical``.

Here are the values (:func:`is_extended_value`, :func:`physical_value`) and
:class:`PhysicalCall`, which runs a compiled module on the physical data of its
arguments and wraps the results of extended type back into arrays. Eager dispatch of
primitives with extended operands is :func:`.dispatch.apply_extended`; lowering them,
:mod:`..transformations.extended_lowering`.
"""

from __future__ import annotations

from lamina.ir import ShapedArray, is_extended_aval

__all__ = ["PhysicalCall", "is_extended_value", "physical_value", "wrap_physical"]


def is_extended_value(x) -> bool:
    """Whether ``x`` is a concrete array of an extended dtype."""
    return hasattr(x, "_base_array") and is_extended_aval(getattr(x, "aval", None))


def physical_value(x):
    """The physical data of a concrete extended array; anything else as it is."""
    return x._base_array if is_extended_value(x) else x


def wrap_physical(dtype, data):
    """The array of extended ``dtype`` whose physical data is the concrete ``data``: made
    by the result handler of the dtype's ``_rules`` when it has them (a dtype written
    the JAX way), else by its ``wrap_physical``."""
    rules = getattr(dtype, "_rules", None)
    if rules is None:
        return dtype.wrap_physical(data)
    shape = data.shape[: data.ndim - len(dtype.physical_element_shape)]
    handler = rules.global_sharded_result_handler(
        ShapedArray(shape, dtype), data.sharding, data.committed
    )
    return handler(data)


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
            wrap_physical(a.dtype, o) if is_extended_aval(a) else o
            for o, a in zip(outs, self._out_avals, strict=True)
        ]
