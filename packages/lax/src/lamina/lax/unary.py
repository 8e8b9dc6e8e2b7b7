"""Unary elementwise primitives: rounding, sign, abs, trigonometric and hyperbolic
functions, exp2/expm1/log1p/logistic, rsqrt/cbrt, integer_pow, square, complex parts.
"""

__all__: list[str] = []
