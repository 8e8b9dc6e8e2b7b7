"""lamina.pallas: the Pallas kernel language, interpret mode and GPU lowering.

Not built yet: this layer is an importable placeholder with its declared dependencies."""
