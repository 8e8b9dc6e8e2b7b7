"""The custom call that CPU (LAPACK) and GPU (cuSOLVER, ...) linear algebra lower to.

Both take their operands and results in given layouts (column-major matrices inside
each batch, or row-major), alias results to operands whose buffers they reuse, carry
their parameters as ``mhlo.backend_config`` (a dictionary, typed FFI) and the number
of leading batch dimensions as the frontend attribute ``num_batch_dims``.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import mlir_builders as mb
from lamina.interpreters.mlir import hlo, ir


def layout(ndim: int, column_major: bool) -> ir.Attribute:
    """Minor-to-major order: column-major matrices (last two axes) with the batch axes
    major, or row-major."""
    if column_major and ndim >= 2:
        order = [ndim - 2, ndim - 1, *range(ndim - 3, -1, -1)]
    else:
        order = list(range(ndim - 1, -1, -1))
    return ir.DenseElementsAttr.get(
        np.asarray(order, np.int64), type=ir.IndexType.get(), shape=(len(order),)
    )


def ffi_custom_call(
    target: str,
    operands,
    result_avals,
    *,
    operand_layouts,
    result_layouts,
    config: dict[str, ir.Attribute],
    aliases: dict[int, int] | None = None,
    num_batch_dims: int | None = None,
) -> list[ir.Value]:
    """``stablehlo.custom_call @target`` (API version 1, typed FFI); ``aliases`` maps a
    result index to the operand index whose buffer it reuses."""
    alias_attrs = [
        hlo.OutputOperandAlias.get([out] if len(result_avals) > 1 else [], operand, [])
        for out, operand in (aliases or {}).items()
    ]
    i32 = ir.IntegerType.get_signless(32)
    op = hlo.CustomCallOp(
        [mb.ir_type(a) for a in result_avals],
        list(operands),
        call_target_name=ir.StringAttr.get(target),
        has_side_effect=ir.BoolAttr.get(False),
        backend_config=ir.StringAttr.get(""),
        api_version=ir.IntegerAttr.get(i32, 1),
        called_computations=ir.ArrayAttr.get([]),
        operand_layouts=ir.ArrayAttr.get(list(operand_layouts)),
        result_layouts=ir.ArrayAttr.get(list(result_layouts)),
        output_operand_aliases=ir.ArrayAttr.get(alias_attrs),
    )
    op.attributes["mhlo.backend_config"] = ir.DictAttr.get(config)
    if num_batch_dims is not None:
        op.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(
            {"num_batch_dims": ir.StringAttr.get(str(num_batch_dims))}
        )
    return list(op.results)
