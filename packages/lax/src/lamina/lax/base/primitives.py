"""The primitives every family of lax is written with, each with all of its rules.

- elementwise arithmetic and comparisons, ``select_n`` and the accuracy options;
- complex parts (``real``, ``imag``, ``conj``, ``complex``);
- unary and binary math (transcendental functions, ``pow``, ``rem``, ``atan2``,
  bitwise operations, ``clamp``);
- ``convert_element_type`` and the related dtype conversions;
- shapes: ``broadcast_in_dim``, ``reshape``, ``transpose``, ``iota``;
- reductions over axes: ``reduce_sum``, ``reduce_max``, ... and ``argmax``/``argmin``.

They share one module because their rules need each other: ``mul``'s JVP broadcasts,
``broadcast_in_dim``'s transpose sums, ``reduce_max``'s JVP compares and divides.

As in JAX, lax's binary operations do not promote dtypes (``lax.add(f32, i32)`` is a
``TypeError``; weak types are ignored, so ``lax.add(x, 2)`` needs ``x`` of int32) and do
not broadcast ranks: operands have equal ranks, or are scalars, and dimensions of size 1
stretch. Params are named as in JAX 0.10.2.
"""

from __future__ import annotations

import builtins
import enum
import math
import operator

import numpy as np

from lamina.interpreters import Tracer, ad, batching, device_put_value, dim_as_value, reverse
from lamina.interpreters.mlir import (
    chlo,
    elementwise,
    eval_dynamic_shape_as_tensor,
    hlo,
    i64_array,
    ir,
    operation,
)
from lamina.ir import (
    ShapedArray,
    ShardingTypeError,
    abstract_eval_rules,
    def_elementwise_sharding,
    dtypes,
    is_constant_shape,
    is_symbolic_dim,
    out_type_sharding,
    padded_sharding,
    spec_of,
    typed_result,
)
from lamina.lax.base.operands import (
    ANY,
    COMPLEX,
    FLOAT,
    INEXACT,
    INT,
    NUMBER,
    NUMERIC,
    aval_of,
    broadcasting_shape,
    check_dtype,
    check_same_dtypes,
    standard_primitive,
)

__all__ = [
    "AccuracyMode",
    "RoundingMethod",
    "Tolerance",
    "abs",
    "abs_p",
    "acos",
    "acos_p",
    "acosh",
    "acosh_p",
    "add",
    "add_p",
    "and_p",
    "argmax",
    "argmax_p",
    "argmin",
    "argmin_p",
    "asin",
    "asin_p",
    "asinh",
    "asinh_p",
    "atan",
    "atan2",
    "atan2_p",
    "atan_p",
    "atanh",
    "atanh_p",
    "bitcast_convert_type",
    "bitcast_convert_type_p",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "broadcast_in_dim",
    "broadcast_in_dim_p",
    "broadcasted_iota",
    "cbrt",
    "cbrt_p",
    "ceil",
    "ceil_p",
    "clamp",
    "clamp_p",
    "clz",
    "clz_p",
    "complex",
    "complex_p",
    "conj",
    "conj_p",
    "convert_element_type",
    "convert_element_type_p",
    "copy_p",
    "cos",
    "cos_p",
    "cosh",
    "cosh_p",
    "div",
    "div_p",
    "dtype",
    "eq",
    "eq_p",
    "exp",
    "exp2",
    "exp2_p",
    "exp_p",
    "expm1",
    "expm1_p",
    "floor",
    "floor_p",
    "ge",
    "ge_p",
    "gt",
    "gt_p",
    "imag",
    "imag_p",
    "integer_pow",
    "integer_pow_p",
    "iota",
    "iota_p",
    "is_finite",
    "is_finite_p",
    "le",
    "le_p",
    "log",
    "log1p",
    "log1p_p",
    "log_p",
    "logistic",
    "logistic_p",
    "lt",
    "lt_p",
    "max",
    "max_p",
    "min",
    "min_p",
    "mul",
    "mul_p",
    "mulhi",
    "mulhi_p",
    "ne",
    "ne_p",
    "neg",
    "neg_p",
    "nextafter",
    "nextafter_p",
    "not_p",
    "or_p",
    "population_count",
    "population_count_p",
    "pow",
    "pow_p",
    "real",
    "real_p",
    "reciprocal",
    "reduce_and",
    "reduce_and_p",
    "reduce_max",
    "reduce_max_p",
    "reduce_min",
    "reduce_min_p",
    "reduce_or",
    "reduce_or_p",
    "reduce_precision",
    "reduce_precision_p",
    "reduce_prod",
    "reduce_prod_p",
    "reduce_sum",
    "reduce_sum_p",
    "reduce_xor",
    "reduce_xor_p",
    "rem",
    "rem_p",
    "reshape",
    "reshape_p",
    "round",
    "round_p",
    "rsqrt",
    "rsqrt_p",
    "select",
    "select_n",
    "select_n_p",
    "shift_left",
    "shift_left_p",
    "shift_right_arithmetic",
    "shift_right_arithmetic_p",
    "shift_right_logical",
    "shift_right_logical_p",
    "sign",
    "sign_p",
    "sin",
    "sin_p",
    "sinh",
    "sinh_p",
    "sqrt",
    "sqrt_p",
    "square",
    "square_p",
    "sub",
    "sub_p",
    "tan",
    "tan_p",
    "tanh",
    "tanh_p",
    "transpose",
    "transpose_p",
    "xor_p",
]


# ==================== elementwise arithmetic, comparisons, select_n


# ------------------------------------------------------------------ unary


def _unary(name: str, accepted, hlo_op: str):
    """``hlo_op`` names the ``stablehlo`` builder (looked up when lowering, so the MLIR
    bindings load on first use)."""

    def abstract_eval(x):
        check_dtype(name, x.dtype, accepted)
        return x

    op_name = f"stablehlo.{hlo_op}"

    def lowering(ctx, x):
        return [elementwise(op_name, x)]

    return standard_primitive(name, abstract_eval, lowering)


neg_p = _unary("neg", NUMERIC, "negate")
batching.defvectorized(neg_p)  # vmap: each element alone, the batch dim stays
def_elementwise_sharding(neg_p)


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

    op_name = f"{'stablehlo' if dialect == 'hlo' else 'chlo'}.{op}"

    def lowering(ctx, x, accuracy=None):
        return [with_accuracy(elementwise(op_name, x), accuracy)]

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defvectorized(prim)
    def_elementwise_sharding(prim)
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
ad.defjvp2(sin_p, lambda t, ans, x, accuracy=None: mul(t, cos(x, accuracy=accuracy)))
ad.defjvp2(cos_p, lambda t, ans, x, accuracy=None: neg(mul(t, sin(x, accuracy=accuracy))))
ad.defjvp2(exp_p, lambda t, ans, x, accuracy=None: mul(t, ans))
ad.defjvp2(log_p, lambda t, ans, x, accuracy=None: div(t, x))
ad.defjvp2(tanh_p, lambda t, ans, x, accuracy=None: _tanh_jvp(t, ans, x, accuracy))
ad.defjvp2(sqrt_p, lambda t, ans, x, accuracy=None: mul(t, div(_const(0.5, ans), ans)))


# ------------------------------------------------------------------ binary


def _binary(name: str, accepted, hlo_op: str, tip: str | None):
    def abstract_eval(x, y):
        shape = broadcasting_shape(name, (x.shape, y.shape))
        for i, a in enumerate((x, y)):
            check_dtype(name, a.dtype, accepted, position=i if accepted is not ANY else None)
        check_same_dtypes(name, (x, y), tip)
        return ShapedArray(shape, x.dtype, weak_type=x.weak_type and y.weak_type)

    op_name = f"stablehlo.{hlo_op}"

    def lowering(ctx, x, y):
        x, y = ctx.broadcast_to([x, y])
        return [elementwise(op_name, x, y)]

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
            return [elementwise(f"stablehlo.{'maximum' if direction == 'GT' else 'minimum'}", x, y)]
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
    def_elementwise_sharding(_p)


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
    return [elementwise("stablehlo.multiply", x, y)]


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
    """A tangent stretched to the result's shape (lax broadcasts scalars and size-1 axes):
    size-1 axes are squeezed out first, as JAX does. A tangent given as a Python or NumPy
    value becomes an array, as in JAX."""

    shape = ans.aval.shape if hasattr(ans, "aval") else np.shape(ans)
    t_shape = t.aval.shape if hasattr(t, "aval") else np.shape(t)
    if t_shape == shape:
        return t if hasattr(t, "aval") else broadcast_in_dim(t, shape, tuple(range(len(shape))))
    if not t_shape:
        return broadcast_in_dim(t, shape, ())
    dims = tuple(i for i, (a, b) in enumerate(zip(t_shape, shape, strict=True)) if a == b)
    return broadcast_in_dim(reshape(t, tuple(t_shape[i] for i in dims)), shape, dims)


def _full_like(x, value):
    """``value`` in ``x``'s shape, dtype and type sharding: a scalar constant when ``x``
    is a scalar."""
    c = _const(value, x)
    aval = aval_of(x)
    if not aval.shape:
        return c
    sharding = getattr(aval, "type_sharding", None)
    return broadcast_in_dim_p.bind(
        c, shape=tuple(aval.shape), broadcast_dimensions=(), sharding=sharding
    )


def _replace_zero(x):
    """``x`` with its zeros replaced by ones."""
    return select_n(eq(x, _const(0, x)), x, _full_like(x, 1))


def _balanced_eq(x, z, y):
    """1 where ``x`` equals the result ``z`` (halved where ``y`` does too), else 0: the
    share of ``x``'s tangent that ``max``/``min`` pass on."""
    picked = _select(eq(x, z), _full_like(z, 1), _full_like(z, 0))
    return div(picked, _select(eq(y, z), _full_like(z, 2), _full_like(z, 1)))


