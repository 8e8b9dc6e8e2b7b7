"""Mutable array references in the IR: ``AbstractRef``, the reference effects, printing
with a primitive's own equation rule, equality and checking of Jaxprs with them."""

import numpy as np

from lamina.ir import (
    AbstractRef,
    Jaxpr,
    Primitive,
    PrimitiveRegistry,
    ReadEffect,
    ShapedArray,
    Var,
    WriteEffect,
    check_jaxpr,
    new_jaxpr_eqn,
)

F32_3 = ShapedArray((3,), np.float32)


def test_abstract_ref():
    ref = AbstractRef(F32_3)
    # Recorded from JAX 0.10.2: str(jax.typeof(jax.new_ref(jnp.zeros(3)))).
    assert str(ref) == repr(ref) == "Ref{float32[3]}"
    assert ref.str_short(short_dtypes=True) == "Ref{f32[3]}"
    assert AbstractRef(F32_3, memory_space="any").str_short(True) == "Ref<any>{f32[3]}"
    assert (ref.shape, ref.dtype, ref.ndim, ref.size) == ((3,), np.float32, 1, 3)
    assert ref == AbstractRef(ShapedArray((3,), np.float32)) and ref != F32_3
    assert hash(ref) == hash(AbstractRef(F32_3))


def test_ref_effects():
    a, b = Var(AbstractRef(F32_3)), Var(AbstractRef(F32_3))
    assert ReadEffect(a) == ReadEffect(a) != ReadEffect(b)
    assert ReadEffect(a) != WriteEffect(a)
    assert ReadEffect(0) == ReadEffect(0) and str(ReadEffect(0)) == "Read<0>"
    assert len({ReadEffect(a), ReadEffect(a), WriteEffect(a)}) == 2


_reg = PrimitiveRegistry()
load_p = Primitive("load_for_test", registry=_reg)
load_p.def_abstract_eval(lambda ref: ref.inner_aval)
load_p.def_pp_eqn(lambda eqn, names: f"{names.binder(eqn.outvars[0])} <- "
                  f"{names.use(eqn.invars[0])}[...]")  # fmt: skip


def _jaxpr():
    ref = Var(AbstractRef(F32_3))
    out = Var(F32_3)
    effects = {ReadEffect(ref)}
    eqn = new_jaxpr_eqn([ref], [out], load_p, {}, effects)
    return Jaxpr([], [ref], [out], [eqn], effects)


def test_printing_with_an_equation_rule():
    jaxpr = _jaxpr()
    assert str(jaxpr) == "{ lambda ; a:Ref{f32[3]}. let b:f32[3] <- a[...] in (b,) }"
    assert "Read<a>" in jaxpr.pretty_print(print_effects=True)


def test_equality_matches_effects_through_renaming():
    assert _jaxpr() == _jaxpr()


def test_checker_accepts_declared_and_internal_effects():
    check_jaxpr(_jaxpr(), registry=_reg)
    # Effects on a reference the Jaxpr makes itself are not declared by it.
    inner = Var(AbstractRef(F32_3))
    out = Var(F32_3)
    make_p = Primitive("make_for_test", registry=_reg)
    make_p.def_abstract_eval(lambda x: AbstractRef(x))
    x = Var(F32_3)
    eqns = [
        new_jaxpr_eqn([x], [inner], make_p, {}),
        new_jaxpr_eqn([inner], [out], load_p, {}, {ReadEffect(inner)}),
    ]
    check_jaxpr(Jaxpr([], [x], [out], eqns), registry=_reg)
