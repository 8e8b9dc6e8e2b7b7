"""Elementwise primitives: arithmetic, transcendental functions, comparisons, select_n.

Each primitive is defined with all its rules: abstract evaluation (JAX's dtype and shape
checks and messages), lowering to StableHLO, and eager execution through dispatch.

As in JAX, lax's binary operations do not promote dtypes (``lax.add(f32, i32)`` is a
``TypeError``; weak types are ignored, so ``lax.add(x, 2)`` needs ``x`` of int32) and do
not broadcast ranks: operands have equal ranks, or are scalars, and dimensions of size 1
stretch.
"""

from __future__ import annotations

import enum

import numpy as np

from lamina.interpreters import ad, batching, reverse
from lamina.interpreters.mlir import chlo, hlo
from lamina.ir import ShapedArray, abstract_eval_rules, dtypes
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
    "AccuracyMode",
    "Tolerance",
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
batching.defvectorized(neg_p)  # vmap: each element alone, the batch dim stays


def neg(x):
    """Elementwise negation: -x."""
    return neg_p.bind(x)


class AccuracyMode(enum.Enum):
    """Accuracy asked of a transcendental function's implementation."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """Error bounds asked of a transcendental function's implementation: absolute,
    relative and in units of the last place."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = float(atol), float(rtol), int(ulps)

    def _key(self):
        return (self.atol, self.rtol, self.ulps)

    def __eq__(self, other):
        return isinstance(other, Tolerance) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


def check_accuracy(accuracy):
    """``accuracy`` as given, if it is one JAX accepts."""
    if accuracy is None or isinstance(accuracy, (Tolerance, AccuracyMode)):
        return accuracy
    raise NotImplementedError(f"Accuracy {accuracy} not supported")


def _accuracy_attr(accuracy):
    from lamina.interpreters.mlir import ir

    if isinstance(accuracy, AccuracyMode):
        text = f"mode = #stablehlo.result_accuracy_mode<{accuracy.name}>"
    else:
        text = (
            f"atol = {accuracy.atol:e}, rtol = {accuracy.rtol:e}, ulps = {accuracy.ulps}, "
            "mode = #stablehlo.result_accuracy_mode<TOLERANCE>"
        )
    return ir.Attribute.parse(f"#stablehlo.result_accuracy<{text}>")


def with_accuracy(value, accuracy):
    """The op making ``value`` annotated with ``result_accuracy`` (as JAX lowers it)."""
    if accuracy is not None:
        value.owner.attributes["result_accuracy"] = _accuracy_attr(accuracy)
    return value


def def_accuracy_params(prim) -> None:
    """JAX prints ``accuracy`` only when it is set; parsed equations get it back."""
    prim.def_pp_params(
        lambda params: {k: v for k, v in params.items() if not (k == "accuracy" and v is None)},
        lambda params, in_avals, out_avals: {"accuracy": None, **params},
    )


def accuracy_unary(name: str, accepted, op: str, dialect: str = "hlo"):
    """A unary primitive with JAX's ``accuracy`` param (None unless asked for); ``op``
    names the builder in the ``hlo`` or ``chlo`` module, looked up when lowering."""

    def abstract_eval(x, accuracy=None):
        check_dtype(name, x.dtype, accepted)
        return x

    def lowering(ctx, x, accuracy=None):
        module = hlo if dialect == "hlo" else chlo
        return [with_accuracy(getattr(module, op)(x), accuracy)]

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defvectorized(prim)
    def_accuracy_params(prim)
    return prim


sin_p = accuracy_unary("sin", INEXACT, "sine")
cos_p = accuracy_unary("cos", INEXACT, "cosine")
exp_p = accuracy_unary("exp", INEXACT, "exponential")
log_p = accuracy_unary("log", INEXACT, "log")
tanh_p = accuracy_unary("tanh", INEXACT, "tanh")
sqrt_p = accuracy_unary("sqrt", INEXACT, "sqrt")


