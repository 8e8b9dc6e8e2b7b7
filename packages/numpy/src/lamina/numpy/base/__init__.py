"""The base tier of lamina.numpy, on lax alone: what every function does first with its
arguments (``arguments``: array checks and conversion, dtype promotion, axis
canonicalization), the host values of arguments that must be known while tracing
(``static_values``), and the shape operations the concern folders share (``shaping``).
Imports nothing above it."""
