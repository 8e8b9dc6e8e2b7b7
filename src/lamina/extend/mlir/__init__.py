"""`lamina.extend.mlir`: StableHLO utilities of jaxlib (`jax.extend.mlir`), and the
MLIR dialect modules under ``lamina.extend.mlir.dialects``."""

from jaxlib import _jax

__all__ = [
    "deserialize_portable_artifact",
    "hlo_to_stablehlo",
    "lower_with_sharding_in_types",
    "refine_polymorphic_shapes",
    "serialize_portable_artifact",
]

deserialize_portable_artifact = _jax.mlir.deserialize_portable_artifact
serialize_portable_artifact = _jax.mlir.serialize_portable_artifact
refine_polymorphic_shapes = _jax.mlir.refine_polymorphic_shapes
hlo_to_stablehlo = _jax.mlir.hlo_to_stablehlo


def lower_with_sharding_in_types(ctx, op, aval):
    """``op`` annotated with the sharding that ``aval``'s type carries. lamina's types
    carry no sharding (meshes are not built yet, issue 17), so ``op`` is returned."""
    del ctx, aval
    return op