def _select(pred, on_true, on_false):
    """``select_n`` with the cases in JAX's ``select`` order (built true case first)."""
    return select_n(pred, on_false, on_true)


def _add_jvp(primals, tangents):
    x, y = primals
    xt, yt = tangents
    ans = add_p.bind(x, y)
    if ad.is_zero(xt) and ad.is_zero(yt):
        return ans, ad.Zero(ad.tangent_aval(aval_of(ans)))
    if ad.is_zero(xt):
        return ans, _to_result_shape(yt, ans)
    if ad.is_zero(yt):
        return ans, _to_result_shape(xt, ans)
    return ans, add(xt, yt)


def _sub_jvp(primals, tangents):
    x, y = primals
    xt, yt = tangents
    ans = sub_p.bind(x, y)
    if ad.is_zero(xt) and ad.is_zero(yt):
        return ans, ad.Zero(ad.tangent_aval(aval_of(ans)))
    if ad.is_zero(xt):
        return ans, _to_result_shape(neg(yt), ans)
    if ad.is_zero(yt):
        return ans, _to_result_shape(xt, ans)
    return ans, sub(xt, yt)


add_p.def_jvp(_add_jvp)
sub_p.def_jvp(_sub_jvp)
ad.defjvp2(mul_p, lambda t, ans, x, y, out_dtype=None: mul(t, y, out_dtype=out_dtype),
          lambda t, ans, x, y, out_dtype=None: mul(x, t, out_dtype=out_dtype))  # fmt: skip
ad.defjvp2(div_p, lambda t, ans, x, y: div(t, y), lambda t, ans, x, y: _div_jvp_y(t, x, y))


def _div_jvp_y(t, x, y):
    """d(x/y)/dy as -t·x·y⁻², JAX's arrangement (so gradients agree to the last bit)."""

    return mul(mul(neg(t), x), integer_pow(y, -2))


for _p in (max_p, min_p):
    ad.defjvp2(_p, lambda t, ans, x, y: mul(t, _balanced_eq(x, ans, y)),
               lambda t, ans, x, y: mul(t, _balanced_eq(y, ans, x)))  # fmt: skip


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


def comparison_primitive(name: str, direction: str, tip: str | None, total_order: bool = False):
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


eq_p = comparison_primitive("eq", "EQ", "equal")
ne_p = comparison_primitive("ne", "NE", "not_equal")
lt_p = comparison_primitive("lt", "LT", None)
le_p = comparison_primitive("le", "LE", None)
gt_p = comparison_primitive("gt", "GT", None)
ge_p = comparison_primitive("ge", "GE", None)
for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    batching.defbroadcasting(_p)
    def_elementwise_sharding(_p)


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


@select_n_p.def_sharding
def _select_n_sharding(which, *cases):
    """The typed cases must be split alike, and an array ``which`` split as they are."""
    typed = [c for c in cases if c.type_sharding is not None]
    if not typed:
        return (None,) * len(cases[0].shape)
    first = spec_of(typed[0])
    if any(spec_of(c) != first for c in typed[1:]):
        like = typed[0].type_sharding
        shown = ", ".join(str(padded_sharding(c, like)) for c in cases)
        raise ShardingTypeError(f"select cases must have the same shardings, got [{shown}].")
    if which.shape and which.type_sharding is not None and spec_of(which) != first:
        raise ShardingTypeError(
            "select `which` must be scalar or have the same sharding as cases, got `which` "
            f"sharding {padded_sharding(which)} but case sharding "
            f"{padded_sharding(cases[0], typed[0].type_sharding)}."
        )
    return first


def _select_n_batching(axis_data, vals, dims):
    """select_n does not stretch size-1 axes: cases share one shape, and ``which`` is
    a scalar or has it too. Nothing moves when the operands already agree."""

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
    zeros = _full_like(next(t for t in case_tangents if not ad.is_zero(t)), 0)
    case_tangents = [zeros if ad.is_zero(t) else t for t in case_tangents]
    return ans, select_n_p.bind(primals[0], *case_tangents)


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
    return aval_of(x)


neg_p.def_transpose(lambda ct, x: [neg(ct)])
add_p.def_transpose(_add_transpose)
sub_p.def_transpose(_sub_transpose)
mul_p.def_transpose(_mul_transpose)
div_p.def_transpose(_div_transpose)
select_n_p.def_transpose(_select_n_transpose)


# ==================== complex parts: real, imag, conj
# ``real``, ``imag`` and ``conj``, each with its rules; all three are linear, so they
# have transposes.

F32 = ("float32", np.float32)
F64 = ("float64", np.float64)


def _part(name, op):
    """``real`` or ``imag``: a complex operand to its real dtype."""

    def abstract_eval(x):
        check_dtype(name, x.dtype, (COMPLEX,))
        return ShapedArray(x.shape, _real_part(x.dtype), weak_type=x.weak_type)

    def lowering(ctx, x):
        return [getattr(hlo, op)(x, results=[ctx.ir_type(ctx.avals_out[0])])]

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defvectorized(prim)
    def_elementwise_sharding(prim)
    return prim


def _real_part(dtype):
    return np.finfo(dtype).dtype


def _complex_of(dtype):
    return np.dtype(np.complex64 if dtype == np.float32 else np.complex128)


real_p = _part("real", "real")
imag_p = _part("imag", "imag")


def _conj_abstract_eval(x, *, input_dtype):
    check_dtype("conj", x.dtype, (F32, COMPLEX, F64))
    dtype = x.dtype if dtypes.issubdtype(x.dtype, np.complexfloating) else _complex_of(x.dtype)
    return ShapedArray(x.shape, dtype, weak_type=x.weak_type)


def _conj_lowering(ctx, x, *, input_dtype):
    aval_in = ctx.avals_in[0]
    if not dtypes.issubdtype(aval_in.dtype, np.complexfloating):
        zero = ctx.broadcast_in_dim(ctx.constant(0, aval_in.update(shape=())), aval_in, ())
        return [hlo.complex(x, zero)]
    part = ctx.ir_type(aval_in.update(dtype=_real_part(aval_in.dtype)))
    return [hlo.complex(hlo.real(x, results=[part]), hlo.negate(hlo.imag(x, results=[part])))]


conj_p = standard_primitive("conj", _conj_abstract_eval, _conj_lowering)
batching.defvectorized(conj_p)
def_elementwise_sharding(conj_p)


def real(x):
    """Elementwise real part of a complex array."""
    return real_p.bind(x)


def imag(x):
    """Elementwise imaginary part of a complex array."""
    return imag_p.bind(x)


def conj(x):
    """Elementwise complex conjugate (a real ``x`` becomes complex)."""
    return conj_p.bind(x, input_dtype=aval_of(x).dtype)


def _zeros_like(x):
    return ad.zeros_like_aval(ad.tangent_aval(aval_of(x)))


def _real_transpose(ct, x):
    return [complex(ct, np.zeros((), dtypes.dtype(ct)))]


def _imag_transpose(ct, x):
    return [complex(np.zeros((), dtypes.dtype(ct)), neg(ct))]


def _conj_transpose(ct, x, *, input_dtype):
    if dtypes.issubdtype(input_dtype, np.complexfloating):
        return [conj(ct)]
    return [real(ct)]


for _p in (real_p, imag_p, conj_p):
    ad.deflinear(_p)
real_p.def_transpose(_real_transpose)
imag_p.def_transpose(_imag_transpose)
conj_p.def_transpose(_conj_transpose)


# ==================== unary math
# Unary elementwise primitives: abs and sign, rounding, is_finite, trigonometric and
# hyperbolic functions, exp2/expm1/log1p/logistic, rsqrt/cbrt, square, integer_pow and
# reciprocal, copy.
#
# Each is defined with all its rules beside it: abstract evaluation with JAX's dtype
# checks, lowering (``stablehlo``, or ``chlo`` where JAX uses it), JVP, batching (each
# element alone, so the batch dimension stays where it is) and, for ``copy``, transpose.

SIGNED = ("signedinteger", np.signedinteger)


def _math_unary(name: str, accepted, op: str, dialect: str = "hlo", out_dtype=None):
    """A unary primitive lowered to one op (``out_dtype(dtype)`` gives the result
    dtype when it is not the operand's)."""

    def abstract_eval(x):
        check_dtype(name, x.dtype, accepted)
        if out_dtype is None:
            return x
        return ShapedArray(x.shape, out_dtype(x.dtype), weak_type=x.weak_type)

    def lowering(ctx, x):
        if dialect == "chlo":
            return [getattr(chlo, op)(x)]
        return [getattr(hlo, op)(x, results=[ctx.ir_type(ctx.avals_out[0])])]

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defvectorized(prim)
    def_elementwise_sharding(prim)
    return prim


def _real_dtype(dtype):
    return np.finfo(dtype).dtype if dtypes.issubdtype(dtype, np.complexfloating) else dtype


# ------------------------------------------------------------------ abs, sign, rounding

abs_p = _math_unary("abs", (FLOAT, COMPLEX, SIGNED), "abs", out_dtype=_real_dtype)
sign_p = _math_unary("sign", NUMERIC, "sign")
floor_p = _math_unary("floor", (FLOAT,), "floor")
ceil_p = _math_unary("ceil", (FLOAT,), "ceil")
is_finite_p = _math_unary("is_finite", (FLOAT,), "is_finite", out_dtype=lambda d: dtypes.bool_)


def _sign_lowering(ctx, x):
    aval = ctx.avals_in[0]
    if not dtypes.issubdtype(aval.dtype, np.unsignedinteger):
        return [hlo.sign(x)]
    # stablehlo.sign takes no unsigned integers: 0 stays 0, everything else is 1.
    zero, one = (ctx.broadcast_in_dim(ctx.constant(v, aval.update(shape=())), aval, ())
                 for v in (0, 1))  # fmt: skip
    direction = hlo.ComparisonDirectionAttr.get("EQ")
    is_zero = hlo.compare(x, zero, direction, compare_type=hlo.ComparisonTypeAttr.get("UNSIGNED"))
    return [hlo.select(is_zero, zero, one)]


