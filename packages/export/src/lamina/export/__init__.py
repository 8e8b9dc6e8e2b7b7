"""lamina.export: serialization of lowered programs and symbolic shapes.

Not built yet: this layer is an importable placeholder with its declared dependencies."""
