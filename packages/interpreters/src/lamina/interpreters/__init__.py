"""lamina.interpreters: see this package's README.md for what the layer holds.

Not built yet: an importable placeholder with its declared dependencies.
"""
