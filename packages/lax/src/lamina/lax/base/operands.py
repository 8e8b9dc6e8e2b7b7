"""Helpers shared by the primitive families: defining a primitive with its rules, dtype
checks with JAX's messages, and turning operands into values a primitive accepts."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import def_standard_impl
from lamina.ir import Primitive, ShapedArray, dtypes

__all__ = [
    "ANY",
    "COMPLEX",
    "FLOAT",
    "INEXACT",
    "INT",
    "NUMBER",
    "NUMERIC",
    "aval_of",
    "check_dtype",
    "check_same_dtypes",
    "standard_primitive",
]

# Dtype categories, named as JAX's messages name them.
INT = ("integer", np.integer)
FLOAT = ("floating", np.floating)
COMPLEX = ("complexfloating", np.complexfloating)
NUMBER = ("number", np.number)
INEXACT = (FLOAT, COMPLEX)
NUMERIC = (INT, FLOAT, COMPLEX)
ANY = None


def standard_primitive(
    name: str, abstract_eval, lowering, platform: str | None = None
) -> Primitive:
    """A primitive evaluated eagerly by dispatch, with its abstract eval and lowering
    (for ``platform`` only, when given)."""
    prim = Primitive(name)
    prim.def_abstract_eval(abstract_eval)
    prim.def_lowering(lowering, platform)
    def_standard_impl(prim)
    return prim


# (dtype, accepted) -> whether the dtype is accepted: every staged operation checks its
# operands' dtypes, against a few dozen distinct pairs.
_accepted: dict[tuple, bool] = {}


def _is_accepted(dtype, accepted) -> bool:
    return any(dtypes.issubdtype(dtype, kind) for _, kind in accepted)


def check_dtype(name: str, dtype, accepted, position: int | None = None) -> None:
    """``TypeError`` unless ``dtype`` is a subtype of one of ``accepted`` categories."""
    if accepted is ANY:
        return
    try:
        ok = _accepted.get((dtype, accepted))
        if ok is None:
            ok = _accepted[dtype, accepted] = _is_accepted(dtype, accepted)
    except TypeError:  # unhashable
        ok = _is_accepted(dtype, accepted)
    if ok:
        return
    where = "" if position is None else f" at position {position}"
    names = ", ".join(n for n, _ in accepted)
    raise TypeError(
        f"{name} does not accept dtype {dtypes.dtype(dtype).name}{where}. Accepted dtypes"
        f"{where} are subtypes of {names}."
    )


def check_same_dtypes(name: str, avals, tip: str | None = None) -> None:
    """JAX's ``lax.add requires arguments to have the same dtypes`` error (weak types
    are ignored: ``lax.add(x, 2)`` needs ``x`` of int32)."""
    if len({a.dtype for a in avals}) > 1:
        got = ", ".join(a.dtype.name for a in avals)
        msg = f"lax.{name} requires arguments to have the same dtypes, got {got}."
        if tip:
            msg += (
                f" (Tip: jnp.{tip} is a similar function that does automatic type "
                "promotion on inputs)."
            )
        raise TypeError(msg)


def aval_of(x) -> ShapedArray:
    """The abstract value of an operand: an array, a tracer or a Python/NumPy value."""
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    if dtypes.is_python_scalar(x):
        return ShapedArray((), dtypes.dtype(x), weak_type=dtypes.is_weakly_typed(x))
    x = np.asarray(x)
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))


def broadcasting_shape(name: str, shapes) -> tuple:
    """The result shape of an elementwise operation: non-scalar operands have one rank,
    and each dimension agrees or is 1."""
    shapes = [tuple(s) for s in shapes if s]
    if not shapes:
        return ()
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got {ranks}")
    out = []
    for sizes in zip(*shapes, strict=True):
        big = {d for d in sizes if d != 1}
        if len(big) > 1:
            shown = ", ".join(str(s) for s in shapes)
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {shown}.")
        out.append(big.pop() if big else 1)
    return tuple(out)