def sin(x, *, accuracy=None):
    """Elementwise sine."""
    return sin_p.bind(x, accuracy=check_accuracy(accuracy))


def cos(x, *, accuracy=None):
    """Elementwise cosine."""
    return cos_p.bind(x, accuracy=check_accuracy(accuracy))


def exp(x, *, accuracy=None):
    """Elementwise exponential: e**x."""
    return exp_p.bind(x, accuracy=check_accuracy(accuracy))


def log(x, *, accuracy=None):
    """Elementwise natural logarithm."""
    return log_p.bind(x, accuracy=check_accuracy(accuracy))


def tanh(x, *, accuracy=None):
    """Elementwise hyperbolic tangent."""
    return tanh_p.bind(x, accuracy=check_accuracy(accuracy))


def sqrt(x, *, accuracy=None):
    """Elementwise square root."""
    return sqrt_p.bind(x, accuracy=check_accuracy(accuracy))


def _const(value, like):
    """``value`` as a scalar of ``like``'s dtype (a literal when traced)."""
    return np.array(value, dtypes.dtype(like))


# JVPs: ``t`` is the operand's tangent, ``ans`` the primal result.
ad.deflinear(neg_p)
ad.defjvp(sin_p, lambda t, ans, x, accuracy=None: mul(t, cos(x, accuracy=accuracy)))
ad.defjvp(cos_p, lambda t, ans, x, accuracy=None: neg(mul(t, sin(x, accuracy=accuracy))))
ad.defjvp(exp_p, lambda t, ans, x, accuracy=None: mul(t, ans))
ad.defjvp(log_p, lambda t, ans, x, accuracy=None: div(t, x))
ad.defjvp(tanh_p, lambda t, ans, x, accuracy=None: mul(t, sub(_const(1, ans), mul(ans, ans))))
ad.defjvp(sqrt_p, lambda t, ans, x, accuracy=None: mul(t, div(_const(0.5, ans), ans)))


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
# Every array dtype but extended ones (PRNG keys), in JAX's order.
_ORDERABLE = (
    ("integer", np.integer),
    ("bool", np.bool_),
    ("floating", np.floating),
    ("complexfloating", np.complexfloating),
)
max_p = _binary("max", _ORDERABLE, "maximum", "maximum")
min_p = _binary("min", _ORDERABLE, "minimum", "minimum")


def _complex_extremum(direction: str):
    """max/min of complex numbers in JAX's lexicographic order: real parts first, then
    imaginary parts (XLA's own complex minimum orders differently)."""

    def lowering(ctx, x, y):
        x, y = ctx.broadcast_to([x, y])
        if not dtypes.issubdtype(ctx.avals_in[0].dtype, np.complexfloating):
            return [(hlo.maximum if direction == "GT" else hlo.minimum)(x, y)]
        kind = hlo.ComparisonTypeAttr.get("FLOAT")

        def cmp(a, b, d):
            return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(d), compare_type=kind)

        rx, ry, ix, iy = hlo.real(x), hlo.real(y), hlo.imag(x), hlo.imag(y)
        pick_x = hlo.or_(
            cmp(rx, ry, direction), hlo.and_(cmp(rx, ry, "EQ"), cmp(ix, iy, direction))
        )
        return [hlo.select(pick_x, x, y)]

    return lowering


max_p.def_lowering(_complex_extremum("GT"))
min_p.def_lowering(_complex_extremum("LT"))
for _p in (add_p, sub_p, mul_p, div_p, max_p, min_p):
    batching.defbroadcasting(_p)  # vmap: batch dims move only when operands disagree


def add(x, y):
    """Elementwise addition: x + y."""
    return add_p.bind(x, y)


def sub(x, y):
    """Elementwise subtraction: x - y."""
    return sub_p.bind(x, y)


