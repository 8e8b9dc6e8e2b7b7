"""Calling Python on the host from a compiled program, as jaxlib 0.10.2 does it.

A call is a ``stablehlo.custom_call`` to jaxlib's typed-FFI handler
``xla_ffi_python_cpu_callback`` (``xla_ffi_python_gpu_callback`` on GPUs), whose
``mhlo.backend_config`` holds ``index``: the position of the Python function in the list
of host callbacks handed to ``compile_and_load`` with the module. The handler calls it
with the operands as NumPy arrays and expects a tuple of NumPy arrays back. An ordered
call also takes and returns a token (first operand and result), which the Python
function sees as ``None`` and hands back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from lamina.interpreters.core.mlir_bindings import hlo, ir
from lamina.interpreters.jaxprs import mlir_builders as mb
from lamina.ir import dtypes

__all__ = ["callback_target", "emit_python_callback"]

_GPU_PLATFORMS = ("cuda", "rocm", "gpu")


def callback_target(platform: str, partitioned: bool = False) -> str:
    """The custom-call target of host callbacks on ``platform``."""
    device = "gpu" if platform in _GPU_PLATFORMS else "cpu"
    if platform not in ("cpu", *_GPU_PLATFORMS):
        raise ValueError(f"`EmitPythonCallback` not supported on {platform} backend.")
    return f"xla_ffi{'_partitioned' if partitioned else ''}_python_{device}_callback"


def _checked(callback: Callable, result_avals) -> Callable:
    """``callback`` with its results made NumPy arrays and checked against
    ``result_avals`` (``RuntimeError`` with JAX's messages when they disagree)."""

    def wrapped(*args):
        outs = callback(*args)
        if len(outs) != len(result_avals):
            raise RuntimeError(
                "Mismatched number of outputs from callback. "
                f"Expected: {len(result_avals)}, Actual: {len(outs)}"
            )
        outs = tuple(_canonical(np.asarray(o)) for o in outs)
        for i, (out, aval) in enumerate(zip(outs, result_avals, strict=True)):
            if out.shape != aval.shape:
                raise RuntimeError(
                    f"Incorrect output shape for return value #{i}: "
                    f"Expected: {aval.shape}, Actual: {out.shape}"
                )
            if out.dtype != aval.dtype:
                raise RuntimeError(
                    f"Incorrect output dtype for return value #{i}: "
                    f"Expected: {aval.dtype}, Actual: {out.dtype}"
                )
        return outs

    return wrapped


def _canonical(x: np.ndarray) -> np.ndarray:
    """``x`` in its canonical dtype (64-bit types narrowed unless x64 is on)."""
    dtype = dtypes.canonicalize_dtype(x.dtype)
    return x if x.dtype == dtype else x.astype(dtype)


def _layout(ndim: int) -> ir.Attribute:
    """The row-major layout of a rank-``ndim`` array (``dense<>`` for tokens)."""
    index = ir.IndexType.get()
    values = np.arange(ndim - 1, -1, -1, dtype=np.int64)  # major-to-minor
    return ir.DenseElementsAttr.get(values, type=ir.RankedTensorType.get([ndim], index))


def emit_python_callback(
    ctx,
    callback: Callable,
    token: ir.Value | None,
    operands: Sequence[ir.Value],
    operand_avals: Sequence,
    result_avals: Sequence,
    *,
    has_side_effect: bool,
    partitioned: bool = False,
) -> tuple[list[ir.Value], ir.Value | None]:
    """Emit a call of ``callback`` (NumPy arrays in, a sequence of arrays out) on
    ``operands``; returns its results and, when ``token`` is given, the new token."""
    del operand_avals  # the operands' types say it all
    target = callback_target(ctx.platform, partitioned)
    if partitioned and result_avals:
        raise ValueError("Partitioned callback not supported with return values.")
    host = _checked(callback, result_avals)
    operands = list(operands)
    types = [mb.ir_type(a) for a in result_avals]
    layouts = [_layout(len(a.shape)) for a in result_avals]
    if token is not None:
        plain = host

        def host(tok, *args):
            return (tok, *plain(*args))

        operands = [token, *operands]
        types = [hlo.TokenType.get(), *types]
        layouts = [_layout(0), *layouts]
    index = ctx.module_context.add_host_callback(host)
    i32 = ir.IntegerType.get_signless(32)
    op = hlo.CustomCallOp(
        types,
        operands,
        call_target_name=ir.StringAttr.get(target),
        has_side_effect=ir.BoolAttr.get(has_side_effect),
        backend_config=ir.StringAttr.get(""),
        api_version=ir.IntegerAttr.get(i32, 1),
        called_computations=ir.ArrayAttr.get([]),
        operand_layouts=ir.ArrayAttr.get([_layout(_rank(v)) for v in operands]),
        result_layouts=ir.ArrayAttr.get(layouts),
    )
    where = ctx.module_context.callback_sharding
    if where is not None:
        shardings = [where(_rank_of(t)) for t in types] or [where(0)]
        text = shardings[0] if len(shardings) == 1 else "{" + ", ".join(shardings) + "}"
        op.attributes["mhlo.sharding"] = ir.StringAttr.get(text)
    u64 = ir.IntegerType.get_unsigned(64)
    op.attributes["mhlo.backend_config"] = ir.DictAttr.get(
        {"index": ir.IntegerAttr.get(u64, index)}
    )
    results = list(op.results)
    if token is not None:
        token, *results = results
    return results, token


def _rank(value: ir.Value) -> int:
    """The rank of a tensor value (0 for a token)."""
    return _rank_of(value.type)


def _rank_of(type_: ir.Type) -> int:
    return type_.rank if isinstance(type_, ir.RankedTensorType) else 0
