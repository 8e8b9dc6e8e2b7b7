"""``jax._src.core``: abstract values and tracers (``lamina.core``'s), and
``physical_aval`` (the array an extended-dtype value is stored as)."""

from lamina.core import ShapedArray, Trace, Tracer
from lamina.ir import AbstractValue, physical_aval

__all__ = ["AbstractValue", "ShapedArray", "Trace", "Tracer", "physical_aval"]
