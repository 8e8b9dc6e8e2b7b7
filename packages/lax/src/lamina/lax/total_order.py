"""``eq_to``, ``le_to`` and ``lt_to``: comparisons in the IEEE total order, where
-NaN < -inf < ... < -0 < +0 < ... < inf < NaN, so floats sort like integers (sort
comparators use them). Integers and bools compare as usual."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, batching
from lamina.interpreters.mlir import hlo
from lamina.ir import dtypes
from lamina.ir.core import ShapedArray
from lamina.lax._common import check_same_dtypes, standard_primitive
from lamina.lax.elementwise import broadcasting_shape

__all__ = ["eq_to_p", "le_to_p", "lt_to_p"]


def _comparison_type(dtype) -> str:
    if dtypes.issubdtype(dtype, np.inexact):
        return "TOTALORDER"
    return "SIGNED" if dtypes.issubdtype(dtype, np.signedinteger) else "UNSIGNED"


def _total_order_comparison(name: str, direction: str):
    def abstract_eval(x, y):
        shape = broadcasting_shape(name, (x.shape, y.shape))
        check_same_dtypes(name, (x, y))
        return ShapedArray(shape, dtypes.bool_)

    def lowering(ctx, x, y):
        x, y = ctx.broadcast_to([x, y])
        kind = _comparison_type(ctx.avals_in[0].dtype)
        return [
            hlo.compare(
                x,
                y,
                hlo.ComparisonDirectionAttr.get(direction),
                compare_type=hlo.ComparisonTypeAttr.get(kind),
            )
        ]

    primitive = standard_primitive(name, abstract_eval, lowering)
    batching.defbroadcasting(primitive)
    ad.zero_jvp(primitive)
    return primitive


eq_to_p = _total_order_comparison("eq_to", "EQ")
le_to_p = _total_order_comparison("le_to", "LE")
lt_to_p = _total_order_comparison("lt_to", "LT")