sign_p.def_lowering(_sign_lowering)


class RoundingMethod(enum.IntEnum):
    """How ``round`` breaks ties: away from zero (``round(2.5) == 3``) or to the nearest
    even integer (``round(2.5) == 2``)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _round_abstract_eval(x, *, rounding_method):
    check_dtype("round", x.dtype, (FLOAT,))
    return x


def _round_lowering(ctx, x, *, rounding_method):
    if rounding_method == RoundingMethod.AWAY_FROM_ZERO:
        return [hlo.round_nearest_afz(x)]
    return [hlo.round_nearest_even(x)]


round_p = standard_primitive("round", _round_abstract_eval, _round_lowering)
batching.defvectorized(round_p)
def_elementwise_sharding(round_p)
round_p.def_pp_params(
    lambda params: params,
    lambda params, in_avals, out_avals: {
        "rounding_method": RoundingMethod(params["rounding_method"])
    },
)


def abs(x):
    """Elementwise absolute value; of a complex number, its magnitude (a real result)."""
    return abs_p.bind(x)


def sign(x):
    """Elementwise sign: -1, 0 or 1 (``x / abs(x)`` for complex ``x``)."""
    return sign_p.bind(x)


def floor(x):
    """Elementwise floor."""
    return floor_p.bind(x)


def ceil(x):
    """Elementwise ceiling."""
    return ceil_p.bind(x)


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """Elementwise rounding to the nearest integer, ties broken by ``rounding_method``."""
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def is_finite(x):
    """Elementwise: true where ``x`` is neither infinite nor NaN."""
    return is_finite_p.bind(x)


def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    ans = abs_p.bind(x)
    if type(t) is ad.Zero:
        return ans, ad.Zero(ad.tangent_aval(ans.aval))
    if dtypes.issubdtype(dtypes.dtype(x), np.complexfloating):
        # d|x| = Re(dx conj(x) / |x|), dividing by 1 where x == 0.
        conj_x = conj(x)
        safe = _replace_zero(convert_element_type(ans, dtypes.dtype(x)))
        return ans, real(mul(t, div(conj_x, safe)))
    return ans, select_n(ge(x, _const(0, x)), neg(t), t)


abs_p.def_jvp(_abs_jvp)
for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p):
    ad.zero_jvp(_p)  # piecewise constant


# ------------------------------------------------------------------ transcendental

expm1_p = accuracy_unary("expm1", INEXACT, "exponential_minus_one")
log1p_p = accuracy_unary("log1p", INEXACT, "log_plus_one")
logistic_p = accuracy_unary("logistic", INEXACT, "logistic")
rsqrt_p = accuracy_unary("rsqrt", INEXACT, "rsqrt")
cbrt_p = accuracy_unary("cbrt", (FLOAT,), "cbrt")
tan_p = accuracy_unary("tan", INEXACT, "tan")
asin_p = _math_unary("asin", INEXACT, "asin", "chlo")
acos_p = _math_unary("acos", INEXACT, "acos", "chlo")
atan_p = _math_unary("atan", INEXACT, "atan", "chlo")
sinh_p = _math_unary("sinh", INEXACT, "sinh", "chlo")
cosh_p = _math_unary("cosh", INEXACT, "cosh", "chlo")
asinh_p = _math_unary("asinh", INEXACT, "asinh", "chlo")
acosh_p = _math_unary("acosh", INEXACT, "acosh", "chlo")
atanh_p = _math_unary("atanh", INEXACT, "atanh", "chlo")


def _exp2_abstract_eval(x, accuracy=None):
    check_dtype("exp2", x.dtype, INEXACT)
    return x


def _exp2_lowering(ctx, x, accuracy=None):
    aval = ctx.avals_in[0]
    log2 = ctx.broadcast_in_dim(ctx.constant(math.log(2), aval.update(shape=())), aval, ())
    return [with_accuracy(hlo.exponential(hlo.multiply(log2, x)), accuracy)]


exp2_p = standard_primitive("exp2", _exp2_abstract_eval, _exp2_lowering)
batching.defvectorized(exp2_p)
def_elementwise_sharding(exp2_p)
def_accuracy_params(exp2_p)


def exp2(x, *, accuracy=None):
    """Elementwise base-2 exponential: 2**x."""
    return exp2_p.bind(x, accuracy=check_accuracy(accuracy))


def expm1(x, *, accuracy=None):
    """Elementwise e**x - 1, accurate near zero."""
    return expm1_p.bind(x, accuracy=check_accuracy(accuracy))


def log1p(x, *, accuracy=None):
    """Elementwise log(1 + x), accurate near zero."""
    return log1p_p.bind(x, accuracy=check_accuracy(accuracy))


def logistic(x, *, accuracy=None):
    """Elementwise logistic sigmoid: 1 / (1 + e**-x)."""
    return logistic_p.bind(x, accuracy=check_accuracy(accuracy))


def rsqrt(x, *, accuracy=None):
    """Elementwise reciprocal square root: 1 / sqrt(x)."""
    return rsqrt_p.bind(x, accuracy=check_accuracy(accuracy))


def cbrt(x, *, accuracy=None):
    """Elementwise real cube root (negative for negative x)."""
    return cbrt_p.bind(x, accuracy=check_accuracy(accuracy))


def tan(x, *, accuracy=None):
    """Elementwise tangent."""
    return tan_p.bind(x, accuracy=check_accuracy(accuracy))


def asin(x):
    """Elementwise arc sine."""
    return asin_p.bind(x)


def acos(x):
    """Elementwise arc cosine."""
    return acos_p.bind(x)


def atan(x):
    """Elementwise arc tangent."""
    return atan_p.bind(x)


def sinh(x):
    """Elementwise hyperbolic sine."""
    return sinh_p.bind(x)


def cosh(x):
    """Elementwise hyperbolic cosine."""
    return cosh_p.bind(x)


def asinh(x):
    """Elementwise inverse hyperbolic sine."""
    return asinh_p.bind(x)


def acosh(x):
    """Elementwise inverse hyperbolic cosine."""
    return acosh_p.bind(x)


def atanh(x):
    """Elementwise inverse hyperbolic tangent."""
    return atanh_p.bind(x)


def _one(x):
    return _const(1, x)


def _cbrt_slope(ans):
    return mul(_const(1 / 3, ans), integer_pow(ans, -2))


def _one_minus_square(x):
    return sub(_const(1, x), square(x))


def _tanh_jvp(t, ans, x, accuracy):
    if accuracy is AccuracyMode.HIGHEST:
        halves = mul(logistic(mul(_const(2, x), x), accuracy=accuracy),
                     logistic(mul(_const(-2, x), x), accuracy=accuracy))  # fmt: skip
        return mul(t, mul(_const(4, x), halves))
    return mul(add(t, mul(t, ans)), sub(_one(x), ans))


def _expm1_jvp(t, ans, x, accuracy):
    if accuracy is AccuracyMode.HIGHEST:
        return mul(t, exp(x, accuracy=accuracy))
    return mul(t, add(ans, _one(ans)))


def _logistic_jvp(t, ans, x, accuracy):
    if accuracy is AccuracyMode.HIGHEST:
        return mul(t, mul(ans, logistic(neg(x))))
    return mul(t, mul(ans, sub(_one(ans), ans)))


# JVPs: ``t`` is the operand's tangent, ``ans`` the primal result.
ad.defjvp2(exp2_p, lambda t, ans, x, accuracy=None: mul(log(_const(2, x)), mul(t, ans)))
ad.defjvp2(expm1_p, lambda t, ans, x, accuracy=None: _expm1_jvp(t, ans, x, accuracy))
ad.defjvp2(log1p_p, lambda t, ans, x, accuracy=None: div(t, add(x, _const(1, x))))
ad.defjvp2(logistic_p, lambda t, ans, x, accuracy=None: _logistic_jvp(t, ans, x, accuracy))
ad.defjvp2(rsqrt_p, lambda t, ans, x, accuracy=None: mul(t, mul(_const(-0.5, ans), div(ans, x))))
ad.defjvp2(cbrt_p, lambda t, ans, x, accuracy=None: mul(t, _cbrt_slope(ans)))
ad.defjvp2(tan_p, lambda t, ans, x, accuracy=None: mul(t, add(_const(1, ans), square(ans))))
ad.defjvp2(asin_p, lambda t, ans, x: mul(t, rsqrt(_one_minus_square(x))))
ad.defjvp2(acos_p, lambda t, ans, x: mul(t, neg(rsqrt(_one_minus_square(x)))))
ad.defjvp2(atan_p, lambda t, ans, x: div(t, add(_const(1, x), square(x))))
ad.defjvp2(sinh_p, lambda t, ans, x: mul(t, cosh(x)))
ad.defjvp2(cosh_p, lambda t, ans, x: mul(t, sinh(x)))
ad.defjvp2(asinh_p, lambda t, ans, x: mul(t, rsqrt(add(square(x), _const(1, x)))))
ad.defjvp2(acosh_p, lambda t, ans, x: mul(t, rsqrt(sub(square(x), _one(x)))))
ad.defjvp2(atanh_p, lambda t, ans, x: mul(reciprocal(add(_one(x), x)), div(t, sub(_one(x), x))))


# ------------------------------------------------------------------ powers

square_p = _math_unary("square", NUMERIC, "square", "chlo")
# chlo.square rejects integers: multiply them instead.
square_p.def_lowering(
    lambda ctx, x: [
        hlo.multiply(x, x)
        if dtypes.issubdtype(ctx.avals_in[0].dtype, np.integer)
        else chlo.square(x)
    ]
)


def square(x):
    """Elementwise x * x."""
    return square_p.bind(x)


ad.defjvp2(square_p, lambda t, ans, x: mul(t, mul(_const(2, x), x)))


def _integer_pow_abstract_eval(x, *, y):
    check_dtype("integer_pow", x.dtype, NUMERIC)
    if y < 0 and dtypes.issubdtype(x.dtype, INT[1]):
        raise TypeError(
            f"Integers cannot be raised to negative powers, got integer_pow({x.str_short()}, {y})"
        )
    return x


def integer_pow_hlo(ctx, x, aval, y: int):
    """``x ** y`` by repeated squaring (``1 / x ** -y`` for negative ``y``)."""
    if y == 0:
        return ctx.broadcast_in_dim(ctx.constant(1, aval.update(shape=())), aval, ())
    acc, base, n = None, x, builtins.abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else hlo.multiply(acc, base)
        n >>= 1
        if n:
            base = hlo.multiply(base, base)
    if y < 0:
        one = ctx.broadcast_in_dim(ctx.constant(1, aval.update(shape=())), aval, ())
        acc = hlo.divide(one, acc)
    return acc


def _integer_pow_lowering(ctx, x, *, y):
    return [integer_pow_hlo(ctx, x, ctx.avals_in[0], y)]


integer_pow_p = standard_primitive("integer_pow", _integer_pow_abstract_eval, _integer_pow_lowering)
batching.defvectorized(integer_pow_p)
def_elementwise_sharding(integer_pow_p)


def _integer_pow_jvp(t, ans, x, *, y):
    if y == 0:
        return _full_like(t, 0)
    if y == 1:
        return t
    power = x if y == 2 else integer_pow(x, y - 1)  # as JAX: no integer_pow[y=1]
    return mul(t, mul(_const(y, x), power))


ad.defjvp2(integer_pow_p, _integer_pow_jvp)


def integer_pow(x, y):
    """Elementwise ``x ** y`` for a Python integer ``y`` (negative only for inexact x)."""
    return integer_pow_p.bind(x, y=operator.index(y))


def reciprocal(x):
    """Elementwise 1 / x."""
    return integer_pow(x, -1)


# ------------------------------------------------------------------ copy


copy_p = standard_primitive("copy", lambda x: x, lambda ctx, x: [x])
batching.defvectorized(copy_p)
def_elementwise_sharding(copy_p)
ad.deflinear(copy_p)
copy_p.def_transpose(lambda ct, x: [copy_p.bind(ct)])


# ==================== binary math, bitwise operations, complex, clamp
# Binary elementwise primitives: rem, pow, atan2, nextafter, clamp, complex; bitwise
# and/or/xor/not, shifts, population_count, clz and mulhi.
#
# As for the other lax operations, operands have one dtype (``pow`` aside: its exponent
# may be an integer) and equal ranks or are scalars, with size-1 axes stretching.

BOOL = ("bool", np.bool_)


def _broadcasting_binary(name, accepted, op, tip=None, dialect="hlo", out_dtype=None):
    """A binary primitive lowered to one op after broadcasting its operands."""

    def abstract_eval(x, y):
        shape = broadcasting_shape(name, (x.shape, y.shape))
        for i, a in enumerate((x, y)):
            check_dtype(name, a.dtype, accepted, position=i if accepted is not ANY else None)
        check_same_dtypes(name, (x, y), tip)
        dtype = x.dtype if out_dtype is None else out_dtype(x.dtype)
        return ShapedArray(shape, dtype, weak_type=x.weak_type and y.weak_type)

    def lowering(ctx, x, y):
        x, y = ctx.broadcast_to([x, y])
        return [getattr(chlo if dialect == "chlo" else hlo, op)(x, y)]

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defbroadcasting(prim)
    def_elementwise_sharding(prim)
    return prim


def _bitwise_unary(name, accepted, op, out_dtype=None):
    def abstract_eval(x):
        check_dtype(name, x.dtype, accepted)
        if out_dtype is None:
            return x
        return ShapedArray(x.shape, out_dtype(x.dtype), weak_type=x.weak_type)

    def lowering(ctx, x):
        return [getattr(hlo, op)(x, results=[ctx.ir_type(ctx.avals_out[0])])]

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defvectorized(prim)
    def_elementwise_sharding(prim)
    return prim


def _const_like(value, like):
    return np.array(value, aval_of(like).dtype)


# ------------------------------------------------------------------ rem, atan2, nextafter

rem_p = _broadcasting_binary("rem", (INT, FLOAT), "remainder")
atan2_p = _broadcasting_binary("atan2", INEXACT, "atan2", "arctan2")
nextafter_p = _broadcasting_binary("nextafter", (FLOAT,), "next_after", "nextafter", dialect="chlo")


def rem(x, y):
    """Elementwise remainder of ``x / y`` rounded towards zero: the result has the sign
    of ``x`` (C's ``fmod``; Python's ``%`` takes the sign of ``y``)."""
    return rem_p.bind(x, y)


def atan2(x, y):
    """Elementwise arc tangent of ``x / y`` in the quadrant of the point ``(y, x)``."""
    return atan2_p.bind(x, y)


def nextafter(x1, x2):
    """Elementwise: the next representable value after ``x1`` in the direction of ``x2``."""
    return nextafter_p.bind(x1, x2)


def _trunc_quotient(x, y):
    return mul(sign(div(x, y)), floor(abs(div(x, y))))


ad.defjvp2(rem_p, lambda t, ans, x, y: _to_result_shape(t, ans),
          lambda t, ans, x, y: mul(neg(t), _trunc_quotient(x, y)))  # fmt: skip


def _atan2_denominator(x, y):
    return add(square(x), square(y))


ad.defjvp2(atan2_p, lambda t, ans, x, y: mul(t, div(y, _atan2_denominator(x, y))),
          lambda t, ans, x, y: mul(t, div(neg(x), _atan2_denominator(x, y))))  # fmt: skip


# ------------------------------------------------------------------ pow


def _pow_abstract_eval(x, y):
    check_dtype("pow", x.dtype, INEXACT, position=0)
    check_dtype("pow", y.dtype, (INT, FLOAT, COMPLEX), position=1)
    y_inexact = dtypes.issubdtype(y.dtype, np.inexact)
    if y_inexact and x.dtype != y.dtype:
        raise TypeError(
            "the first argument to pow must have an inexact dtype (float or complex), and "
            "the second argument must have an inexact or integer dtype, and two inexact "
            f"dtypes must match, but got {x.dtype.name} and {y.dtype.name} respectively."
        )
    shape = broadcasting_shape("pow", (x.shape, y.shape))
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type and y.weak_type)


def _pow_lowering(ctx, x, y):
    x_aval, y_aval = ctx.avals_in
    y_aval_as_x = y_aval.update(dtype=x_aval.dtype)
    y = ctx.convert(y, y_aval, y_aval_as_x)
    x, y = ctx.replace(avals_in=[x_aval, y_aval_as_x]).broadcast_to([x, y])
    return [hlo.power(x, y)]


pow_p = standard_primitive("pow", _pow_abstract_eval, _pow_lowering)
batching.defbroadcasting(pow_p)
def_elementwise_sharding(pow_p)


def pow(x, y):
    """Elementwise ``x ** y``: ``x`` inexact, ``y`` of ``x``'s dtype or an integer."""
    return pow_p.bind(x, y)


