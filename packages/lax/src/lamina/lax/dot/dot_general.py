"""``dot_general`` (and ``dot``): contractions of two arrays.

Params as JAX 0.10.2 names them: ``dimension_numbers`` (``((lhs_contracting,
rhs_contracting), (lhs_batch, rhs_batch))``, tuples), ``precision`` (None or a pair of
``Precision``), ``preferred_element_type`` (a dtype or None) and ``out_sharding``. JAX
prints the params that are not None, with the dimension numbers as lists.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from lamina.interpreters import config, reverse
from lamina.interpreters.mlir import hlo, ir
from lamina.ir import ShapedArray, ShardingTypeError, dtypes, register_value_reader, spec_of
from lamina.lax.base.bilinear import bilinear_jvp
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import convert_element_type, transpose

__all__ = [
    "DotAlgorithm",
    "DotAlgorithmPreset",
    "DotDimensionNumbers",
    "Precision",
    "PrecisionLike",
    "batch_matmul",
    "dot",
    "dot_general",
    "dot_general_p",
]


class Precision(enum.Enum):
    """How precise a matrix product on an accelerator is (CPU ignores it)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


class DotAlgorithmPreset(enum.Enum):
    """Named algorithms for a matrix product's input, accumulation and output types
    (an accelerator's choice; accepted for compatibility)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return self.name

    __str__ = __repr__


class DotAlgorithm(NamedTuple):
    """An explicit algorithm for a matrix product: the types its inputs are rounded to,
    the accumulation type, and how many components and primitive products it uses."""

    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]
PrecisionLike = (
    None
    | str
    | Precision
    | tuple[str, str]
    | tuple[Precision, Precision]
    | DotAlgorithm
    | DotAlgorithmPreset
)

# The Jaxpr parser reads ``Precision.HIGHEST`` back as the enum member.
register_value_reader("Precision", lambda text: Precision[text.split(".", 1)[1]])

_PRECISION_NAMES = {
    "default": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "high": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
}


def _one_precision(p):
    if isinstance(p, Precision):
        return p
    if isinstance(p, str) and p.lower() in _PRECISION_NAMES:
        return _PRECISION_NAMES[p.lower()]
    return None


def canonicalize_precision(precision):
    """None, a pair of ``Precision`` for the two operands, or a ``DotAlgorithmPreset`` /
    ``DotAlgorithm`` (kept as given; presets may be named by their member name). None
    takes the ``jax_default_matmul_precision`` option's value when it is set."""
    if precision is None:
        default = config.jax_default_matmul_precision
        return None if default is None else canonicalize_precision(default)
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return precision
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    one = _one_precision(precision)
    if one is not None:
        return (one, one)
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        pair = tuple(_one_precision(p) for p in precision)
        if None not in pair:
            return pair
    raise ValueError(
        "Precision argument must be one of:\n- None,\n- a string in ['highest', 'float32', "
        "'high', 'bfloat16_3x', 'tensorfloat32', 'default', 'bfloat16', 'fastest', None],\n"
        "- a lax.Precision value,\n- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        f"- a lax.DotAlgorithm value;\nbut got {precision}."
    )


def precision_config(precision):
    """The ``precision_config`` attribute of a product (DEFAULT for an algorithm)."""
    if not isinstance(precision, tuple) or isinstance(precision, DotAlgorithm):
        precision = (Precision.DEFAULT, Precision.DEFAULT)
    return ir.ArrayAttr.get([hlo.PrecisionAttr.get(p.name) for p in precision])


# The presets XLA's CPU backend runs: the operand types each accepts (others are
# converted to the first), its accumulation type, and its algorithm attribute's
# (lhs, rhs, accumulation) types and number of primitive products. JAX refuses the
# other presets on CPU.
_CPU_PRESETS = {
    DotAlgorithmPreset.F16_F16_F16: (("float16",), "float16", ("f16", "f16", "f16"), 1),
    DotAlgorithmPreset.BF16_BF16_F32: (
        ("bfloat16", "float32"), "float32", ("bf16", "bf16", "f32"), 1
    ),
    DotAlgorithmPreset.BF16_BF16_F32_X3: (("float32",), "float32", ("bf16", "bf16", "f32"), 3),
    DotAlgorithmPreset.BF16_BF16_F32_X6: (("float32",), "float32", ("bf16", "bf16", "f32"), 6),
    DotAlgorithmPreset.F32_F32_F32: (("float32",), "float32", ("f32", "f32", "f32"), 1),
    DotAlgorithmPreset.F64_F64_F64: (("float64",), "float64", ("f64", "f64", "f64"), 1),
}  # fmt: skip
_MLIR_FLOATS = {"f16": "F16Type", "bf16": "BF16Type", "f32": "F32Type", "f64": "F64Type"}


