"""lamina.scipy: the SciPy API (`lamina.scipy.*`).

Not built yet: this layer is an importable placeholder with its declared dependencies."""
