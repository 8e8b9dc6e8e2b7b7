"""`lamina.ffi`: calling foreign functions registered with XLA (`jax.ffi`).

Targets are registered in the runtime (lamina-interpreters) and called through lax's
``ffi_call`` primitive.
"""

from lamina.interpreters import (
    include_dir,
    pycapsule,
    register_ffi_target,
    register_ffi_target_as_batch_partitionable,
    register_ffi_type,
    register_ffi_type_id,
)
from lamina.lax import build_ffi_lowering_function, ffi_call, ffi_lowering

__all__ = [
    "build_ffi_lowering_function",
    "ffi_call",
    "ffi_lowering",
    "include_dir",
    "pycapsule",
    "register_ffi_target",
    "register_ffi_target_as_batch_partitionable",
    "register_ffi_type",
    "register_ffi_type_id",
]
