"""`lamina.errors`: JAX's error classes (`jax.errors`)."""

from lamina.interpreters.errors import (
    ConcretizationTypeError,
    JAXIndexError,
    JAXTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = [
    "ConcretizationTypeError",
    "JAXIndexError",
    "JAXTypeError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
