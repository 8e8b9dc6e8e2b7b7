"""lamina.numpy: the NumPy API (`lamina.numpy`, `.linalg`, `.fft`) written on lax.

Not built yet: this layer is an importable placeholder with its declared dependencies."""
