"""``estimate_cost``: a ``CostEstimate`` counted from a function's Jaxpr."""

from __future__ import annotations

import math

import numpy as np

from lamina.interpreters import make_jaxpr
from lamina.pallas.core.specs import CostEstimate

__all__ = ["estimate_cost"]

_TRANSCENDENTAL = {"exp", "exp2", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh",
                   "logistic", "sqrt", "rsqrt", "cbrt", "pow", "erf", "atan2", "asin", "acos",
                   "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf_inv", "lgamma",
                   "digamma"}  # fmt: skip


def _size(aval) -> int:
    return math.prod(getattr(aval, "shape", ()))


def _nbytes(aval) -> int:
    return _size(aval) * np.dtype(aval.dtype).itemsize


def _count(jaxpr) -> tuple[int, int]:
    flops = transcendentals = 0
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name == "dot_general":
            (lc, _), _ = eqn.params["dimension_numbers"]
            k = math.prod(eqn.invars[0].aval.shape[d] for d in lc)
            flops += 2 * k * _size(eqn.outvars[0].aval)
        elif name in _TRANSCENDENTAL:
            transcendentals += _size(eqn.outvars[0].aval)
        elif len(eqn.outvars) == 1 and hasattr(eqn.outvars[0].aval, "shape"):
            flops += _size(eqn.outvars[0].aval)
    return flops, transcendentals


def estimate_cost(fun, *args, **kwargs) -> CostEstimate:
    """What ``fun(*args, **kwargs)`` costs: its flops, transcendental operations and the
    bytes of its inputs and outputs."""
    closed = make_jaxpr(fun)(*args, **kwargs)
    flops, transcendentals = _count(closed.jaxpr)
    accessed = sum(_nbytes(a) for a in closed.in_avals) + sum(_nbytes(a) for a in closed.out_avals)
    return CostEstimate(flops=flops, transcendentals=transcendentals, bytes_accessed=accessed)