def _preset(precision, platform):
    """The CPU table entry of an algorithm precision, or None (no algorithm, or one the
    backend is trusted with); ValueError for one XLA's CPU backend would ignore."""
    if not isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return None
    if precision is DotAlgorithmPreset.DEFAULT:
        return None
    if platform == "cpu" and precision not in _CPU_PRESETS:
        raise ValueError(f"The precision '{precision}' is not supported by dot_general on CPU")
    return _CPU_PRESETS.get(precision)


def _algorithm_attr(types, ops):
    lhs, rhs, acc = (getattr(ir, _MLIR_FLOATS[t]).get() for t in types)
    return hlo.DotAlgorithm.get(lhs, rhs, acc, 1, 1, ops, False)


def check_preferred_element_type(input_dtype, preferred) -> None:
    """JAX's rule for a convolution's ``preferred_element_type`` (``dot_general``
    accepts any): integers may accumulate as integers
    or floats, floats as floats, complex as complex, never in a narrower type."""
    kinds = (np.integer, np.floating, np.complexfloating)

    def kind(dtype):
        if dtypes.issubdtype(dtype, np.bool_):
            return np.integer
        return next((k for k in kinds if dtypes.issubdtype(dtype, k)), None)

    k_in, k_out = kind(input_dtype), kind(preferred)
    allowed = {(np.integer, np.integer), (np.integer, np.floating),
               (np.floating, np.floating), (np.complexfloating, np.complexfloating)}  # fmt: skip
    if (k_in, k_out) not in allowed:
        raise TypeError(
            "Input type is incompatible with `preferred_element_type`. The compatible "
            "combinations of (input_type, preferred_element_type) are (integral, integral), "
            "(integral, floating), (floating, floating), (complex, complex."
        )
    if k_in is k_out and np.dtype(preferred).itemsize < np.dtype(input_dtype).itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original type.")


def _check_dims(side, aval, batch, contracting):
    if not all(0 <= d < aval.ndim for d in (*batch, *contracting)):
        raise TypeError(
            f"dot_general requires {side} dimension numbers to be nonnegative and less than "
            f"the number of axes of the {side} value, got {side}_batch of {batch} and "
            f"{side}_contracting of {contracting} for {side} of rank {aval.ndim}"
        )


def _abstract_eval(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                   out_sharding):  # fmt: skip
    (lc, rc), (lb, rb) = dimension_numbers
    if len(lb) != len(rb):
        raise TypeError(
            "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, "
            f"got lhs_batch {lb} and rhs_batch {rb}."
        )
    _check_dims("lhs", lhs, lb, lc)
    _check_dims("rhs", rhs, rb, rc)
    lhs_batch = tuple(lhs.shape[d] for d in lb)
    rhs_batch = tuple(rhs.shape[d] for d in rb)
    if lhs_batch != rhs_batch:
        raise TypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
            f"same shape, got {lhs_batch} and {rhs_batch}."
        )
    lhs_con = tuple(lhs.shape[d] for d in lc)
    rhs_con = tuple(rhs.shape[d] for d in rc)
    if lhs_con != rhs_con:
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{lhs_con} and {rhs_con}."
        )
    lhs_free = tuple(d for i, d in enumerate(lhs.shape) if i not in (*lb, *lc))
    rhs_free = tuple(d for i, d in enumerate(rhs.shape) if i not in (*rb, *rc))
    if preferred_element_type is not None:
        dtype, weak = preferred_element_type, False
    else:
        dtype = dtypes.promote_types(lhs.dtype, rhs.dtype)
        weak = lhs.weak_type and rhs.weak_type
    return ShapedArray(lhs_batch + lhs_free + rhs_free, dtype, weak_type=weak)


def _lowering(ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
              out_sharding):  # fmt: skip
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_aval, rhs_aval = ctx.avals_in
    aval_out = ctx.avals_out[0]
    preset = _preset(precision, ctx.platform)
    algorithm, acc_aval = None, aval_out
    if preset is not None:  # operands in types the algorithm takes, its own accumulation
        accepted, acc, types, ops = preset
        lhs, rhs = (
            x
            if aval.dtype in accepted
            else ctx.convert(x, aval, aval.update(dtype=np.dtype(accepted[0])))
            for x, aval in ((lhs, lhs_aval), (rhs, rhs_aval))
        )
        algorithm = _algorithm_attr(types, ops)
        acc_aval = aval_out.update(dtype=np.dtype(acc), weak_type=False)
    elif lhs_aval.dtype != rhs_aval.dtype:  # mixed inputs: both in the result's dtype
        lhs = ctx.convert(lhs, lhs_aval, aval_out)
        rhs = ctx.convert(rhs, rhs_aval, aval_out)
    numbers = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lb),
        rhs_batching_dimensions=list(rb),
        lhs_contracting_dimensions=list(lc),
        rhs_contracting_dimensions=list(rc),
    )
    out = hlo.dot_general(
        ctx.ir_type(acc_aval), lhs, rhs, numbers,
        precision_config=precision_config(precision), algorithm=algorithm,
    )  # fmt: skip
    return [out if acc_aval.dtype == aval_out.dtype else ctx.convert(out, acc_aval, aval_out)]