def mul(x, y, *, out_dtype=None):
    """Elementwise multiplication: x * y. With ``out_dtype``, both operands (which may
    then differ in dtype) are converted to it before multiplying."""
    if out_dtype is None:
        return mul_p.bind(x, y)
    np.dtype(out_dtype)  # JAX's TypeError for what is not a dtype
    return mul_p.bind(x, y, out_dtype=out_dtype)


def _mul_abstract_eval(x, y, out_dtype=None):
    if out_dtype is None:
        return _plain_mul_abstract_eval(x, y)
    shape = broadcasting_shape("mul", (x.shape, y.shape))
    return ShapedArray(shape, dtypes.dtype(out_dtype))


def _mul_lowering(ctx, x, y, out_dtype=None):
    if out_dtype is not None:
        dtype = ctx.avals_out[0].dtype
        avals = [a.update(dtype=dtype) for a in ctx.avals_in]
        x, y = (ctx.convert(v, a, b) for v, a, b in zip((x, y), ctx.avals_in, avals, strict=True))
        ctx = ctx.replace(avals_in=avals)
    x, y = ctx.broadcast_to([x, y])
    return [hlo.multiply(x, y)]


_plain_mul_abstract_eval = abstract_eval_rules[mul_p]
mul_p.def_abstract_eval(_mul_abstract_eval)
mul_p.def_lowering(_mul_lowering)
mul_p.def_pp_params(
    lambda params: {k: v for k, v in params.items() if not (k == "out_dtype" and v is None)},
    lambda params, in_avals, out_avals: params,
)


def div(x, y):
    """Elementwise division: x / y (integer division rounds towards zero)."""
    return div_p.bind(x, y)


def max(x, y):
    """Elementwise maximum (NaN propagates)."""
    return max_p.bind(x, y)


def min(x, y):
    """Elementwise minimum (NaN propagates)."""
    return min_p.bind(x, y)


def _to_result_shape(t, ans):
    """A tangent stretched to the result's shape (lax broadcasts scalars and size-1 axes)."""
    from lamina.lax.shapes import broadcast_in_dim

    shape = ans.aval.shape if hasattr(ans, "aval") else np.shape(ans)
    t_shape = t.aval.shape if hasattr(t, "aval") else np.shape(t)
    if t_shape == shape:
        return t
    return broadcast_in_dim(t, shape, tuple(range(len(t_shape))))


def _choice_weight(first, tie, ans):
    """1 where ``first`` holds, 1/2 at ties, else 0: how much of an operand's tangent
    ``max``/``min`` pass on (JAX's convention: ties split the tangents evenly)."""
    from lamina.lax.conversion import convert_element_type

    dtype = dtypes.dtype(ans)
    half_tie = mul(convert_element_type(tie, dtype), _const(0.5, ans))
    return add(convert_element_type(first, dtype), half_tie)


ad.defjvp(add_p, lambda t, ans, x, y: _to_result_shape(t, ans),
          lambda t, ans, x, y: _to_result_shape(t, ans))  # fmt: skip
ad.defjvp(sub_p, lambda t, ans, x, y: _to_result_shape(t, ans),
          lambda t, ans, x, y: _to_result_shape(neg(t), ans))  # fmt: skip
ad.defjvp(mul_p, lambda t, ans, x, y, out_dtype=None: mul(t, y, out_dtype=out_dtype),
          lambda t, ans, x, y, out_dtype=None: mul(x, t, out_dtype=out_dtype))  # fmt: skip
ad.defjvp(div_p, lambda t, ans, x, y: div(t, y), lambda t, ans, x, y: _div_jvp_y(t, x, y))


def _div_jvp_y(t, x, y):
    """d(x/y)/dy as -t·x·y⁻², JAX's arrangement (so gradients agree to the last bit)."""
    from lamina.lax.unary import integer_pow  # unary builds on this module

    return mul(mul(neg(t), x), integer_pow(y, -2))


ad.defjvp(max_p, lambda t, ans, x, y: mul(t, _choice_weight(gt(x, y), eq(x, y), ans)),
          lambda t, ans, x, y: mul(t, _choice_weight(lt(x, y), eq(x, y), ans)))  # fmt: skip
