"""``eq_to``, ``le_to`` and ``lt_to``: comparisons in the IEEE total order, where
-NaN < -inf < ... < -0 < +0 < ... < inf < NaN, so floats sort like integers (sort
comparators use them). Integers and bools compare as usual."""

from __future__ import annotations

from lamina.interpreters import ad, batching
from lamina.lax.base.primitives import comparison_primitive

__all__ = ["eq_to_p", "le_to_p", "lt_to_p"]

eq_to_p = comparison_primitive("eq_to", "EQ", None, total_order=True)
le_to_p = comparison_primitive("le_to", "LE", None, total_order=True)
lt_to_p = comparison_primitive("lt_to", "LT", None, total_order=True)
for _p in (eq_to_p, le_to_p, lt_to_p):
    batching.defbroadcasting(_p)
    ad.zero_jvp(_p)  # boolean results