def _pow_jvp_x(t, ans, x, y):
    dtype = aval_of(ans).dtype
    y_is_int = dtypes.issubdtype(dtypes.dtype(y), np.integer)
    x, y = convert_element_type(x, dtype), convert_element_type(y, dtype)
    if not y_is_int:
        return mul(t, mul(y, pow(x, sub(y, _full_like(y, 1)))))
    x, y = _to_result_shape(x, ans), _to_result_shape(y, ans)
    is_zero, zeros = eq(y, _const(0, y)), _full_like(y, 0)
    slope = mul(_replace_zero(y), pow(x, sub(y, _full_like(y, 1))))
    return mul(t, select_n(is_zero, slope, zeros))


def _pow_jvp_y(t, ans, x, y):
    # d(x**y)/dy = log(x) x**y, taken as 0 where x == 0 (the limit for y > 0).
    out = mul(t, mul(log(_replace_zero(x)), ans))
    return convert_element_type(out, dtypes.dtype(y))


ad.defjvp2(pow_p, _pow_jvp_x, _pow_jvp_y)


# ------------------------------------------------------------------ clamp


def _clamp_abstract_eval(min, x, max):
    for name, a in (("min", min), ("max", max)):
        if a.shape and a.shape != x.shape:
            raise TypeError(
                f"clamp requires {name}.shape == operand.shape or {name}.shape == (), got "
                f"{name}.shape={a.shape}, operand.shape={x.shape}."
            )
    check_same_dtypes("clamp", (min, x, max))
    return ShapedArray(x.shape, x.dtype, weak_type=min.weak_type and x.weak_type and max.weak_type)


def _clamp_lowering(ctx, min, x, max):
    return [hlo.clamp(min, x, max)]


clamp_p = standard_primitive("clamp", _clamp_abstract_eval, _clamp_lowering)
clamp_p.def_sharding(lambda lo, x, hi: spec_of(x))  # split as the operand


def clamp(min, x, max):
    """Elementwise ``x`` limited to ``[min, max]``; ``min`` and ``max`` are scalars or
    of ``x``'s shape."""
    return clamp_p.bind(min, x, max)


def _clamp_batching(axis_data, vals, dims):
    """Every operand at its full batched shape (clamp stretches scalars only)."""

    x, x_dim = vals[1], dims[1]
    x = batching.bdim_at_front(x, x_dim, axis_data.size)
    shape = batching.shape_of(x)
    out = []
    for v, d in zip(vals, dims, strict=True):
        if d is batching.not_mapped and not batching.shape_of(v):
            out.append(v)
            continue
        v = batching.bdim_at_front(v, d, axis_data.size)
        if batching.shape_of(v) != shape:  # one scalar bound per example
            v = broadcast_in_dim(v, shape, (0,))
        out.append(v)
    out[1] = x
    return clamp_p.bind(*out), 0


clamp_p.def_batching(_clamp_batching)


