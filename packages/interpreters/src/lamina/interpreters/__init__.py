"""lamina.interpreters: tracing, jit, automatic differentiation, batching, lowering to StableHLO and the jaxlib backend.

Not built yet: this layer is an importable placeholder with its declared dependencies."""
