"""Linear algebra on GPUs: the typed-FFI targets of the CUDA (or ROCm) plugin.

The plugin (``jax-cuda13-plugin``, ``jax-cuda12-plugin``) ships cuSOLVER, cuBLAS and
cuSPARSE kernels as custom-call targets: ``cusolver_potrf_ffi``, ``cusolver_getrf_ffi``,
``cu_lu_pivots_to_permutation``, ``cusparse_gtsv2_ffi``, ``cuhybrid_eig_real``, ...
(``hip`` instead of ``cu`` on ROCm); jaxlib's ``gpu_solver``, ``gpu_linalg`` and
``gpu_sparse`` modules list them. ``target`` names one and registers them all with XLA
for the GPU platform, once; without the plugin there is nothing to register and
lowering still works (a module for ``cuda`` can be read on any machine).

A call takes one dtype-generic target (the kernel reads the element type), column-major
matrices for the operands and results of the operands' largest rank and row-major
layouts for the rest, the number of leading batch dimensions as the frontend attribute
``num_batch_dims``, and its parameters as ``mhlo.backend_config`` (``lower = true``), as
JAX 0.10.2 lowers them. lamina leaves out JAX's ``sdy.sharding_rule`` attribute (it
partitions with GSPMD).
"""

from __future__ import annotations

import threading

import numpy as np

from lamina.interpreters.mlir import ir
from lamina.lax.linalg._ffi_calls import ffi_custom_call, layout

_PREFIX = {"cuda": "cu", "rocm": "hip"}
_registered = False
_lock = threading.Lock()


def register_targets() -> None:
    """Register the GPU plugin's solver, linalg and sparse targets with XLA, once (a
    no-op when no plugin is installed)."""
    global _registered
    with _lock:
        if _registered:
            return
        from jaxlib import gpu_linalg, gpu_solver, gpu_sparse, xla_client

        for module in (gpu_solver, gpu_linalg, gpu_sparse):
            for platform, targets in module.registrations().items():
                for name, handler, api_version in targets:
                    xla_client.register_custom_call_target(
                        name, handler, platform=platform, api_version=api_version
                    )
            for name in module.batch_partitionable_targets():
                xla_client.register_custom_call_as_batch_partitionable(name)
        _registered = True


def prefix(ctx) -> str:
    """``cu`` on CUDA, ``hip`` on ROCm: the front of the platform's target names."""
    return _PREFIX[ctx.platform]


def target(ctx, name: str) -> str:
    """The target ``<cu|hip><name>`` for the platform being lowered for, registered."""
    register_targets()
    return prefix(ctx) + name


def solver(ctx, routine: str) -> str:
    """``cusolver_<routine>_ffi`` (``hipsolver_...`` on ROCm), registered."""
    return target(ctx, f"solver_{routine}_ffi")


def initialize_hybrid_kernels() -> None:
    """Load the host (LAPACK, MAGMA) side of the plugin's hybrid kernels, if present."""
    register_targets()
    from jaxlib import gpu_solver

    gpu_solver.initialize_hybrid_kernels()


_cusolver_version: int | None = None


def cusolver_version() -> int:
    """cuSOLVER's version as the CUDA plugin reports it (``11701`` for 11.7.1); 0
    without the plugin or the library."""
    global _cusolver_version
    if _cusolver_version is None:
        from jaxlib.plugin_support import import_from_plugin

        versions = import_from_plugin("cuda", "_versions")
        try:
            _cusolver_version = int(versions.cusolver_get_version()) if versions else 0
        except Exception:  # the plugin is there but the library cannot be loaded
            _cusolver_version = 0
    return _cusolver_version


def _attribute(value) -> ir.Attribute:
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, np.uint8):
        return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), int(value))
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    raise TypeError(f"unsupported backend_config value {value!r}")


def custom_call(
    target_name: str,
    operands,
    operand_avals,
    result_avals,
    *,
    config: dict | None = None,
    aliases: dict[int, int] | None = None,
    column_major: bool = True,
    num_non_batch_dims: int | None = 2,
) -> list[ir.Value]:
    """``stablehlo.custom_call @target_name`` as JAX lowers its GPU linear algebra:
    ``config`` (bools, ``np.uint8``, strings) becomes ``mhlo.backend_config``;
    ``aliases`` maps a result to the operand whose buffer it reuses. With
    ``num_non_batch_dims=None`` the call has no ``num_batch_dims`` attribute (and
    row-major layouts): JAX's plain FFI calls."""
    if num_non_batch_dims is None:
        column_major = False
    max_nd = max(a.ndim for a in operand_avals)

    def layouts(avals):
        return [layout(a.ndim, column_major and a.ndim == max_nd) for a in avals]

    return ffi_custom_call(
        target_name,
        operands,
        result_avals,
        operand_layouts=layouts(operand_avals),
        result_layouts=layouts(result_avals),
        config={k: _attribute(v) for k, v in (config or {}).items()},
        aliases=aliases,
        num_batch_dims=None if num_non_batch_dims is None else max_nd - num_non_batch_dims,
    )