def _masked(t, mask, ans):
    """``t`` (stretched to the result's shape) where ``mask`` holds, else 0."""
    t = _to_result_shape(t, ans)
    return select_n(mask, _full_like(ans, 0), t)


def _and(a, b):
    return and_p.bind(a, b)


ad.defjvp2(
    clamp_p,
    lambda t, ans, lo, x, hi: _masked(t, _and(gt(lo, x), lt(lo, hi)), ans),
    lambda t, ans, lo, x, hi: _masked(t, _and(gt(x, lo), lt(x, hi)), ans),
    lambda t, ans, lo, x, hi: _masked(t, lt(hi, x), ans),
)


# ------------------------------------------------------------------ complex numbers


complex_p = _broadcasting_binary("complex", (F32, F64), "complex", out_dtype=_complex_of)


def complex(x, y):
    """Elementwise ``x + 1j * y`` from float32 or float64 parts."""
    return complex_p.bind(x, y)


ad.deflinear(complex_p)


def _complex_transpose(ct, x, y):
    lx, ly = reverse.is_undefined_primal(x), reverse.is_undefined_primal(y)
    return [_unbroadcast(real(ct), x.aval) if lx else None,
            _unbroadcast(imag(neg(ct)), y.aval) if ly else None]  # fmt: skip


complex_p.def_transpose(_complex_transpose)


# ------------------------------------------------------------------ bits

and_p = _broadcasting_binary("and", (INT, BOOL), "and_")
or_p = _broadcasting_binary("or", (INT, BOOL), "or_")
xor_p = _broadcasting_binary("xor", (INT, BOOL), "xor")
not_p = _bitwise_unary("not", (INT, BOOL), "not_")
shift_left_p = _broadcasting_binary("shift_left", (INT,), "shift_left", "left_shift")
shift_right_arithmetic_p = _broadcasting_binary(
    "shift_right_arithmetic", (INT,), "shift_right_arithmetic", "right_shift"
)
shift_right_logical_p = _broadcasting_binary(
    "shift_right_logical", (INT,), "shift_right_logical", "right_shift"
)
population_count_p = _bitwise_unary("population_count", (INT,), "popcnt")
clz_p = _bitwise_unary("clz", (INT,), "count_leading_zeros")
mulhi_p = _broadcasting_binary("mulhi", (INT,), "mulhi", dialect="chlo")
for _p in (and_p, or_p, xor_p, not_p, shift_left_p, shift_right_arithmetic_p,
           shift_right_logical_p, population_count_p, clz_p, mulhi_p):  # fmt: skip
    ad.zero_jvp(_p)  # integer and boolean results


def bitwise_and(x, y):
    """Elementwise bitwise AND (logical AND of booleans)."""
    return and_p.bind(x, y)


def bitwise_or(x, y):
    """Elementwise bitwise OR (logical OR of booleans)."""
    return or_p.bind(x, y)


def bitwise_xor(x, y):
    """Elementwise bitwise exclusive OR (logical XOR of booleans)."""
    return xor_p.bind(x, y)


def bitwise_not(x):
    """Elementwise bitwise NOT (logical NOT of booleans)."""
    return not_p.bind(x)


def shift_left(x, y):
    """Elementwise ``x << y``; shifts of the bit width or more give 0."""
    return shift_left_p.bind(x, y)


def shift_right_arithmetic(x, y):
    """Elementwise ``x >> y`` filling with the sign bit."""
    return shift_right_arithmetic_p.bind(x, y)


def shift_right_logical(x, y):
    """Elementwise ``x >> y`` filling with zeros."""
    return shift_right_logical_p.bind(x, y)


def population_count(x):
    """Elementwise number of set bits."""
    return population_count_p.bind(x)


def clz(x):
    """Elementwise number of leading zero bits."""
    return clz_p.bind(x)


def mulhi(x, y, /):
    """Elementwise high half of the double-width product ``x * y``."""
    return mulhi_p.bind(x, y)


# ==================== conversion between dtypes
# ``convert_element_type``: changing an array's dtype (and weak type);
# ``bitcast_convert_type`` (reading the bits as another dtype) and ``reduce_precision``.
#
# Params, as JAX 0.10.2 names them: ``new_dtype``, ``weak_type``, ``sharding``. JAX prints
# the equation without ``sharding`` when it is None.


def _abstract_eval(x, *, new_dtype, weak_type, sharding):
    extended = (dtypes.ExtendedDType,)
    if (isinstance(x.dtype, extended) or isinstance(new_dtype, extended)) and (
        x.dtype != new_dtype
    ):
        raise ValueError(f"Cannot convert_element_type from {x.dtype} to {new_dtype}")
    return ShapedArray(x.shape, new_dtype, weak_type=weak_type)


def _lowering(ctx, x, *, new_dtype, weak_type, sharding):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    if aval_out.dtype == dtypes.bool_ and aval_in.dtype != dtypes.bool_:
        # Anything non-zero is true: compare with zero (XLA's convert would truncate).

        zero = ctx.constant(np.zeros((), aval_in.dtype), aval_in.update(shape=()))
        zero = ctx.broadcast_in_dim(zero, aval_in, ())
        cmp_ctx = ctx.replace(avals_in=[aval_in, aval_in])
        return [compare(cmp_ctx, x, zero, "NE")]
    return [ctx.convert(x, aval_in, aval_out)]


convert_element_type_p = standard_primitive("convert_element_type", _abstract_eval, _lowering)
batching.defvectorized(convert_element_type_p)
def_elementwise_sharding(convert_element_type_p)
convert_element_type_p.def_pp_params(
    lambda params: {k: v for k, v in params.items() if not (k == "sharding" and v is None)},
    lambda params, in_avals, out_avals: {"sharding": None, **params},
)


def to_dtype(operand, new_dtype, weak_type: bool = False, sharding=None):
    """Convert ``operand`` to ``new_dtype`` (already canonical) with ``weak_type``.
    Host values (Python and NumPy scalars and arrays) are converted on the host, as JAX
    folds them; an array already of that type is returned as it is."""
    new_dtype = dtypes.dtype(new_dtype)
    if is_symbolic_dim(operand):  # a dimension size used as a value
        operand = dim_as_value(operand)
    if not (isinstance(operand, Tracer) or hasattr(operand, "aval")):
        value = np.asarray(operand)
        if dtypes.canonicalize_dtype(new_dtype) != new_dtype:
            # An allowed explicit 64-bit dtype with x64 off: NumPy values are made
            # canonical first (as JAX puts them on the device), Python scalars are not.
            if not dtypes.is_python_scalar(operand):
                value = value.astype(dtypes.canonicalize_dtype(value.dtype))
            return device_put_value(value.astype(new_dtype), weak_type=weak_type, dtype=new_dtype)
        return device_put_value(value.astype(new_dtype), weak_type=weak_type)
    aval = aval_of(operand)
    if (aval.dtype, aval.weak_type) == (new_dtype, bool(weak_type)) and sharding is None:
        return operand
    return convert_element_type_p.bind(
        operand, new_dtype=new_dtype, weak_type=bool(weak_type), sharding=sharding
    )


def _convert_element_type_jvp(primals, tangents, *, new_dtype, weak_type, sharding):
    """The tangent converts too; integer and boolean results get float0 tangents."""
    ans = convert_element_type_p.bind(
        primals[0], new_dtype=new_dtype, weak_type=weak_type, sharding=sharding
    )
    out_aval = ad.tangent_aval(aval_of(ans))
    if out_aval.dtype == dtypes.float0:
        return ans, ad.Zero(out_aval)
    tangent = convert_element_type_p.bind(
        tangents[0], new_dtype=new_dtype, weak_type=weak_type, sharding=sharding
    )
    return ans, tangent


convert_element_type_p.def_jvp(_convert_element_type_jvp)


def convert_element_type(operand, new_dtype):
    """``operand`` as an array of dtype ``new_dtype`` (not weakly typed). Float to
    integer conversion rounds towards zero; conversion to bool tests for non-zero."""
    new_dtype = dtypes.check_and_canonicalize_user_dtype(new_dtype, "convert_element_type")
    return to_dtype(operand, new_dtype, weak_type=False)


def _convert_element_type_transpose(ct, operand, *, new_dtype, weak_type, sharding):
    """The cotangent converts back to the operand's dtype."""
    aval = operand.aval
    return [convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type,
                                        sharding=None)]  # fmt: skip


convert_element_type_p.def_transpose(_convert_element_type_transpose)


# ------------------------------------------------------------------ bitcast_convert_type


