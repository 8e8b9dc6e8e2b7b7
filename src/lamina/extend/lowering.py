"""`lamina.extend.lowering`: what lowering rules work with (`jax.extend.lowering`).

``LoweringRuleContext`` is the context lamina passes to every lowering rule
(``ctx.avals_in``, ``ctx.avals_out``, ``ctx.module_context``); ``JaxIrContext`` the
MLIR context class lamina lowers in; ``upstream_dialects`` a registry of the MLIR
dialects it loads. The MLIR names load jaxlib's bindings on first use.
"""

from lamina.interpreters import LoweringRuleContext
from lamina.interpreters.mlir import ir, jax_mlir_ext

__all__ = ["JaxIrContext", "LoweringRuleContext", "upstream_dialects"]  # noqa: F822 (__getattr__)


def __getattr__(name: str):
    if name == "JaxIrContext":
        value = ir.Context
    elif name == "upstream_dialects":
        value = ir.DialectRegistry()
        jax_mlir_ext.register_dialects(value)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
