"""lamina.nn: activations, attention and initializers (`lamina.nn`).

Not built yet: this layer is an importable placeholder with its declared dependencies."""
