"""Static statistics of a Jaxpr: equations per primitive, nesting depth, and estimated
FLOPs and bytes moved by its matrix products, convolutions and elementwise operations.

Each equation counts once where it appears (a loop body counts once, whatever its trip
count). FLOPs: ``2 * M * N * K`` for ``dot_general`` (output size times contracted
size), ``2 * output size * kernel size / output features`` for
``conv_general_dilated``, and one per output element for elementwise operations.
Bytes: the sizes of the operands and results of those equations.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from lamina.ir.core.avals import ShapedArray
from lamina.ir.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn
from lamina.ir.tools.walk import walk_eqns

__all__ = ["ELEMENTWISE", "JaxprStats", "jaxpr_stats"]

# Primitives that compute one value per output element.
ELEMENTWISE = frozenset(
    [
        "abs",
        "acos",
        "acosh",
        "add",
        "and",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "cbrt",
        "ceil",
        "clamp",
        "complex",
        "conj",
        "cos",
        "cosh",
        "digamma",
        "div",
        "erf",
        "erf_inv",
        "erfc",
        "exp",
        "exp2",
        "expm1",
        "floor",
        "igamma",
        "igammac",
        "imag",
        "integer_pow",
        "is_finite",
        "lgamma",
        "log",
        "log1p",
        "logistic",
        "max",
        "min",
        "mul",
        "ne",
        "eq",
        "ge",
        "gt",
        "le",
        "lt",
        "neg",
        "nextafter",
        "not",
        "or",
        "polygamma",
        "population_count",
        "pow",
        "real",
        "reduce_precision",
        "rem",
        "round",
        "rsqrt",
        "select_n",
        "shift_left",
        "shift_right_arithmetic",
        "shift_right_logical",
        "sign",
        "sin",
        "sinh",
        "sqrt",
        "square",
        "sub",
        "tan",
        "tanh",
        "xor",
        "zeta",
    ]
)


@dataclass
class JaxprStats:
    eqns: int = 0
    per_primitive: Counter = field(default_factory=Counter)
    depth: int = 1  # 1: no nested Jaxprs
    flops: int = 0
    bytes: int = 0

    def __str__(self):
        lines = [
            f"equations: {self.eqns}",
            f"nesting depth: {self.depth}",
            f"estimated flops: {self.flops}",
            f"estimated bytes: {self.bytes}",
            "equations per primitive:",
        ]
        width = max((len(n) for n in self.per_primitive), default=0)
        for name, count in sorted(self.per_primitive.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {name:<{width}}  {count}")
        return "\n".join(lines)


def jaxpr_stats(jaxpr: Jaxpr | ClosedJaxpr) -> JaxprStats:
    stats = JaxprStats()
    for eqn, depth in walk_eqns(jaxpr):
        stats.eqns += 1
        stats.per_primitive[eqn.primitive.name] += 1
        stats.depth = max(stats.depth, depth + (1 if _holds_jaxpr(eqn) else 0))
        flops = eqn_flops(eqn)
        if flops is not None:
            stats.flops += flops
            stats.bytes += sum(_nbytes(x.aval) for x in (*eqn.invars, *eqn.outvars))
    return stats


def _holds_jaxpr(eqn: JaxprEqn) -> bool:
    return any(
        isinstance(v, (Jaxpr, ClosedJaxpr))
        or (isinstance(v, (tuple, list)) and any(isinstance(x, (Jaxpr, ClosedJaxpr)) for x in v))
        for v in eqn.params.values()
    )


def eqn_flops(eqn: JaxprEqn) -> int | None:
    """The estimated FLOPs of ``eqn``, or None if it is none of the ops counted."""
    name = eqn.primitive.name
    if not eqn.outvars or not all(_shape(v.aval) is not None for v in eqn.outvars):
        return None
    out_size = math.prod(_shape(eqn.outvars[0].aval))
    if name == "dot_general":
        lhs = _shape(eqn.invars[0].aval)
        contracting = eqn.params["dimension_numbers"][0][0]
        return 2 * out_size * math.prod(lhs[d] for d in contracting)
    if name == "conv_general_dilated":
        rhs = _shape(eqn.invars[1].aval)
        spec = re.search(r"rhs_spec=\((\d+)", str(eqn.params.get("dimension_numbers")))
        out_features = rhs[int(spec.group(1)) if spec else 0]
        return 2 * out_size * math.prod(rhs) // max(out_features, 1)
    if name in ELEMENTWISE:
        return out_size
    return None


def _shape(aval):
    return aval.shape if isinstance(aval, ShapedArray) else None


def _nbytes(aval) -> int:
    if not isinstance(aval, ShapedArray) or not isinstance(aval.dtype, np.dtype):
        return 0
    return math.prod(aval.shape) * aval.dtype.itemsize
