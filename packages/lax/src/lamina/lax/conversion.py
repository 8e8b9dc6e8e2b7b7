"""``convert_element_type``: changing an array's dtype (and weak type);
``bitcast_convert_type`` (reading the bits as another dtype) and ``reduce_precision``.

Params, as JAX 0.10.2 names them: ``new_dtype``, ``weak_type``, ``sharding``. JAX prints
the equation without ``sharding`` when it is None.
"""

from __future__ import annotations

import operator

import numpy as np

from lamina.interpreters import Tracer, ad, batching, device_put_value
from lamina.ir import ShapedArray, dtypes
from lamina.lax._common import FLOAT, aval_of, check_dtype, standard_primitive

__all__ = [
    "bitcast_convert_type",
    "bitcast_convert_type_p",
    "convert_element_type",
    "convert_element_type_p",
    "reduce_precision",
    "reduce_precision_p",
]


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
        from lamina.lax.elementwise import compare

        zero = ctx.constant(np.zeros((), aval_in.dtype), aval_in.update(shape=()))
        zero = ctx.broadcast_in_dim(zero, aval_in, ())
        cmp_ctx = ctx.replace(avals_in=[aval_in, aval_in])
        return [compare(cmp_ctx, x, zero, "NE")]
    return [ctx.convert(x, aval_in, aval_out)]


convert_element_type_p = standard_primitive("convert_element_type", _abstract_eval, _lowering)
batching.defvectorized(convert_element_type_p)
convert_element_type_p.def_pp_params(
    lambda params: {k: v for k, v in params.items() if not (k == "sharding" and v is None)},
    lambda params, in_avals, out_avals: {"sharding": None, **params},
)


def to_dtype(operand, new_dtype, weak_type: bool = False, sharding=None):
    """Convert ``operand`` to ``new_dtype`` (already canonical) with ``weak_type``.
    Host values (Python and NumPy scalars and arrays) are converted on the host, as JAX
    folds them; an array already of that type is returned as it is."""
    new_dtype = dtypes.dtype(new_dtype)
    if not (isinstance(operand, Tracer) or hasattr(operand, "aval")):
        value = np.asarray(operand).astype(new_dtype)
        return device_put_value(value, weak_type=weak_type)
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
    from lamina.interpreters.mlir import hlo

    return [hlo.bitcast_convert(ctx.ir_type(ctx.avals_out[0]), x)]


bitcast_convert_type_p = standard_primitive(
    "bitcast_convert_type", _bitcast_abstract_eval, _bitcast_lowering
)
ad.zero_jvp(bitcast_convert_type_p)  # the bits carry no derivative


def _bitcast_batching(axis_data, vals, dims, *, new_dtype):
    """The batch axis is never the trailing axis a size-changing cast adds or removes."""
    (x,), (d,) = vals, dims
    if d == len(batching.shape_of(x)) - 1:
        x, d = batching.moveaxis(x, d, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


bitcast_convert_type_p.def_batching(_bitcast_batching)


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
    from lamina.interpreters.mlir import hlo

    return [hlo.reduce_precision(x, exponent_bits, mantissa_bits)]


reduce_precision_p = standard_primitive(
    "reduce_precision", _reduce_precision_abstract_eval, _reduce_precision_lowering
)
batching.defvectorized(reduce_precision_p)
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
