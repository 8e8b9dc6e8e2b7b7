"""lamina.lax: every primitive with all of its rules: elementwise, shapes, reductions, control flow, linear algebra, FFT, random bits, collectives.

Not built yet: this layer is an importable placeholder with its declared dependencies."""