def _bitcast_abstract_eval(x, *, new_dtype):
    old, new = x.dtype, dtypes.dtype(new_dtype)
    if isinstance(old, dtypes.ExtendedDType) or isinstance(new, dtypes.ExtendedDType):
        raise ValueError(f"unexpected input: dtype={old if old != new else new}")
    special = (np.bool_, np.complexfloating)
    if old != new and any(dtypes.issubdtype(d, k) for d in (old, new) for k in special):
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless the "
            f"operand and destination types match. Got operand dtype={old}, "
            f"new_dtype={new!r}. Consider using the arr.view() method instead."
        )
    old_bits, new_bits = old.itemsize * 8, new.itemsize * 8
    shape = tuple(x.shape)
    if new_bits < old_bits:  # each element splits along a new trailing axis
        shape = (*shape, old_bits // new_bits)
    elif new_bits > old_bits:  # the trailing axis joins into one element
        if not shape or shape[-1] * old_bits != new_bits:
            last = shape[-1] if shape else 1
            raise ValueError(
                f"Attempting to convert array of shape {shape} from {old} of size {old_bits} "
                f"bits to {new} of size {new_bits}, bits but {last} * {old_bits} != {new_bits}"
            )
        shape = shape[:-1]
    return ShapedArray(shape, new)


def _bitcast_lowering(ctx, x, *, new_dtype):
    return [hlo.bitcast_convert(ctx.ir_type(ctx.avals_out[0]), x)]


bitcast_convert_type_p = standard_primitive(
    "bitcast_convert_type", _bitcast_abstract_eval, _bitcast_lowering
)
ad.zero_jvp(bitcast_convert_type_p)  # the bits carry no derivative


@bitcast_convert_type_p.def_sharding
def _bitcast_sharding(x, *, new_dtype):
    """A narrower type adds an unsplit last dimension; a wider one drops it."""
    old, new = dtypes.itemsize_bits(x.dtype), dtypes.itemsize_bits(new_dtype)
    spec = spec_of(x)
    return spec if old == new else (*spec, None) if old > new else spec[:-1]


def _bitcast_batching(axis_data, vals, dims, *, new_dtype):
    """The batch axis is never the trailing axis a size-changing cast adds or removes."""
    (x,), (d,) = vals, dims
    if d == len(batching.shape_of(x)) - 1:
        x, d = batching.moveaxis(x, d, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


bitcast_convert_type_p.def_batching(_bitcast_batching)


# Over explicit mesh axes the dimensions keep their splits (a dimension of the bytes of
# a wider element, added or removed last, has none).
@bitcast_convert_type_p.def_sharding
def _bitcast_sharding(x, *, new_dtype):
    old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
    spec = spec_of(x)
    return (*spec, None) if new < old else spec[:-1] if new > old else spec


def bitcast_convert_type(operand, new_dtype):
    """``operand``'s bits read as ``new_dtype``. A narrower dtype adds a trailing axis of
    size ``old_bits // new_bits``; a wider one consumes a trailing axis of that size."""
    new_dtype = dtypes.check_and_canonicalize_user_dtype(new_dtype, "bitcast_convert_type")
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)


# ------------------------------------------------------------------ reduce_precision


def _reduce_precision_abstract_eval(x, *, exponent_bits, mantissa_bits):
    check_dtype("reduce_precision", x.dtype, (FLOAT,))
    return x


def _reduce_precision_lowering(ctx, x, *, exponent_bits, mantissa_bits):
    return [hlo.reduce_precision(x, exponent_bits, mantissa_bits)]


reduce_precision_p = standard_primitive(
    "reduce_precision", _reduce_precision_abstract_eval, _reduce_precision_lowering
)
batching.defvectorized(reduce_precision_p)
def_elementwise_sharding(reduce_precision_p)
ad.deflinear(reduce_precision_p)
reduce_precision_p.def_transpose(lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)])


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """``operand`` rounded to a float format with ``exponent_bits`` exponent bits and
    ``mantissa_bits`` mantissa bits (and back to its own dtype)."""
    exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(
            f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}"
        )
    return reduce_precision_p.bind(
        operand, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits
    )


# ==================== shapes: broadcast_in_dim, reshape, transpose, iota
# Shape primitives: broadcast_in_dim, reshape, transpose, and iota.
#
# Params as JAX 0.10.2 names them: ``broadcast_in_dim[shape, broadcast_dimensions,
# sharding]`` (printed without ``shape`` and ``sharding``, and without empty
# ``broadcast_dimensions``), ``reshape[new_sizes, dimensions, sharding]``,
# ``transpose[permutation]``, ``iota[dtype, shape, dimension, sharding]``.


def _ints(xs) -> tuple[int, ...]:
    return tuple(operator.index(x) for x in xs)


def _dims(xs) -> tuple:
    """Sizes of a shape: ints, or symbolic dimensions (shape polymorphism)."""
    return tuple(x if is_symbolic_dim(x) else operator.index(x) for x in xs)


def _is_array(x) -> bool:
    return isinstance(x, Tracer) or hasattr(x, "aval")


# ------------------------------------------------------------------ broadcast_in_dim


def _broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions, sharding):
    dims = broadcast_dimensions
    name = "broadcast_in_dim"
    if any(d < 0 for d in shape):
        raise TypeError(f"{name} shape must have every element be nonnegative, got {shape}.")
    if len(dims) != x.ndim:
        raise TypeError(
            f"{name} broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {dims} for operand ndim {x.ndim}."
        )
    if len(shape) < x.ndim:
        raise TypeError(
            f"{name} target broadcast shape must have equal or higher rank to the operand "
            f"shape; got operand ndim {x.ndim} and target broadcast ndim {len(shape)}."
        )
    if not all(0 <= d < len(shape) for d in dims):
        raise TypeError(
            f"{name} broadcast_dimensions must be a subset of output dimensions, got {dims} "
            f"for operand ndim {x.ndim} and shape {shape}."
        )
    if any(size != 1 and size != shape[d] for size, d in zip(x.shape, dims, strict=True)):
        raise TypeError(
            f"{name} operand dimension sizes must either be 1, or be equal to their "
            "corresponding dimensions in the target broadcast shape; got operand of shape "
            f"{x.shape}, target broadcast shape {shape}, broadcast_dimensions {dims} "
        )
    if len(set(dims)) != len(dims):
        raise TypeError(
            f"{name} broadcast_dimensions must not contain duplicates, got "
            f"broadcast_dimensions {dims}"
        )
    return typed_result(ShapedArray(shape, x.dtype, weak_type=x.weak_type), sharding)


def _broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions, sharding):
    return [ctx.broadcast_in_dim(x, ctx.avals_out[0], broadcast_dimensions)]


def _broadcast_in_dim_pp(params):
    shown = {}
    if params["broadcast_dimensions"]:
        shown["broadcast_dimensions"] = params["broadcast_dimensions"]
    return shown  # the sharding shows in the result's type


def _broadcast_in_dim_complete(params, in_avals, out_avals):
    return {
        "shape": tuple(out_avals[0].shape),
        "broadcast_dimensions": tuple(params.get("broadcast_dimensions", ())),
        "sharding": params.get("sharding"),
    }


broadcast_in_dim_p = standard_primitive(
    "broadcast_in_dim", _broadcast_in_dim_abstract_eval, _broadcast_in_dim_lowering
)
broadcast_in_dim_p.def_pp_params(_broadcast_in_dim_pp, _broadcast_in_dim_complete)


@broadcast_in_dim_p.def_sharding
def _broadcast_in_dim_sharding(x, *, shape, broadcast_dimensions, sharding):
    """A kept dimension keeps its split; new and stretched ones are not split."""
    if sharding is not None:
        return tuple(sharding.spec) + (None,) * (len(shape) - len(sharding.spec))
    out = [None] * len(shape)
    for e, n, d in zip(spec_of(x), x.shape, broadcast_dimensions, strict=True):
        if n == shape[d]:
            out[d] = e
    return tuple(out)


def _broadcast_in_dim_batching(axis_data, vals, dims, *, shape, broadcast_dimensions, sharding):
    """The batch axis goes into the result just after the dimension its predecessor
    maps to, so increasing ``broadcast_dimensions`` stay increasing and nothing moves."""
    (x,), (d,) = vals, dims
    bd = broadcast_dimensions
    if list(bd) != sorted(bd):
        x, d = batching.moveaxis(x, d, 0), 0
    q = bd[d - 1] + 1 if d > 0 else 0
    new_dims = (*bd[:d], q, *(b + 1 for b in bd[d:]))
    new_shape = (*shape[:q], axis_data.size, *shape[q:])
    out = broadcast_in_dim_p.bind(
        x, shape=new_shape, broadcast_dimensions=new_dims, sharding=sharding
    )
    return out, q


broadcast_in_dim_p.def_batching(_broadcast_in_dim_batching)


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """Broadcast ``operand`` to ``shape``: its dimension ``i`` becomes dimension
    ``broadcast_dimensions[i]`` of the result (where it has size 1 or that size)."""
    shape, dims = _dims(shape), _ints(broadcast_dimensions)
    if (
        _is_array(operand)
        and out_sharding is None
        and aval_of(operand).shape == shape
        and dims == tuple(range(len(shape)))
    ):
        return operand
    return broadcast_in_dim_p.bind(
        operand,
        shape=shape,
        broadcast_dimensions=dims,
        sharding=out_type_sharding(out_sharding, "broadcast_in_dim"),
    )


ad.deflinear(broadcast_in_dim_p)


def _zeros(aval):
    """Zeros of type ``aval``, as JAX builds them: a scalar zero, broadcast."""
    if aval.dtype == dtypes.float0:  # not an array type: a constant of the program
        zero = np.zeros((), dtypes.float0)
    else:
        zero = device_put_value(np.zeros((), aval.dtype), weak_type=aval.weak_type)
    if not aval.shape:
        return zero
    return broadcast_in_dim_p.bind(zero, shape=tuple(aval.shape), broadcast_dimensions=(),
                                   sharding=aval.type_sharding)  # fmt: skip


ad.register_zeros_maker(_zeros)  # symbolic zero tangents, made real where needed


# ------------------------------------------------------------------ reshape


def _reshape_abstract_eval(x, *, new_sizes, dimensions, sharding):
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if math.prod(new_sizes) != math.prod(x.shape):
        raise TypeError(
            f"reshape total size must be unchanged, got new_sizes {new_sizes} (of total "
            f"size {math.prod(new_sizes)}) for shape {x.shape} (of total size "
            f"{math.prod(x.shape)})."
        )
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(
            "reshape dimensions must be a permutation of operand dimensions, got "
            f"dimensions {dimensions} for shape {x.shape}."
        )
    return typed_result(ShapedArray(new_sizes, x.dtype, weak_type=x.weak_type), sharding)


def _reshape_lowering(ctx, x, *, new_sizes, dimensions, sharding):
    if dimensions is not None:
        x = hlo.transpose(x, list(dimensions))
    aval_out = ctx.avals_out[0]
    if not is_constant_shape(aval_out.shape):
        return [
            hlo.dynamic_reshape(
                ctx.ir_type(aval_out), x, eval_dynamic_shape_as_tensor(ctx, aval_out.shape)
            )
        ]
    return [hlo.reshape(ctx.ir_type(aval_out), x)]


