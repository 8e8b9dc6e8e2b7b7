"""Making and ending mutable array references: ``new_ref``, ``empty_ref``, ``freeze``
and ``free_ref``, their primitives (``new_ref``, ``empty_ref``, ``freeze``,
``free_ref``) and rules.

Eagerly, ``new_ref(x)`` is a ``Ref`` holding ``x`` (arrays never change, so holding it
is as good as a copy); ``freeze`` reads the whole reference. Staged, ``new_ref`` starts
a reference (discharge: the array it starts with), ``freeze`` ends it with its value.
``empty_ref`` only exists inside a trace (as in JAX); discharged it starts as zeros.
"""

from __future__ import annotations

from lamina.interpreters import (
    Ref,
    Tracer,
    Zero,
    accept_ref_cotangents,
    ad,
    batching,
    is_undefined_primal,
    put_on_device,
    register_ref_cotangent_ops,
    shaped_abstractify,
)
from lamina.ir import AbstractRef, Primitive, ShapedArray, internal_mutable_array_effect
from lamina.lax.base.filling import full
from lamina.lax.base.operands import aval_of
from lamina.lax.state.access import addupdate_p, get_p, swap_p

__all__: list[str] = []

new_ref_p = Primitive("new_ref")
new_ref_p.effectful = True
new_ref_p.ref_allocating = True
empty_ref_p = Primitive("empty_ref")
empty_ref_p.effectful = True
empty_ref_p.ref_allocating = True
freeze_p = Primitive("freeze")
freeze_p.effectful = True
free_ref_p = Primitive("free_ref")
free_ref_p.effectful = True
free_ref_p.multiple_results = True


def new_ref(init_val, *, memory_space=None, kind=None):
    """A mutable array reference starting with the value ``init_val``."""
    if not isinstance(init_val, Tracer) and not isinstance(init_val, Ref):
        try:
            shaped_abstractify(init_val)
        except TypeError:
            raise TypeError(
                "Error interpreting argument to new_ref as a JAX value. The problematic "
                f"value is of type {type(init_val)} and was passed to new_ref at position 0.\n"
            ) from None
    return new_ref_p.bind(init_val, memory_space=memory_space, kind=kind)


def empty_ref(ty, memory_space=None):
    """A mutable array reference of type ``ty`` (anything with a shape and dtype) whose
    value is unspecified; only inside a trace."""
    return empty_ref_p.bind(ty=shaped_abstractify(ty), memory_space=memory_space)


def freeze(ref):
    """The final value of ``ref``, which must not be used afterwards."""
    return freeze_p.bind(ref)


def free_ref(ref):
    """Ends ``ref``, which must not be used afterwards."""
    free_ref_p.bind(ref)
    return ()


# ---------------------------------------------------------------- abstract evaluation


def _new_ref_abstract_eval(init_aval, *, memory_space, kind):
    if type(init_aval) is not ShapedArray:
        raise TypeError(f"new_ref needs an array value, got a value of type {init_aval}")
    return AbstractRef(init_aval, memory_space, kind), {internal_mutable_array_effect}


def _empty_ref_abstract_eval(*, ty, memory_space):
    return AbstractRef(ty, memory_space), {internal_mutable_array_effect}


def _freeze_abstract_eval(ref_aval):
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`freeze` must be called on `Ref` types: {ref_aval}.")
    return ref_aval.inner_aval, {internal_mutable_array_effect}


def _free_ref_abstract_eval(ref_aval):
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`free_ref` must be called on `Ref` types: {ref_aval}.")
    return [], set()


new_ref_p.def_abstract_eval(_new_ref_abstract_eval)
empty_ref_p.def_abstract_eval(_empty_ref_abstract_eval)
freeze_p.def_abstract_eval(_freeze_abstract_eval)
free_ref_p.def_abstract_eval(_free_ref_abstract_eval)


# ---------------------------------------------------------------- eager evaluation


def _new_ref_impl(init_val, *, memory_space, kind):
    if memory_space is not None:
        raise NotImplementedError("array ref with memory space only works inside of a `jit`.")
    buf = put_on_device(init_val)
    return Ref(AbstractRef(buf.aval, None, kind), buf)


def _empty_ref_impl(*, ty, memory_space):
    # As in JAX: a reference of unspecified contents exists only inside a trace.
    raise NotImplementedError("Evaluation rule for 'empty_ref' not implemented")


