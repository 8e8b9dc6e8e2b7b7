"""`lamina.extend.mlir.dialects`: jaxlib's MLIR dialect bindings, one module each."""
