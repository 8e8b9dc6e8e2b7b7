"""Elementwise primitives: arithmetic, transcendental functions, comparisons, select_n.

Each primitive is defined with all its rules: abstract evaluation (JAX's dtype and shape
checks and messages), lowering to StableHLO, and eager execution through dispatch.

As in JAX, lax's binary operations do not promote dtypes (``lax.add(f32, i32)`` is a
``TypeError``; weak types are ignored, so ``lax.add(x, 2)`` needs ``x`` of int32) and do
not broadcast ranks: operands have equal ranks, or are scalars, and dimensions of size 1
stretch.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters.mlir import hlo
from lamina.ir import dtypes
from lamina.ir.core import ShapedArray
from lamina.lax._common import (
    ANY,
    INEXACT,
    INT,
    NUMERIC,
    check_dtype,
    check_same_dtypes,
    standard_primitive,
)

__all__ = [
    "add",
    "add_p",
    "cos",
    "cos_p",
    "div",
    "div_p",
    "eq",
    "eq_p",
    "exp",
    "exp_p",
    "ge",
    "ge_p",
    "gt",
    "gt_p",
    "le",
    "le_p",
    "log",
    "log_p",
    "lt",
    "lt_p",
    "max",
    "max_p",
    "min",
    "min_p",
    "mul",
    "mul_p",
    "ne",
    "ne_p",
    "neg",
    "neg_p",
    "select_n",
    "select_n_p",
    "sin",
    "sin_p",
    "sqrt",
    "sqrt_p",
    "sub",
    "sub_p",
    "tanh",
    "tanh_p",
]


def broadcasting_shape(name: str, shapes) -> tuple:
    """The result shape of an elementwise operation: non-scalar operands have one rank,
    and each dimension agrees or is 1."""
    shapes = [tuple(s) for s in shapes if s]
    if not shapes:
        return ()
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got {ranks}")
    out = []
    for sizes in zip(*shapes, strict=True):
        big = {d for d in sizes if d != 1}
        if len(big) > 1:
            shown = ", ".join(str(s) for s in shapes)
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {shown}.")
        out.append(big.pop() if big else 1)
    return tuple(out)


# ------------------------------------------------------------------ unary


def _unary(name: str, accepted, hlo_op: str):
    """``hlo_op`` names the ``stablehlo`` builder (looked up when lowering, so the MLIR
    bindings load on first use)."""

    def abstract_eval(x):
        check_dtype(name, x.dtype, accepted)
        return x

    def lowering(ctx, x):
        return [getattr(hlo, hlo_op)(x)]

    return standard_primitive(name, abstract_eval, lowering)


neg_p = _unary("neg", NUMERIC, "negate")
sin_p = _unary("sin", INEXACT, "sine")
cos_p = _unary("cos", INEXACT, "cosine")
exp_p = _unary("exp", INEXACT, "exponential")
log_p = _unary("log", INEXACT, "log")
tanh_p = _unary("tanh", INEXACT, "tanh")
sqrt_p = _unary("sqrt", INEXACT, "sqrt")


def neg(x):
    """Elementwise negation: -x."""
    return neg_p.bind(x)


def sin(x):
    """Elementwise sine."""
    return sin_p.bind(x)


def cos(x):
    """Elementwise cosine."""
    return cos_p.bind(x)


def exp(x):
    """Elementwise exponential: e**x."""
    return exp_p.bind(x)


def log(x):
    """Elementwise natural logarithm."""
    return log_p.bind(x)


def tanh(x):
    """Elementwise hyperbolic tangent."""
    return tanh_p.bind(x)


def sqrt(x):
    """Elementwise square root."""
    return sqrt_p.bind(x)


# ------------------------------------------------------------------ binary


def _binary(name: str, accepted, hlo_op: str, tip: str | None):
    def abstract_eval(x, y):
        shape = broadcasting_shape(name, (x.shape, y.shape))
        for i, a in enumerate((x, y)):
            check_dtype(name, a.dtype, accepted, position=i if accepted is not ANY else None)
        check_same_dtypes(name, (x, y), tip)
        return ShapedArray(shape, x.dtype, weak_type=x.weak_type and y.weak_type)

    def lowering(ctx, x, y):
        x, y = ctx.broadcast_to([x, y])
        return [getattr(hlo, hlo_op)(x, y)]

    return standard_primitive(name, abstract_eval, lowering)


add_p = _binary("add", NUMERIC, "add", "add")
sub_p = _binary("sub", NUMERIC, "subtract", "subtract")
mul_p = _binary("mul", NUMERIC, "multiply", "multiply")
div_p = _binary("div", NUMERIC, "divide", "divide")
max_p = _binary("max", ANY, "maximum", "maximum")
min_p = _binary("min", ANY, "minimum", "minimum")


def add(x, y):
    """Elementwise addition: x + y."""
    return add_p.bind(x, y)


def sub(x, y):
    """Elementwise subtraction: x - y."""
    return sub_p.bind(x, y)


def mul(x, y):
    """Elementwise multiplication: x * y."""
    return mul_p.bind(x, y)


def div(x, y):
    """Elementwise division: x / y (integer division rounds towards zero)."""
    return div_p.bind(x, y)


def max(x, y):
    """Elementwise maximum (NaN propagates)."""
    return max_p.bind(x, y)


def min(x, y):
    """Elementwise minimum (NaN propagates)."""
    return min_p.bind(x, y)


# ------------------------------------------------------------------ comparisons


def _compare_type(dtype) -> str:
    if dtypes.issubdtype(dtype, np.inexact):
        return "FLOAT"
    if dtypes.issubdtype(dtype, np.signedinteger):
        return "SIGNED"
    return "UNSIGNED"  # unsigned integers and bool


def compare(ctx, x, y, direction: str):
    """``stablehlo.compare`` of two operands of one dtype, broadcast to the result."""
    x, y = ctx.broadcast_to([x, y])
    kind = _compare_type(ctx.avals_in[0].dtype)
    return hlo.compare(
        x,
        y,
        hlo.ComparisonDirectionAttr.get(direction),
        compare_type=hlo.ComparisonTypeAttr.get(kind),
    )


def _comparison(name: str, direction: str, tip: str | None):
    def abstract_eval(x, y):
        shape = broadcasting_shape(name, (x.shape, y.shape))
        check_same_dtypes(name, (x, y), tip)
        return ShapedArray(shape, dtypes.bool_)

    def lowering(ctx, x, y):
        return [compare(ctx, x, y, direction)]

    return standard_primitive(name, abstract_eval, lowering)


eq_p = _comparison("eq", "EQ", "equal")
ne_p = _comparison("ne", "NE", "not_equal")
lt_p = _comparison("lt", "LT", None)
le_p = _comparison("le", "LE", None)
gt_p = _comparison("gt", "GT", None)
ge_p = _comparison("ge", "GE", None)


def eq(x, y):
    """Elementwise x == y."""
    return eq_p.bind(x, y)


def ne(x, y):
    """Elementwise x != y."""
    return ne_p.bind(x, y)


def lt(x, y):
    """Elementwise x < y."""
    return lt_p.bind(x, y)


def le(x, y):
    """Elementwise x <= y."""
    return le_p.bind(x, y)


def gt(x, y):
    """Elementwise x > y."""
    return gt_p.bind(x, y)


def ge(x, y):
    """Elementwise x >= y."""
    return ge_p.bind(x, y)


# ------------------------------------------------------------------ select_n


def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise TypeError("select must have at least one case")
    shapes = {c.shape for c in cases}
    if len(shapes) > 1:
        raise TypeError(f"select cases must have the same shapes, got {[c.shape for c in cases]}.")
    case_shape = cases[0].shape
    if which.shape and which.shape != case_shape:
        raise TypeError(
            "select `which` must be scalar or have the same shape as cases, got `which` "
            f"shape {which.shape} but case shape {case_shape}."
        )
    if which.dtype != dtypes.bool_ and not dtypes.issubdtype(which.dtype, INT[1]):
        raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype.name}.")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    check_same_dtypes("select", cases, "where")
    return ShapedArray(case_shape, cases[0].dtype, weak_type=all(c.weak_type for c in cases))


def _select_n_lowering(ctx, which, *cases):
    which_aval = ctx.avals_in[0]
    if len(cases) == 1:
        return [cases[0]]
    if which_aval.dtype == dtypes.bool_:
        return [hlo.select(which, cases[1], cases[0])]
    scalar = which_aval.update(shape=(), weak_type=False)
    compare_type = hlo.ComparisonTypeAttr.get(_compare_type(which_aval.dtype))

    def tree(offset, cases):
        # Integer `which`: a balanced tree of selects, split by `which < offset + mid`.
        if len(cases) == 1:
            return cases[0]
        mid = len(cases) // 2
        bound = ctx.constant(offset + mid, scalar)
        if which_aval.shape:
            bound = ctx.broadcast_in_dim(bound, which_aval, ())
        direction = hlo.ComparisonDirectionAttr.get("LT")
        pred = hlo.compare(which, bound, direction, compare_type=compare_type)
        return hlo.select(pred, tree(offset, cases[:mid]), tree(offset + mid, cases[mid:]))

    return [tree(0, list(cases))]


select_n_p = standard_primitive("select_n", _select_n_abstract_eval, _select_n_lowering)


def select_n(which, *cases):
    """``cases[which]`` elementwise: ``which`` is a boolean (two cases at most) or an
    integer array, scalar or of the cases' shape."""
    if not cases:
        raise ValueError("select_n() must have at least one case")
    return select_n_p.bind(which, *cases)
