"""lamina.profiler: traces, annotations and memory profiles.

Not built yet: this layer is an importable placeholder with its declared dependencies."""
