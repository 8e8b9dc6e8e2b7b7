"""LAPACK on CPU: jaxlib's typed-FFI custom-call targets (``lapack_spotrf_ffi``, ...).

jaxlib ships the kernels in ``jaxlib.cpu._lapack``; they call the LAPACK routines that
SciPy exports, whose addresses ``_lapack.initialize()`` looks up. The targets must be
registered with XLA's CPU custom-call registry before a module that uses them compiles,
so lowering rules call ``lapack_target`` (which registers all of them once), and
``ffi_call``'s lowering calls ``register_targets`` (JAX registers them when it loads).

A call takes matrices in column-major order inside each matrix with batch dimensions
leading (the ``operand_layouts``), and the number of leading batch dimensions as the
frontend attribute ``num_batch_dims``; params go in ``mhlo.backend_config`` as a
dictionary (``uplo = 76 : ui8`` for ``'L'``). Most kernels return an ``info`` array
per matrix: 0 on success. These builders also hold the small StableHLO helpers that the
lowerings share (masking failed matrices with NaN, triangles).
"""

from __future__ import annotations

import threading

import numpy as np

from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ShapedArray, dtypes
from lamina.lax.linalg._ffi_calls import ffi_custom_call, layout

_PREFIX = {
    np.dtype(np.float32): "s",
    np.dtype(np.float64): "d",
    np.dtype(np.complex64): "c",
    np.dtype(np.complex128): "z",
}
_registered = False
_lock = threading.Lock()


def register_targets() -> None:
    """Register every LAPACK target of jaxlib with XLA, once."""
    global _registered
    with _lock:
        if _registered:
            return
        from jaxlib import xla_client
        from jaxlib.cpu import _lapack

        _lapack.initialize()
        for name, handler in _lapack.registrations().items():
            xla_client.register_custom_call_target(
                name, handler, platform="cpu", api_version=int(name.endswith("_ffi"))
            )
        _registered = True


def lapack_target(routine: str, dtype) -> str:
    """``lapack_{s,d,c,z}{routine}_ffi`` for ``dtype``, registered with XLA."""
    register_targets()
    try:
        prefix = _PREFIX[np.dtype(dtype)]
    except KeyError:
        raise NotImplementedError(f"Unsupported dtype {np.dtype(dtype)}") from None
    return f"lapack_{prefix}{routine}_ffi"


def u8(char: str | int) -> ir.Attribute:
    value = ord(char) if isinstance(char, str) else char
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), value)


def custom_call(
    target: str,
    operands,
    operand_avals,
    result_avals,
    *,
    num_batch_dims: int,
    config: dict | None = None,
    aliases: dict[int, int] | None = None,
    matrix_operands=None,
    matrix_results=None,
):
    """``stablehlo.custom_call @target`` with typed-FFI attributes (``mhlo.backend_config``).

    ``aliases`` maps result index to the operand index whose buffer it reuses;
    ``matrix_operands``/``matrix_results`` say which are matrices (column-major) rather
    than vectors (default: those of rank ``num_batch_dims + 2``)."""

    def is_matrix(avals, flags, i):
        return flags[i] if flags is not None else avals[i].ndim == num_batch_dims + 2

    operand_layouts = [
        layout(a.ndim, is_matrix(operand_avals, matrix_operands, i))
        for i, a in enumerate(operand_avals)
    ]
    result_layouts = [
        layout(a.ndim, is_matrix(result_avals, matrix_results, i))
        for i, a in enumerate(result_avals)
    ]
    return ffi_custom_call(
        target,
        operands,
        result_avals,
        operand_layouts=operand_layouts,
        result_layouts=result_layouts,
        config=config or {},
        aliases=aliases,
        num_batch_dims=num_batch_dims,
    )


# --- small StableHLO helpers shared by the lowerings ---------------------------------


def constant(value, dtype, shape=()):
    scalar = mb.constant(np.asarray(value, dtype))
    if not shape:
        return scalar
    return mb.broadcast_in_dim(scalar, ShapedArray(tuple(shape), np.dtype(dtype)), [])


def info_ok(info, batch_shape, *, equal: bool = True):
    """A ``bool[batch]`` that is true where LAPACK's ``info`` is 0 (or >= 0)."""
    zero = constant(0, np.int32, batch_shape)
    direction = hlo.ComparisonDirectionAttr.get("EQ" if equal else "GE")
    kind = hlo.ComparisonTypeAttr.get("SIGNED")
    return hlo.compare(info, zero, direction, compare_type=kind)


def nan_where_failed(ok, value, aval: ShapedArray, num_batch: int):
    """``value`` with the matrices whose ``ok`` is false replaced by NaN."""
    pred = mb.broadcast_in_dim(ok, aval.update(dtype=np.dtype(bool)), list(range(num_batch)))
    nan = constant(_nan(aval.dtype), aval.dtype, aval.shape)
    return hlo.select(pred, value, nan)


def _nan(dtype):
    dtype = np.dtype(dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        return complex(np.nan, np.nan)
    return np.nan


def triangle_mask(shape, *, lower: bool, offset: int = 0):
    """A ``bool[shape]`` that is true on the lower (``row + offset >= col``) or upper
    (``row + offset <= col``) triangle of each matrix."""
    i32 = ShapedArray(tuple(shape), np.dtype(np.int32))
    nd = len(shape)
    rows = hlo.iota(mb.ir_type(i32), nd - 2)
    cols = hlo.iota(mb.ir_type(i32), nd - 1)
    if offset:
        rows = hlo.add(rows, constant(offset, np.int32, shape))
    direction = hlo.ComparisonDirectionAttr.get("GE" if lower else "LE")
    return hlo.compare(rows, cols, direction, compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))


def keep_triangle(value, aval: ShapedArray, *, lower: bool, offset: int = 0):
    """``value`` with the other triangle set to zero."""
    mask = triangle_mask(aval.shape, lower=lower, offset=offset)
    return hlo.select(mask, value, constant(0, aval.dtype, aval.shape))