ad.defjvp(min_p, lambda t, ans, x, y: mul(t, _choice_weight(lt(x, y), eq(x, y), ans)),
          lambda t, ans, x, y: mul(t, _choice_weight(gt(x, y), eq(x, y), ans)))  # fmt: skip


# ------------------------------------------------------------------ comparisons


def _compare_type(dtype, total_order: bool = False) -> str:
    if dtypes.issubdtype(dtype, np.inexact):
        return "TOTALORDER" if total_order else "FLOAT"
    if dtypes.issubdtype(dtype, np.signedinteger):
        return "SIGNED"
    return "UNSIGNED"  # unsigned integers and bool


def compare(ctx, x, y, direction: str, total_order: bool = False):
    """``stablehlo.compare`` of two operands of one dtype, broadcast to the result;
    floats in IEEE total order (-NaN < -inf < ... < -0 < +0 < ... < NaN) if asked."""
    x, y = ctx.broadcast_to([x, y])
    kind = _compare_type(ctx.avals_in[0].dtype, total_order)
    return hlo.compare(
        x,
        y,
        hlo.ComparisonDirectionAttr.get(direction),
        compare_type=hlo.ComparisonTypeAttr.get(kind),
    )


# What JAX's error names as ordered (lamina's comparisons also take complex operands,
# which its sorting and argmax rely on).
_ORDERED = (("integer", np.integer), ("floating", np.floating), ("bool", np.bool_))


def _comparison(name: str, direction: str, tip: str | None, total_order: bool = False):
    def abstract_eval(x, y):
        if name not in ("eq", "ne"):  # only equality compares PRNG keys
            for i, a in enumerate((x, y)):
                if isinstance(a.dtype, dtypes.ExtendedDType):
                    check_dtype(name, a.dtype, _ORDERED, i)
        shape = broadcasting_shape(name, (x.shape, y.shape))
        check_same_dtypes(name, (x, y), tip)
        return ShapedArray(shape, dtypes.bool_, weak_type=x.weak_type and y.weak_type)

    def lowering(ctx, x, y):
        return [compare(ctx, x, y, direction, total_order)]

    return standard_primitive(name, abstract_eval, lowering)


eq_p = _comparison("eq", "EQ", "equal")
ne_p = _comparison("ne", "NE", "not_equal")
lt_p = _comparison("lt", "LT", None)
le_p = _comparison("le", "LE", None)
gt_p = _comparison("gt", "GT", None)
ge_p = _comparison("ge", "GE", None)
for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    batching.defbroadcasting(_p)


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


for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    ad.zero_jvp(_p)  # boolean results: float0 tangents


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


def _select_n_batching(axis_data, vals, dims):
    """select_n does not stretch size-1 axes: cases share one shape, and ``which`` is
    a scalar or has it too. Nothing moves when the operands already agree."""
    from lamina.lax.shapes import broadcast_in_dim

    which, cases = vals[0], vals[1:]
    which_dim, case_dims = dims[0], dims[1:]
    ndim = [len(batching.shape_of(v)) for v in vals]
    first = next(d for d in dims if d is not None)
    cases_agree = all(d == first for d in case_dims) and len(set(ndim[1:])) == 1
    which_fits = (which_dim is None and ndim[0] == 0) or (which_dim == first and ndim[0] == ndim[1])
    if cases_agree and which_fits:
        return select_n_p.bind(which, *cases), first
    size = axis_data.size
    cases = [batching.bdim_at_front(c, d, size) for c, d in zip(cases, case_dims, strict=True)]
    shape = batching.shape_of(cases[0])
    if not (which_dim is None and ndim[0] == 0):
        which = batching.bdim_at_front(which, which_dim, axis_data.size)
        if len(batching.shape_of(which)) < len(shape):  # a scalar per example
            which = broadcast_in_dim(which, shape, (0,))
    return select_n_p.bind(which, *cases), 0


select_n_p.def_batching(_select_n_batching)


