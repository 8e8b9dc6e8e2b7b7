"""Values as arrays of the current computation: ``stage`` (and its primitive) and
``shape_as_value``."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import Tracer, ad, put_on_device
from lamina.ir import Primitive

__all__ = [
    "shape_as_value",
    "stage",
    "stage_p",
]


def shape_as_value(shape):
    """``shape`` as an int32 array (shapes here are always concrete)."""
    return put_on_device(np.asarray([int(d) for d in shape], np.int32))


def stage(x, /):
    """``x`` as an array: a value of the current transformation if it is traced, else
    put on the device. Like JAX, staging leaves no equation in a Jaxpr: a traced value
    is already staged and a constant becomes a literal where it is used."""
    return x if isinstance(x, Tracer) else put_on_device(x)


def _stage_impl(x):
    return put_on_device(x)


# The primitive itself, for programs that bind it: the identity, linear in ``x``.
stage_p = Primitive("stage")
stage_p.def_abstract_eval(lambda x: x)
stage_p.def_impl(_stage_impl)
stage_p.def_lowering(lambda ctx, x: [x])
ad.deflinear(stage_p)
stage_p.def_transpose(lambda ct, x: [ct])
stage_p.def_batching(lambda axis_data, vals, dims: (stage_p.bind(vals[0]), dims[0]))