def _pp_params(params):
    # out_sharding shows in the result's type, as JAX prints it
    shown = {k: v for k, v in params.items() if v is not None and k != "out_sharding"}
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    shown["dimension_numbers"] = ((list(lc), list(rc)), (list(lb), list(rb)))
    return shown


def _complete_params(params, in_avals, out_avals):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    precision = params.get("precision")
    return {
        "dimension_numbers": ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))),
        "precision": None
        if precision is None
        else canonicalize_precision(tuple(precision) if isinstance(precision, list) else precision),
        "preferred_element_type": params.get("preferred_element_type"),
        "out_sharding": params.get("out_sharding"),
    }


dot_general_p = standard_primitive("dot_general", _abstract_eval, _lowering)
dot_general_p.def_pp_params(_pp_params, _complete_params)


@dot_general_p.def_sharding
def _sharding_rule(lhs, rhs, *, dimension_numbers, out_sharding, **_):
    """Batch dimensions, then the free dimensions of ``lhs`` and ``rhs``, keep their
    splits; contracting dimensions split on both sides need ``out_sharding``."""
    (lc, rc), (lb, rb) = dimension_numbers
    if out_sharding is not None:
        spec = tuple(getattr(out_sharding, "spec", out_sharding))
        ndim = len(lhs.shape) + len(rhs.shape) - len(lb) - 2 * len(lc)
        return spec + (None,) * (ndim - len(spec))
    ls, rs = spec_of(lhs), spec_of(rhs)
    lcs, rcs = tuple(ls[d] for d in lc), tuple(rs[d] for d in rc)
    if any(e is not None for e in lcs) and any(e is not None for e in rcs):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be"
            " sharded. Please specify the output sharding via the `out_sharding` parameter."
            f" Got lhs_contracting_spec={lcs} and rhs_contracting_spec={rcs}"
        )
    batch = tuple(ls[a] if ls[a] is not None else rs[b] for a, b in zip(lb, rb, strict=True))
    lhs_free = tuple(e for i, e in enumerate(ls) if i not in (*lb, *lc))
    rhs_free = tuple(e for i, e in enumerate(rs) if i not in (*rb, *rc))
    spec = batch + lhs_free + rhs_free
    names = [n for e in spec if e is not None for n in (e if isinstance(e, tuple) else (e,))]
    if len(names) != len(set(names)):
        shape = (
            *(lhs.shape[d] for d in lb),
            *(d for i, d in enumerate(lhs.shape) if i not in (*lb, *lc)),
            *(d for i, d in enumerate(rhs.shape) if i not in (*rb, *rc)),
        )
        dims = ",".join(
            f"{d}@{e}" if e is not None else str(d) for d, e in zip(shape, spec, strict=False)
        )
        result = f"{dtypes.short_dtype_name(lhs.dtype)}[{dims}]"
        raise ShardingTypeError(
            f"dot_general operation with inputs: {lhs.str_short(True)}, "
            f"{rhs.str_short(True)} produces an illegally sharded result: {result}"
        )
    return spec


def _batching(axis_data, vals, dims, *, dimension_numbers, **params):
    """Nothing moves: two batched operands gain a batch dimension (the result's first
    axis); one batched operand keeps its batch axis as a free dimension."""
    (lhs, rhs), (ld, rd) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers

    def shift(axes, d):
        return tuple(a + (d is not None and a >= d) for a in axes)

    lc, lb, rc, rb = shift(lc, ld), shift(lb, ld), shift(rc, rd), shift(rb, rd)
    lhs_ndim, rhs_ndim = aval_of(lhs).ndim, aval_of(rhs).ndim
    if ld is not None and rd is not None:
        numbers, out_dim = ((lc, rc), ((ld, *lb), (rd, *rb))), 0
    elif ld is not None:
        lhs_free = [i for i in range(lhs_ndim) if i not in (*lc, *lb)]
        numbers, out_dim = ((lc, rc), (lb, rb)), len(lb) + lhs_free.index(ld)
    else:
        rhs_free = [i for i in range(rhs_ndim) if i not in (*rc, *rb)]
        n_lhs_free = lhs_ndim - len(lc) - len(lb)
        numbers, out_dim = ((lc, rc), (lb, rb)), len(lb) + n_lhs_free + rhs_free.index(rd)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=numbers, **params), out_dim


dot_general_p.def_batching(_batching)


