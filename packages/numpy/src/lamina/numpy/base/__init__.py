"""The base tier of lamina.numpy: what every function does first with its arguments
(array checks and conversion, dtype promotion, axis canonicalization). Imports nothing
above it."""