new_ref_p.def_impl(_new_ref_impl)
empty_ref_p.def_impl(_empty_ref_impl)
freeze_p.def_impl(lambda ref: get_p.bind(ref, indexer=None))
free_ref_p.def_impl(lambda ref: [])


# ---------------------------------------------------------------- discharge


new_ref_p.def_discharge(lambda in_avals, out_avals, init, **_: ([None], init))
empty_ref_p.def_discharge(
    lambda in_avals, out_avals, *, ty, memory_space: ([], full(ty.shape, 0, ty.dtype))
)
freeze_p.def_discharge(lambda in_avals, out_avals, value: ([None], value))
free_ref_p.def_discharge(lambda in_avals, out_avals, value: ([None], []))


# ---------------------------------------------------------------- JVP


def _new_ref_jvp(primals, tangents, *, memory_space, kind):
    (x,), (t,) = primals, tangents
    out = new_ref_p.bind(x, memory_space=memory_space, kind=kind)

    # References made inside a differentiated function always carry tangents, made
    # with the tangents (in linearize's linear map) even from a zero tangent.
    def tangent_ref(t):
        return new_ref_p.bind(ad.instantiate_zeros(t), memory_space=memory_space, kind=kind)

    return out, ad.on_tangent_side(tangent_ref, t)


def _empty_ref_jvp(primals, tangents, *, ty, memory_space):
    out = empty_ref_p.bind(ty=ty, memory_space=memory_space)
    t_ty = ad.tangent_aval(ty)
    return out, ad.on_tangent_side(lambda: empty_ref_p.bind(ty=t_ty, memory_space=memory_space))


def _freeze_jvp(primals, tangents):
    (ref,), (t,) = primals, tangents
    out = freeze_p.bind(ref)
    if type(t) is Zero:
        return out, Zero(ad.tangent_aval(aval_of(out)))
    return out, freeze_p.bind(t)


def _free_ref_jvp(primals, tangents):
    free_ref_p.bind(primals[0])
    if type(tangents[0]) is not Zero:
        free_ref_p.bind(tangents[0])
    return [], []


new_ref_p.def_jvp(_new_ref_jvp)
empty_ref_p.def_jvp(_empty_ref_jvp)
freeze_p.def_jvp(_freeze_jvp)
free_ref_p.def_jvp(_free_ref_jvp)


# ---------------------------------------------------------------- transpose
# Tangent references are transposed into cotangent references (RefCotangent): making
# one ends its cotangent (the cotangent of its initial value), freezing one starts it.


def _new_ref_transpose(ref_ct, x, *, memory_space, kind):
    x_ct = ref_ct.freeze()
    return [x_ct if is_undefined_primal(x) else None]


def _empty_ref_transpose(ref_ct, *, ty, memory_space):
    ref_ct.freeze()
    return []


def _freeze_transpose(ct, ref_ct):
    ref_ct.accum(ct)
    return [None]


new_ref_p.def_transpose(_new_ref_transpose)
empty_ref_p.def_transpose(_empty_ref_transpose)
freeze_p.def_transpose(_freeze_transpose)
register_ref_cotangent_ops(
    new_ref=lambda x: new_ref_p.bind(x, memory_space=None, kind=None),
    addupdate=lambda ref, x: addupdate_p.bind(ref, x, indexer=None),
    freeze=freeze_p.bind,
)
accept_ref_cotangents(get_p, swap_p, addupdate_p, new_ref_p, empty_ref_p, freeze_p)


# ---------------------------------------------------------------- batching


def _empty_ref_batching(axis_data, vals, dims, *, ty, memory_space):
    # Nothing to batch: an unbatched reference, which batched writes will not accept.
    return empty_ref_p.bind(ty=ty, memory_space=memory_space), batching.not_mapped


def _new_ref_batching(axis_data, vals, dims, *, memory_space, kind):
    (x,), (d,) = vals, dims
    # Always batched at axis 0: a later write may bring batched values.
    x = batching.matchaxis(axis_data, d, 0, x)
    return new_ref_p.bind(x, memory_space=memory_space, kind=kind), 0


new_ref_p.def_batching(_new_ref_batching)
empty_ref_p.def_batching(_empty_ref_batching)
freeze_p.def_batching(lambda axis_data, vals, dims: (freeze_p.bind(vals[0]), dims[0]))
free_ref_p.def_batching(lambda axis_data, vals, dims: (free_ref_p.bind(vals[0]), []))