def _canonical_dimension_numbers(dimension_numbers):
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return tuple(
            (tuple(map(operator.index, a)), tuple(map(operator.index, b)))
            for a, b in ((lc, rc), (lb, rb))
        )
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general dimension_numbers must be ((lhs_contracting_dims, "
            "rhs_contracting_dims), (lhs_batch_dims, rhs_batch_dims)), got "
            f"{dimension_numbers!r}"
        ) from None


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                *, out_sharding=None):  # fmt: skip
    """The general contraction: sums ``lhs`` and ``rhs`` over their contracting
    dimensions, batched over their batch dimensions. The result's axes are the batch
    dimensions, then ``lhs``'s free dimensions, then ``rhs``'s."""
    if preferred_element_type is not None:
        preferred_element_type = dtypes.check_and_canonicalize_user_dtype(
            preferred_element_type, "dot_general"
        )
    return dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=_canonical_dimension_numbers(dimension_numbers),
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


dot_general_p.def_jvp(bilinear_jvp(dot_general_p))


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):  # fmt: skip
    """Vector-vector, matrix-vector and matrix-matrix products (``dot_general`` with the
    last axis of ``lhs`` contracted against the first of ``rhs``)."""
    if dimension_numbers is None:
        lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
        if not (
            1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2 and lhs_shape[-1] == rhs_shape[0]
        ):
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing simple "
                "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
                f"lhs_shape={lhs_shape} rhs_shape={rhs_shape}"
            )
        dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
    return dot_general(
        lhs,
        rhs,
        dimension_numbers,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products batched over the leading axes (equal in number and size)."""
    lhs_ndim, rhs_ndim = aval_of(lhs).ndim, aval_of(rhs).ndim
    if min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(
            f"Arguments to batch_matmul must be at least 2D, got {lhs_ndim}, {rhs_ndim}"
        )
    if lhs_ndim != rhs_ndim:
        raise ValueError(
            f"Arguments to batch_matmul must have same ndim, got {lhs_ndim}, {rhs_ndim}"
        )
    batch = tuple(range(lhs_ndim - 2))
    numbers = (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch))
    return dot_general(lhs, rhs, numbers, precision=precision)


def _dot_transpose_operand(ct, other, x_aval, other_aval, x_dims, other_dims, x_is_lhs, params):
    """The cotangent of one operand of ``dot_general``: ``ct`` contracted with the other
    operand over the other's free axes, then transposed to the operand's axis order."""

    (x_c, x_b), (o_c, o_b) = x_dims, other_dims
    nb = len(x_b)
    x_free = [i for i in range(x_aval.ndim) if i not in x_c and i not in x_b]
    o_free = [i for i in range(other_aval.ndim) if i not in o_c and i not in o_b]
    if x_is_lhs:
        ct_o_free = range(nb + len(x_free), nb + len(x_free) + len(o_free))
    else:
        ct_o_free = range(nb, nb + len(o_free))
    numbers = ((tuple(ct_o_free), tuple(o_free)), (tuple(range(nb)), tuple(o_b)))
    labels = [*x_b, *x_free, *[x_c[list(o_c).index(r)] for r in sorted(o_c)]]
    out_sharding = None  # over explicit axes the cotangent is split as the operand
    if x_aval.type_sharding is not None:
        spec = spec_of(x_aval)
        out_sharding = x_aval.type_sharding.update(
            spec=type(x_aval.type_sharding.spec)(*(spec[j] for j in labels))
        )
    res = dot_general_p.bind(ct, other, dimension_numbers=numbers,
                             precision=params.get("precision"),
                             preferred_element_type=params.get("preferred_element_type"),
                             out_sharding=out_sharding)  # fmt: skip
    perm = tuple(labels.index(j) for j in range(x_aval.ndim))
    res = transpose(res, perm)
    if aval_of(res).dtype != x_aval.dtype:
        res = convert_element_type(res, x_aval.dtype)
    return res


def _dot_general_transpose(ct, lhs, rhs, *, dimension_numbers, **params):
    """Linear in one operand at a time: its cotangent contracts ``ct`` with the other."""
    (lc, rc), (lb, rb) = dimension_numbers
    l_undef, r_undef = reverse.is_undefined_primal(lhs), reverse.is_undefined_primal(rhs)
    if l_undef and r_undef:
        raise NotImplementedError("dot_general is not linear in both operands: cannot transpose")
    if l_undef:
        g = _dot_transpose_operand(
            ct, rhs, lhs.aval, aval_of(rhs), (lc, lb), (rc, rb), True, params
        )
        return [g, None]
    g = _dot_transpose_operand(ct, lhs, rhs.aval, aval_of(lhs), (rc, rb), (lc, lb), False, params)
    return [None, g]


dot_general_p.def_transpose(_dot_general_transpose)
