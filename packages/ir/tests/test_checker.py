import numpy as np
import pytest

from lamina.ir import (
    ClosedJaxpr,
    Effect,
    Jaxpr,
    JaxprTypeError,
    Literal,
    Primitive,
    PrimitiveRegistry,
    ShapedArray,
    Var,
    check_jaxpr,
    new_jaxpr_eqn,
)

f32 = np.dtype("float32")
registry = PrimitiveRegistry()
add = Primitive("add", registry=registry)
add.def_abstract_eval(lambda x, y: ShapedArray(np.broadcast_shapes(x.shape, y.shape), x.dtype))
call = Primitive("closed_call", registry=registry)
call.multiple_results = True
call.def_abstract_eval(lambda *avals, jaxpr: jaxpr.out_avals)
untyped = Primitive("opaque", registry=registry)


def aval(*shape):
    return ShapedArray(shape, f32)


def add_jaxpr():
    a, b, c = Var(aval(3)), Var(aval(3)), Var(aval(3))
    return Jaxpr([], [a, b], [c], [new_jaxpr_eqn([a, b], [c], add, {})])


def test_well_formed_jaxprs_pass():
    check_jaxpr(add_jaxpr(), registry=registry)
    a, out = Var(aval(3)), Var(aval(3))
    outer = Jaxpr([], [a], [out], [new_jaxpr_eqn([a, a], [out], call, {"jaxpr": add_jaxpr()})])
    check_jaxpr(outer)
    check_jaxpr(ClosedJaxpr(add_jaxpr(), []))


def test_use_before_binding_names_the_equation():
    a, b, c = Var(aval(3)), Var(aval(3)), Var(aval(3))
    stray = Var(aval(3))
    jaxpr = Jaxpr([], [a, b], [c], [new_jaxpr_eqn([a, stray], [c], add, {})])
    with pytest.raises(JaxprTypeError, match=r"used before it is bound, in equation 0 \(.*add"):
        check_jaxpr(jaxpr)


def test_errors_name_variables_as_the_jaxpr_prints_them():
    a, b, c, d = (Var(aval(3)) for _ in range(4))
    stray = Var(aval(3))
    eqns = [new_jaxpr_eqn([a, b], [c], add, {}), new_jaxpr_eqn([c, stray], [d], add, {})]
    jaxpr = Jaxpr([], [a, b], [d], eqns)
    printed = str(jaxpr)
    assert "d:f32[3] = add c e" in printed  # the stray variable prints as e
    with pytest.raises(JaxprTypeError) as info:
        check_jaxpr(jaxpr)
    assert str(info.value) == (
        "variable 'e' is used before it is bound, in equation 1 (d:f32[3] = add c e)"
    )
    twice = Jaxpr([], [a, b], [a], [new_jaxpr_eqn([a, b], [a], add, {})])
    with pytest.raises(JaxprTypeError, match=r"^variable 'a' is bound twice, the second time"):
        check_jaxpr(twice)


def test_double_binding():
    a, b = Var(aval(3)), Var(aval(3))
    jaxpr = Jaxpr([], [a, b], [a], [new_jaxpr_eqn([a, b], [a], add, {})])
    with pytest.raises(JaxprTypeError, match="bound twice"):
        check_jaxpr(jaxpr)


def test_unbound_output():
    a, ghost = Var(aval(3)), Var(aval(3))
    with pytest.raises(JaxprTypeError, match="outputs of the jaxpr"):
        check_jaxpr(Jaxpr([], [a], [ghost], []))


def test_type_disagreeing_with_abstract_eval():
    a, b, c = Var(aval(3)), Var(aval(3)), Var(aval(4))
    jaxpr = Jaxpr([], [a, b], [c], [new_jaxpr_eqn([a, b], [c], add, {})])
    with pytest.raises(JaxprTypeError, match=r"has type f32\[4\] but 'add' produces f32\[3\]"):
        check_jaxpr(jaxpr)


def test_abstract_eval_failure_is_reported():
    a, b, c = Var(aval(3)), Var(aval(4)), Var(aval(3))
    jaxpr = Jaxpr([], [a, b], [c], [new_jaxpr_eqn([a, b], [c], add, {})])
    with pytest.raises(JaxprTypeError, match="abstract evaluation of 'add' failed"):
        check_jaxpr(jaxpr)


def test_weak_type_differences_are_accepted():
    a = Var(ShapedArray((), f32, weak_type=True))
    out = Var(aval())
    lit = Literal(np.float32(1), ShapedArray((), f32, weak_type=True))
    check_jaxpr(Jaxpr([], [a], [out], [new_jaxpr_eqn([a, lit], [out], add, {})]))


def test_bad_literal():
    a, out = Var(aval(3)), Var(aval(3))
    lit = Literal(np.ones(2, f32), aval())
    with pytest.raises(JaxprTypeError, match="literal"):
        check_jaxpr(Jaxpr([], [a], [out], [new_jaxpr_eqn([a, lit], [out], add, {})]))


def test_error_inside_a_sub_jaxpr_is_located():
    a, b, c, stray = Var(aval(3)), Var(aval(3)), Var(aval(3)), Var(aval(3))
    broken = Jaxpr([], [a, b], [c], [new_jaxpr_eqn([a, stray], [c], add, {})])
    x, out = Var(aval(3)), Var(aval(3))
    outer = Jaxpr([], [x], [out], [new_jaxpr_eqn([x, x], [out], call, {"jaxpr": broken})])
    with pytest.raises(JaxprTypeError, match="inside a sub-jaxpr of equation 0"):
        check_jaxpr(outer)


class _Io(Effect):
    pass


def test_undeclared_effect():
    a, out = Var(aval()), Var(aval())
    eqn = new_jaxpr_eqn([a], [out], untyped, {}, effects={_Io()})
    with pytest.raises(JaxprTypeError, match="does not declare"):
        check_jaxpr(Jaxpr([], [a], [out], [eqn]))
    declared = Jaxpr([], [a], [out], [eqn], effects=eqn.effects)
    check_jaxpr(declared)


def test_unknown_primitive():
    stranger = Primitive("stranger", registry=None)
    a, out = Var(aval()), Var(aval())
    jaxpr = Jaxpr([], [a], [out], [new_jaxpr_eqn([a], [out], stranger, {})])
    check_jaxpr(jaxpr)
    with pytest.raises(JaxprTypeError, match="unknown primitive 'stranger'"):
        check_jaxpr(jaxpr, registry=registry)
    fake = Jaxpr([], [a], [out], [new_jaxpr_eqn([a], [out], "sin", {})])
    with pytest.raises(JaxprTypeError, match="where a Primitive is expected"):
        check_jaxpr(fake)


def test_consts_must_match_constvars():
    c, a, out = Var(aval(3)), Var(aval(3)), Var(aval(3))
    jaxpr = Jaxpr([c], [a], [out], [new_jaxpr_eqn([a, c], [out], add, {})])
    check_jaxpr(ClosedJaxpr(jaxpr, [np.ones(3, f32)]))
    with pytest.raises(JaxprTypeError, match="constant of type"):
        check_jaxpr(ClosedJaxpr(jaxpr, [np.ones(2, f32)]))


def test_rejects_non_jaxprs():
    with pytest.raises(TypeError, match="Jaxpr or ClosedJaxpr"):
        check_jaxpr("{ lambda ; . let in () }")
