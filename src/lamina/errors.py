"""`lamina.errors`: JAX's error classes (`jax.errors`)."""

from lamina.interpreters import (
    ConcretizationTypeError,
    InconclusiveDimensionOperation,
    JAXIndexError,
    JaxRuntimeError,
    JAXTypeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from lamina.ir import JaxprTypeError

__all__ = [
    "ConcretizationTypeError",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JaxRuntimeError",
    "JaxprTypeError",
    "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
