"""`lamina.errors`: JAX's error classes (`jax.errors`)."""

from lamina.interpreters import (
    ConcretizationTypeError,
    JAXIndexError,
    JAXTypeError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = [
    "ConcretizationTypeError",
    "JAXIndexError",
    "JAXTypeError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