def _select_n_jvp(primals, tangents):
    """The tangent picks among the cases' tangents as the primal picks among cases;
    ``which`` is not differentiated."""
    ans = select_n_p.bind(*primals)
    case_tangents = tangents[1:]
    if all(ad.is_zero(t) for t in case_tangents):
        return ans, ad.Zero(ad.tangent_aval(ans.aval))
    return ans, select_n_p.bind(primals[0], *map(ad.instantiate_zeros, case_tangents))


select_n_p.def_jvp(_select_n_jvp)


def select_n(which, *cases):
    """``cases[which]`` elementwise: ``which`` is a boolean (two cases at most) or an
    integer array, scalar or of the cases' shape."""
    if not cases:
        raise ValueError("select_n() must have at least one case")
    return select_n_p.bind(which, *cases)


# ------------------------------------------------------------------ transposes (reverse mode)


def _unbroadcast(ct, aval):
    """The cotangent ``ct`` of a result, summed down to an operand of type ``aval``
    (lax stretches scalars and size-1 axes)."""
    from lamina.lax.reductions import reduce_sum
    from lamina.lax.shapes import reshape

    ct_shape = ct.aval.shape if hasattr(ct, "aval") else np.shape(ct)
    if tuple(ct_shape) == tuple(aval.shape):
        return ct
    if not aval.shape:
        return reduce_sum(ct, tuple(range(len(ct_shape))))
    axes = tuple(i for i, (a, c) in enumerate(zip(aval.shape, ct_shape, strict=True)) if a != c)
    return reshape(reduce_sum(ct, axes), aval.shape)


def _linear_in(*xs):
    return [reverse.is_undefined_primal(x) for x in xs]


def _nonlinear(name):
    raise NotImplementedError(f"{name} is not linear in both operands: cannot transpose")


def _add_transpose(ct, x, y):
    lx, ly = _linear_in(x, y)
    return [_unbroadcast(ct, x.aval) if lx else None, _unbroadcast(ct, y.aval) if ly else None]


def _sub_transpose(ct, x, y):
    lx, ly = _linear_in(x, y)
    return [_unbroadcast(ct, x.aval) if lx else None,
            _unbroadcast(neg(ct), y.aval) if ly else None]  # fmt: skip


def _mul_transpose(ct, x, y, out_dtype=None):
    lx, ly = _linear_in(x, y)
    if lx and ly:
        _nonlinear("mul")
    if lx:
        back = None if out_dtype is None else x.aval.dtype
        return [_unbroadcast(mul(ct, y, out_dtype=back), x.aval), None]
    back = None if out_dtype is None else y.aval.dtype
    return [None, _unbroadcast(mul(x, ct, out_dtype=back), y.aval)]


def _div_transpose(ct, x, y):
    if reverse.is_undefined_primal(y):
        _nonlinear("div")
    return [_unbroadcast(div(ct, y), x.aval), None]


def _select_n_transpose(ct, which, *cases):
    if reverse.is_undefined_primal(which):
        _nonlinear("select_n (in its predicate)")
    zeros = ad.instantiate_zeros(
        ad.Zero(
            ad.tangent_aval(
                cases[0].aval if reverse.is_undefined_primal(cases[0]) else _aval_of_value(cases[0])
            )
        )
    )
    out = [None]
    for i, c in enumerate(cases):
        if not reverse.is_undefined_primal(c):
            out.append(None)
            continue
        picks = [zeros] * len(cases)
        picks[i] = ct
        out.append(select_n_p.bind(which, *picks))
    return out


def _aval_of_value(x):
    from lamina.lax._common import aval_of

    return aval_of(x)


neg_p.def_transpose(lambda ct, x: [neg(ct)])
add_p.def_transpose(_add_transpose)
sub_p.def_transpose(_sub_transpose)
mul_p.def_transpose(_mul_transpose)
div_p.def_transpose(_div_transpose)
select_n_p.def_transpose(_select_n_transpose)
