"""``stop_gradient``: the identity function, treated as a constant by differentiation.

The primitive lives in this layer (JAX keeps it in ``ad_util``) because AD itself
relies on it; ``lamina.lax`` re-exports the user function, as ``jax.lax.stop_gradient``.
It is bound only on float and complex values: integer and boolean values have no
gradient to stop and pass through untouched. Stopping all nested differentiations at
once is done by unwrapping JVP tracers down to their primal before binding, so no
tangent survives at any level.
"""

from __future__ import annotations

import numpy as np

from lamina.interpreters.core.tangents import Zero, tangent_aval
from lamina.interpreters.core.tracing import shaped_abstractify
from lamina.interpreters.transformations.ad import JVPTracer
from lamina.ir import Primitive, dtypes, tree_util

__all__ = ["stop_gradient", "stop_gradient_p"]

stop_gradient_p = Primitive("stop_gradient")


def _stop_gradient_impl(x):
    try:
        shaped_abstractify(x)
    except TypeError:
        raise TypeError(
            f"stop_gradient only works on valid JAX arrays, but input argument is: {x}"
        ) from None
    return x


def _stop_gradient_jvp(primals, tangents):
    (x,) = primals
    return stop_gradient(x), Zero(tangent_aval(shaped_abstractify(x)))


def _stop_gradient_batching(axis_data, vals, dims):
    return stop_gradient(vals[0]), dims[0]


stop_gradient_p.def_abstract_eval(lambda x: x)
stop_gradient_p.def_impl(_stop_gradient_impl)
stop_gradient_p.def_lowering(lambda ctx, x: [x])
stop_gradient_p.def_jvp(_stop_gradient_jvp)
stop_gradient_p.def_batching(_stop_gradient_batching)


def stop_gradient(x):
    """``x`` unchanged (a pytree of arrays), but a constant to every enclosing
    differentiation: its gradient is zero."""

    def stop(leaf):
        dtype = shaped_abstractify(leaf).dtype
        if not dtypes.issubdtype(dtype, np.inexact):
            return leaf
        if isinstance(leaf, JVPTracer):
            return stop(leaf.primal)
        return stop_gradient_p.bind(leaf)

    return tree_util.tree_map(stop, x)
