"""lamina.export: JAX's ``jax.export``. ``export(jit(f))(*arg_specs)`` lowers a function
for some platforms into an :class:`Exported` that can be called (inside ``jit``, under
``grad``), serialized to bytes in JAX's format and deserialized, by lamina or JAX."""

from lamina.export.exported import (
    Exported,
    default_export_platform,
    deserialize,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
)
from lamina.export.exporting import export
from lamina.export.pytree_serialization import (
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)
from lamina.export.safety_checks import DisabledSafetyCheck
from lamina.export.shape_poly import (
    SymbolicScope,
    is_symbolic_dim,
    symbolic_args_specs,
    symbolic_shape,
)

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "SymbolicScope",
    "default_export_platform",
    "deserialize",
    "export",
    "is_symbolic_dim",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "symbolic_args_specs",
    "symbolic_shape",
]
