"""Values that must be known while tracing: array arguments checked and converted, and
the host values of shapes, sizes, axes and indices, read from tracers where the trace
knows them (JAX's ConcretizationTypeError, carrying a hint, where it does not). Part
of the base tier: every folder may import it; it imports only ``base.arguments``."""

from __future__ import annotations

import operator

import numpy as np
from lamina.interpreters import ConcretizationTypeError, Tracer
from lamina.numpy.base.arguments import check_arraylike, to_array

__all__ = [
    "as_array",
    "concrete",
    "concrete_index",
    "concrete_int",
    "concrete_value",
    "is_unknown",
    "static_int",
]


def as_array(fun_name: str, x):
    """``x`` checked (lists and strings are refused, as in JAX) and made an array."""
    check_arraylike(fun_name, x)
    return to_array(x)


def is_unknown(value) -> bool:
    """True for a tracer whose value the trace does not know (inside ``jit``, say); a
    concrete value, or a tracer of one (a JVP of concrete values), is known."""
    return isinstance(value, Tracer) and value.to_concrete_value() is None


def concrete(value, context: str):
    """``value`` as it is, a tracer replaced by its known value; a tracer whose value is
    unknown while tracing raises ConcretizationTypeError carrying ``context``."""
    if isinstance(value, Tracer):
        return value._concrete(ConcretizationTypeError(value, context))
    return value


def concrete_value(x, context: str) -> np.ndarray:
    """The value of ``x`` on the host as a NumPy array (lists and tuples of tracers
    too); a traced ``x`` whose value is unknown raises ConcretizationTypeError naming
    ``context``."""
    if isinstance(x, (list, tuple)):
        return np.asarray([concrete_value(v, context) for v in x])
    return np.asarray(concrete(x, context))


def concrete_int(x, context: str) -> int:
    """``int`` of the host value of ``x`` (a 0-d or one-element array, a float...)."""
    return int(concrete_value(x, context))


def concrete_index(value, context: str) -> int:
    """The host value of ``value`` as a Python int, which it must be (``operator.index``:
    a float raises TypeError); ConcretizationTypeError carrying ``context`` when it is
    only known abstractly."""
    return operator.index(concrete(value, context))


def static_int(value, what: str) -> int:
    """A Python int for a static argument such as ``size``; the error for a traced one
    says ``The {what} must be static.``"""
    return concrete_index(value, f"The {what} must be static.")