reshape_p = standard_primitive("reshape", _reshape_abstract_eval, _reshape_lowering)


@reshape_p.def_sharding
def _reshape_sharding(x, *, new_sizes, dimensions, sharding):
    """Dimensions kept keep their splits; dimensions merged into one keep the major
    one's split; a dimension split into several gives its split to the first (when
    that divides evenly). Other reshapes of split operands need ``out_sharding``."""
    if sharding is not None:
        return tuple(sharding.spec) + (None,) * (len(new_sizes) - len(sharding.spec))
    spec, sizes = spec_of(x), x.type_sharding.mesh.shape
    old = [i for i, d in enumerate(x.shape) if d != 1]
    new = [j for j, d in enumerate(new_sizes) if d != 1]
    out = [None] * len(new_sizes)
    i = j = 0
    while i < len(old) and j < len(new):
        i1, j1 = i + 1, j + 1
        a, b = x.shape[old[i]], new_sizes[new[j]]
        while a != b:
            if a < b:
                a, i1 = a * x.shape[old[i1]], i1 + 1
            else:
                b, j1 = b * new_sizes[new[j1]], j1 + 1
        entries = [spec[old[k]] for k in range(i, i1)]
        if any(e is not None for e in entries):
            names = entries[0] if isinstance(entries[0], tuple) else (entries[0],)
            ways = math.prod(sizes[n] for n in names if n is not None)
            ok = dimensions is None and entries[0] is not None
            ok = ok and all(e is None for e in entries[1:]) and (i1 - i == 1 or j1 - j == 1)
            if not ok or new_sizes[new[j]] % ways:
                raise ShardingTypeError(
                    "This reshape is not supported. Please specify the sharding of the output "
                    "via the `out_sharding` argument of jax.lax.reshape. Got operand type: "
                    f"{x.str_short()}, new sizes: {tuple(new_sizes)}"
                )
            out[new[j]] = entries[0]
        i, j = i1, j1
    return tuple(out)


def _reshape_batching(axis_data, vals, dims, *, new_sizes, dimensions, sharding):
    """Reshapes read row-major, so the batch axis goes first."""
    x = batching.moveaxis(vals[0], dims[0], 0)
    dimensions = None if dimensions is None else (0, *(i + 1 for i in dimensions))
    new_sizes = (axis_data.size, *new_sizes)
    return reshape_p.bind(x, new_sizes=new_sizes, dimensions=dimensions, sharding=sharding), 0


reshape_p.def_batching(_reshape_batching)


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """``operand`` with shape ``new_sizes``; with ``dimensions``, its axes are first
    permuted into that order."""
    new_sizes = _dims(
        (new_sizes,) if isinstance(new_sizes, int) or is_symbolic_dim(new_sizes) else new_sizes
    )
    ndim = aval_of(operand).ndim
    dims = None if dimensions is None else _ints(dimensions)
    if dims == tuple(range(ndim)):
        dims = None
    if (
        _is_array(operand)
        and dims is None
        and out_sharding is None
        and aval_of(operand).shape == new_sizes
    ):
        return operand
    sharding = out_type_sharding(out_sharding, "reshape")
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims, sharding=sharding)


ad.deflinear(reshape_p)


# ------------------------------------------------------------------ transpose


def _transpose_abstract_eval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {permutation} for operand shape {x.shape}."
        )
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, weak_type=x.weak_type)


def _transpose_lowering(ctx, x, *, permutation):
    attributes = {"permutation": i64_array(permutation)}
    return [
        operation("stablehlo.transpose", [ctx.ir_type(ctx.avals_out[0])], [x], attributes).result
    ]


transpose_p = standard_primitive("transpose", _transpose_abstract_eval, _transpose_lowering)
transpose_p.def_sharding(lambda x, *, permutation: tuple(spec_of(x)[p] for p in permutation))


def _transpose_batching(axis_data, vals, dims, *, permutation):
    """One transpose still: it also brings the batch axis to the front."""
    d = dims[0]
    perm = (d, *(p + (p >= d) for p in permutation))
    return transpose_p.bind(vals[0], permutation=perm), 0


transpose_p.def_batching(_transpose_batching)


def transpose(operand, permutation):
    """``operand`` with its axes permuted: result axis ``i`` is ``permutation[i]``."""
    permutation = _ints(permutation)
    if _is_array(operand) and permutation == tuple(range(aval_of(operand).ndim)):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


ad.deflinear(transpose_p)


# ------------------------------------------------------------------ iota


def _iota_abstract_eval(*, dtype, shape, dimension, sharding):
    check_dtype("iota", dtype, NUMERIC)
    if any(d < 0 for d in shape):
        raise TypeError(f"iota shape must have every element be nonnegative, got {shape}.")
    if not 0 <= dimension < len(shape):
        raise ValueError(
            "iota dimension must be between 0 and len(shape), got "
            f"dimension={dimension} for shape={shape}"
        )
    return typed_result(ShapedArray(shape, dtype), sharding)


def _iota_lowering(ctx, *, dtype, shape, dimension, sharding):
    if not is_constant_shape(shape):
        return [
            hlo.dynamic_iota(
                ctx.ir_type(ctx.avals_out[0]), eval_dynamic_shape_as_tensor(ctx, shape), dimension
            )
        ]
    return [hlo.iota(ctx.ir_type(ctx.avals_out[0]), dimension)]


iota_p = standard_primitive("iota", _iota_abstract_eval, _iota_lowering)
# iota has no operands, so vmap never batches it: its rule only binds it unbatched.
iota_p.def_batching(lambda axis_data, vals, dims, **params: (iota_p.bind(**params), None))


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """An array of ``shape`` counting 0, 1, ... along ``dimension``."""
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "broadcasted_iota")
    return iota_p.bind(
        dtype=dtype,
        shape=_dims(shape),
        dimension=operator.index(dimension),
        sharding=out_type_sharding(out_sharding, "broadcasted_iota"),
    )


def iota(dtype, size):
    """``[0, 1, ..., size - 1]`` as an array of ``dtype``."""
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "broadcasted_iota")
    return iota_p.bind(dtype=dtype, shape=_dims((size,)), dimension=0, sharding=None)


ad.zero_jvp(iota_p)  # no operands: never differentiated


# vmap moves and broadcasts batch axes with these (and numbers the elements of custom
# vmappable types with ``iota``).
batching.shape_ops["transpose"] = transpose
batching.shape_ops["broadcast_in_dim"] = broadcast_in_dim
batching.shape_ops["iota"] = iota


# ------------------------------------------------------------------ transposes (reverse mode)


def _broadcast_in_dim_transpose(ct, operand, *, shape, broadcast_dimensions, sharding):
    """Sums the cotangent over the new axes and the stretched size-1 axes."""

    in_shape = operand.aval.shape
    bd = broadcast_dimensions
    stretched = [bd[i] for i, d in enumerate(in_shape) if d == 1 and shape[bd[i]] != 1]
    new_axes = [i for i in range(len(shape)) if i not in bd]
    axes = tuple(sorted(new_axes + stretched))
    out = reduce_sum(ct, axes) if axes else ct
    if stretched:
        out = reshape(out, in_shape)
    return [out]


def _reshape_transpose(ct, operand, *, new_sizes, dimensions, sharding):
    shape = operand.aval.shape
    if dimensions is None:  # typed as the operand is, as in JAX
        return [reshape(ct, shape, out_sharding=operand.aval.type_sharding)]
    permuted = tuple(shape[d] for d in dimensions)
    return [transpose(reshape(ct, permuted), tuple(np.argsort(dimensions)))]


def _transpose_transpose(ct, operand, *, permutation):
    return [transpose(ct, tuple(int(i) for i in np.argsort(permutation)))]


broadcast_in_dim_p.def_transpose(_broadcast_in_dim_transpose)
reshape_p.def_transpose(_reshape_transpose)
transpose_p.def_transpose(_transpose_transpose)


# ==================== reductions over axes
# Reductions over axes: ``reduce_sum[axes, out_sharding]``, ``reduce_max``,
# ``reduce_min``, ``reduce_prod``, ``reduce_and``, ``reduce_or``, ``reduce_xor`` (params
# ``axes``), ``argmax``/``argmin`` (``axes``, ``index_dtype``), as JAX 0.10.2 names them.
# The general ``reduce`` with a user computation is in :mod:`.reduce`.


def _reduced_aval(name, x, axes, accepted) -> ShapedArray:
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    if not all(0 <= a < x.ndim for a in axes):
        raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for {x}.")
    if accepted is not ANY:
        check_dtype(name, x.dtype, (accepted,))
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


# Identities: where each monoid's reduction starts (also the padding of windows).


def max_identity(dtype) -> np.ndarray:
    """The smallest value of ``dtype``: where a maximum starts."""
    if dtype == dtypes.bool_:
        return np.array(False)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(-np.inf, dtype)
    return np.array(dtypes.iinfo(dtype).min, dtype)


def min_identity(dtype) -> np.ndarray:
    """The largest value of ``dtype``: where a minimum starts."""
    if dtype == dtypes.bool_:
        return np.array(True)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(np.inf, dtype)
    return np.array(dtypes.iinfo(dtype).max, dtype)


def and_identity(dtype) -> np.ndarray:
    """All bits set."""
    if dtype == dtypes.bool_:
        return np.array(True)
    return (
        np.array(-1).astype(dtype)
        if dtypes.issubdtype(dtype, np.signedinteger)
        else (np.array(dtypes.iinfo(dtype).max, dtype))
    )


def reduce_region(op, scalar_types, body):
    """Fills the region of a reduce-like ``op``: ``body(*block_args)`` returns the
    values the region yields."""
    block = op.regions[0].blocks.append(*scalar_types, *scalar_types)
    with ir.InsertionPoint(block):
        hlo.return_(list(body(*block.arguments)))


