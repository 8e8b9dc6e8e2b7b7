"""``dim_as_value``: a symbolic dimension used as a value in a traced computation
(``x * x.shape[0]``, the count in a mean over a symbolic axis).

The primitive has no operands; its param ``dim`` is the dimension expression and its
result an integer scalar (``int32``, ``int64`` with x64, weakly typed), computed in the
program from the dimension variables. Outside a traced, exported computation there is
no value to give, as in JAX.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters.core.mlir_bindings import hlo
from lamina.interpreters.core.tangents import Zero, tangent_aval
from lamina.interpreters.jaxprs import dim_values
from lamina.interpreters.jaxprs import mlir_builders as mb
from lamina.ir import Primitive, ShapedArray, dtypes, register_dim_as_value

__all__ = ["dim_as_value", "dim_as_value_p"]

dim_as_value_p = Primitive("dim_as_value")


def _abstract_eval(*, dim):
    return ShapedArray((), dtypes.canonicalize_dtype(np.int64), weak_type=True)


def _impl(*, dim):
    raise NotImplementedError(
        "Evaluation rule for 'dim_as_value' is not implemented. "
        "It seems that you are using shape polymorphism outside jax.export."
    )


def _lowering(ctx, *, dim):
    value = dim_values.eval_dim(dim)
    out_type = mb.ir_type(ctx.avals_out[0])
    return [value if value.type == out_type else hlo.convert(out_type, value)]


def _jvp(primals, tangents, *, dim):
    """No operands: an integer with a symbolic zero tangent."""
    return dim_as_value_p.bind(dim=dim), Zero(tangent_aval(_abstract_eval(dim=dim)))


def _batching(axis_data, vals, dims, *, dim):
    """No operands, so nothing is batched: the value is the same for every example."""
    return dim_as_value_p.bind(dim=dim), None


dim_as_value_p.def_abstract_eval(_abstract_eval)
dim_as_value_p.def_impl(_impl)
dim_as_value_p.def_lowering(_lowering)
dim_as_value_p.def_jvp(_jvp)
dim_as_value_p.def_batching(_batching)


def dim_as_value(dim):
    """The value of dimension ``dim`` (an int or a symbolic expression)."""
    if not dim_values.is_static_shape((dim,)):
        return dim_as_value_p.bind(dim=dim)
    return dim


register_dim_as_value(dim_as_value)
