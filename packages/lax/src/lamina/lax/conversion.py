"""``convert_element_type``: changing an array's dtype (and weak type).

Params, as JAX 0.10.2 names them: ``new_dtype``, ``weak_type``, ``sharding``. JAX prints
the equation without ``sharding`` when it is None.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, batching
from lamina.interpreters.tracing import Tracer
from lamina.interpreters.transfer import device_put_value
from lamina.ir import dtypes
from lamina.ir.core import ShapedArray
from lamina.lax._common import aval_of, standard_primitive

__all__ = ["convert_element_type", "convert_element_type_p"]


def _abstract_eval(x, *, new_dtype, weak_type, sharding):
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


def _convert_element_type(operand, new_dtype, weak_type: bool = False, sharding=None):
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
    return _convert_element_type(operand, new_dtype, weak_type=False)


def _convert_element_type_transpose(ct, operand, *, new_dtype, weak_type, sharding):
    """The cotangent converts back to the operand's dtype."""
    aval = operand.aval
    return [convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type,
                                        sharding=None)]  # fmt: skip


convert_element_type_p.def_transpose(_convert_element_type_transpose)