def _reduce(ctx, x, axes, init_value, combine_name):
    """``stablehlo.reduce`` of ``x`` over ``axes`` from the NumPy scalar ``init_value``
    with the elementwise op ``combine_name`` (the most frequent reduction: kept lean)."""
    init = ctx.constant(init_value)
    attributes = {"dimensions": i64_array(axes)}
    op = operation("stablehlo.reduce", [ctx.ir_type(ctx.avals_out[0])], [x, init], attributes, 1)
    scalar_type = init.type
    block = op.regions[0].blocks.append(scalar_type, scalar_type)
    with ir.InsertionPoint(block):
        operation("stablehlo.return", [], [elementwise(combine_name, *block.arguments)])
    return [op.result]


_LOGICAL = "logical"


def _monoid(name, accepted, identity, combine, params=("axes",)):
    """A reduction primitive ``name`` folding ``combine`` from ``identity(dtype)``."""

    def abstract_eval(x, *, axes, **_):
        if accepted == _LOGICAL:
            if not (x.dtype == dtypes.bool_ or dtypes.issubdtype(x.dtype, np.integer)):
                raise TypeError(
                    f"logical reduction requires operand dtype bool or int, got {x.dtype.name}."
                )
            return _reduced_aval(name, x, axes, ANY)
        return _reduced_aval(name, x, axes, accepted)

    op_name = f"stablehlo.{combine.rstrip('_')}"

    def lowering(ctx, x, *, axes, **_):
        return _reduce(ctx, x, axes, identity(ctx.avals_in[0].dtype), op_name)

    def sharding_rule(x, *, axes, **_):  # the kept dimensions keep their splits
        return tuple(e for i, e in enumerate(spec_of(x)) if i not in axes)

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defreducer(prim)  # vmap: the axes shift past the batch dim
    prim.def_sharding(sharding_rule)
    return prim


reduce_sum_p = _monoid("reduce_sum", NUMBER, lambda d: np.zeros((), d), "add")
reduce_max_p = _monoid("reduce_max", ANY, max_identity, "maximum")
reduce_min_p = _monoid("reduce_min", ANY, min_identity, "minimum")
reduce_prod_p = _monoid("reduce_prod", NUMBER, lambda d: np.ones((), d), "multiply")
reduce_and_p = _monoid("reduce_and", _LOGICAL, and_identity, "and_")
reduce_or_p = _monoid("reduce_or", _LOGICAL, lambda d: np.zeros((), d), "or_")
reduce_xor_p = _monoid("reduce_xor", _LOGICAL, lambda d: np.zeros((), d), "xor")


def _axes(axes) -> tuple[int, ...]:
    return tuple(operator.index(a) for a in axes)


def reduce_sum(operand, axes, *, out_sharding=None):
    """The sum of ``operand`` over ``axes``."""
    return reduce_sum_p.bind(operand, axes=_axes(axes), out_sharding=out_sharding)


def reduce_max(operand, axes):
    """The maximum of ``operand`` over ``axes`` (NaN propagates)."""
    return reduce_max_p.bind(operand, axes=_axes(axes))


def reduce_min(operand, axes):
    """The minimum of ``operand`` over ``axes`` (NaN propagates)."""
    return reduce_min_p.bind(operand, axes=_axes(axes))


def reduce_prod(operand, axes):
    """The product of ``operand`` over ``axes``."""
    return reduce_prod_p.bind(operand, axes=_axes(axes))


def reduce_and(operand, axes):
    """Bitwise (logical, for booleans) AND of ``operand`` over ``axes``."""
    return reduce_and_p.bind(operand, axes=_axes(axes))


def reduce_or(operand, axes):
    """Bitwise (logical, for booleans) OR of ``operand`` over ``axes``."""
    return reduce_or_p.bind(operand, axes=_axes(axes))


def reduce_xor(operand, axes):
    """Bitwise (logical, for booleans) XOR of ``operand`` over ``axes``."""
    return reduce_xor_p.bind(operand, axes=_axes(axes))


# ------------------------------------------------------------------ differentiation


def _kept(shape, axes):
    return tuple(i for i in range(len(shape)) if i not in axes)


def _chooser_jvp(prim):
    """The tangent at the extremum; where several elements tie for it, their mean."""

    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        if ad.is_zero(t):
            return ans, ad.Zero(ad.tangent_aval(aval_of(ans)))
        kept_shape = tuple(1 if i in axes else d for i, d in enumerate(aval_of(x).shape))
        at_ext = eq(x, reshape(ans, kept_shape))
        at_ext = convert_element_type(at_ext, dtypes.dtype(t))
        counts = reduce_sum_p.bind(at_ext, axes=axes, out_sharding=None)
        picked = reduce_sum_p.bind(mul(t, at_ext), axes=axes, out_sharding=None)
        return ans, div(picked, counts)

    prim.def_jvp(jvp)


_chooser_jvp(reduce_max_p)
_chooser_jvp(reduce_min_p)
ad.deflinear(reduce_sum_p)
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p):
    ad.zero_jvp(_p)  # integer and boolean results


# reduce_prod's JVP is defined in reduce.py, by the tree reduction there.


def _reduce_sum_transpose(ct, operand, *, axes, out_sharding):
    """The cotangent broadcasts back over the summed axes."""

    aval = operand.aval  # typed as the operand is, as in JAX
    if not axes:
        return [broadcast_in_dim(ct, aval.shape, _kept(aval.shape, axes),
                                 out_sharding=aval.type_sharding)]  # fmt: skip
    # the kept axes as NumPy integers, as JAX computes (and prints) them
    dims = tuple(np.int64(d) for d in _kept(aval.shape, axes))
    sharding = out_type_sharding(aval.type_sharding, "broadcast_in_dim")
    return [
        broadcast_in_dim_p.bind(
            ct, shape=tuple(aval.shape), broadcast_dimensions=dims, sharding=sharding
        )
    ]


reduce_sum_p.def_transpose(_reduce_sum_transpose)


# ------------------------------------------------------------------ argmax / argmin


def _arg_abstract_eval(name):
    def abstract_eval(x, *, axes, index_dtype):
        (axis,) = axes
        if not 0 <= axis < x.ndim:
            raise ValueError(f"Invalid axis {axis} for operand shape {x.shape}")
        if x.shape[axis] == 0:
            raise ValueError(
                "argmin and argmax require non-empty reduced dimension. "
                f"operand.shape={x.shape} axis={axis}"
            )
        if not dtypes.issubdtype(index_dtype, np.integer):
            raise TypeError(
                f"index_dtype must be an integer type, but got {dtypes.dtype(index_dtype).name}"
            )
        if x.dtype != dtypes.bool_:
            check_dtype(
                "gt" if name == "argmax" else "lt",
                x.dtype,
                (INT, FLOAT, ("bool", np.bool_)),
                position=0,
            )
        shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        return ShapedArray(shape, index_dtype)

    return abstract_eval


def compare_hlo(a, b, direction, dtype):
    kind = hlo.ComparisonTypeAttr.get(_compare_type(dtype))
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction), compare_type=kind)


def _arg_lowering(direction, identity):
    """A two-operand reduce of (value, index) pairs: the better value wins (NaN beats
    everything, as the first NaN is the answer); on a tie the smaller index."""

    def lowering(ctx, x, *, axes, index_dtype):
        (axis,) = axes
        aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
        dtype = aval_in.dtype
        index_aval = ShapedArray(aval_in.shape, index_dtype)
        iota = ctx.iota(index_aval, axis)
        value_scalar, index_scalar = ShapedArray((), dtype), ShapedArray((), index_dtype)
        inits = [
            ctx.constant(identity(dtype), value_scalar),
            ctx.constant(np.zeros((), index_dtype), index_scalar),
        ]
        value_out = ShapedArray(aval_out.shape, dtype)
        op = hlo.ReduceOp(ctx.ir_types([value_out, aval_out]), [x, iota], inits, [axis])

        def body(a, ia, b, ib):
            pick = compare_hlo(a, b, direction, dtype)
            if dtypes.issubdtype(dtype, np.inexact):
                pick = hlo.or_(pick, compare_hlo(a, a, "NE", dtype))
            tie = hlo.and_(compare_hlo(a, b, "EQ", dtype), compare_hlo(ia, ib, "LT", index_dtype))
            return [hlo.select(pick, a, b), hlo.select(hlo.or_(pick, tie), ia, ib)]

        reduce_region(op, ctx.ir_types([value_scalar, index_scalar]), body)
        return [op.results[1]]

    return lowering


argmax_p = standard_primitive(
    "argmax", _arg_abstract_eval("argmax"), _arg_lowering("GT", max_identity)
)
argmin_p = standard_primitive(
    "argmin", _arg_abstract_eval("argmin"), _arg_lowering("LT", min_identity)
)
for _p in (argmax_p, argmin_p):
    batching.defreducer(_p)
    ad.zero_jvp(_p)  # integer results
    _p.def_sharding(
        lambda x, *, axes, **_: tuple(e for i, e in enumerate(spec_of(x)) if i != axes[0])
    )


def _arg(prim, operand, axis, index_dtype):
    dtype = dtypes.check_and_canonicalize_user_dtype(index_dtype, prim.name)
    return prim.bind(operand, axes=(operator.index(axis),), index_dtype=dtype)


def argmax(operand, axis, index_dtype):
    """The index of the largest element along ``axis`` (the first, on ties; the first
    NaN, if any)."""
    return _arg(argmax_p, operand, axis, index_dtype)


def argmin(operand, axis, index_dtype):
    """The index of the smallest element along ``axis`` (the first, on ties; the first
    NaN, if any)."""
    return _arg(argmin_p, operand, axis, index_dtype)


# ---------------------------------------------------------------- select and dtype


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` holds, else ``on_false`` (``select_n`` with the
    cases in the other order)."""
    return select_n(pred, on_false, on_true)


def dtype(x):
    """The canonical dtype of a value or a type (``lax.dtype(1.0)`` is float32)."""
    return dtypes.canonicalize_dtype(dtypes.dtype(x))
