"""`lamina.custom_derivatives`: user-defined derivative rules (`jax.custom_derivatives`)."""

import lamina.lax  # noqa: F401  (array operators inside rules)
from lamina.interpreters import (
    CustomVJPPrimal,
    SymbolicZero,
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
    linear_call,
    remat_opt_p,
    zero_from_primal,
)

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "closure_convert",
    "custom_gradient",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "linear_call",
    "remat_opt_p",
    "zero_from_primal",
]
