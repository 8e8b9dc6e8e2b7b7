import numpy as np
import pytest

from lamina.ir import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    Literal,
    Primitive,
    PrimitiveRegistry,
    ShapedArray,
    Var,
    abstract_token,
    new_jaxpr_eqn,
)
from lamina.ir.dtypes import bfloat16

f32 = np.dtype("float32")


def test_shaped_array_forms():
    a = ShapedArray((2, 3), f32, weak_type=True)
    assert repr(a) == "ShapedArray(float32[2,3], weak_type=True)"
    assert str(a) == "~float32[2,3]"
    assert a.str_short() == "float32[2,3]"
    assert a.str_short(short_dtypes=True) == "f32[2,3]"
    assert repr(ShapedArray((), np.int32)) == "ShapedArray(int32[])"
    assert ShapedArray((2, 3), bfloat16).str_short(short_dtypes=True) == "bf16[2,3]"
    assert (a.ndim, a.size) == (2, 6)
    assert ShapedArray((0, 4), f32).size == 0


def test_shaped_array_equality_hash_and_update():
    a = ShapedArray((5,), f32)
    assert a == ShapedArray([5], "float32")
    assert hash(a) == hash(ShapedArray((5,), f32))
    assert a != ShapedArray((5,), f32, weak_type=True)
    assert a != ShapedArray((5,), np.float64)
    assert a.update(shape=(2,)) == ShapedArray((2,), f32)
    assert a.update(weak_type=True).weak_type
    assert a.update(dtype=np.int8).dtype == np.int8
    assert len({a, ShapedArray((5,), f32), ShapedArray((6,), f32)}) == 2


@pytest.mark.parametrize(
    ("shape", "error"), [((-1,), ValueError), ((1.5,), TypeError), (3, TypeError)]
)
def test_shaped_array_rejects_bad_shapes(shape, error):
    with pytest.raises(error, match="shape"):
        ShapedArray(shape, f32)


def test_token():
    assert abstract_token.str_short() == "Tok"
    assert repr(abstract_token) == "AbstractToken()"


def test_var_requires_an_abstract_value():
    with pytest.raises(TypeError, match="abstract value"):
        Var((3,))


def _mul_jaxpr(const=2.0):
    registry = PrimitiveRegistry()
    mul = Primitive("mul", registry=registry)
    a = Var(ShapedArray((5,), f32))
    b = Var(ShapedArray((5,), f32))
    lit = Literal(np.float32(const), ShapedArray((), f32, weak_type=True))
    return Jaxpr([], [a], [b], [new_jaxpr_eqn([a, lit], [b], mul, {})]), mul


def test_jaxpr_equality_is_structural():
    j1, _ = _mul_jaxpr()
    j2, _ = _mul_jaxpr()
    assert j1 == j2
    assert hash(j1) == hash(j2)
    assert j1 != _mul_jaxpr(3.0)[0]
    assert _mul_jaxpr(float("nan"))[0] == _mul_jaxpr(float("nan"))[0]
    assert _mul_jaxpr(-0.0)[0] != _mul_jaxpr(0.0)[0]


def test_jaxpr_equality_respects_variable_wiring():
    registry = PrimitiveRegistry()
    sub = Primitive("sub", registry=registry)
    x, y, z = (Var(ShapedArray((), f32)) for _ in range(3))
    forward = Jaxpr([], [x, y], [z], [new_jaxpr_eqn([x, y], [z], sub, {})])
    x2, y2, z2 = (Var(ShapedArray((), f32)) for _ in range(3))
    swapped = Jaxpr([], [x2, y2], [z2], [new_jaxpr_eqn([y2, x2], [z2], sub, {})])
    assert forward != swapped


def test_jaxpr_equality_compares_params_and_nested_jaxprs():
    inner1, _ = _mul_jaxpr()
    inner2, _ = _mul_jaxpr()
    registry = PrimitiveRegistry()
    call = Primitive("call", registry=registry)
    call.multiple_results = True

    def outer(inner, name):
        a = Var(ShapedArray((5,), f32))
        b = Var(ShapedArray((5,), f32))
        eqn = new_jaxpr_eqn([a], [b], call, {"jaxpr": inner, "name": name})
        return Jaxpr([], [a], [b], [eqn])

    assert outer(inner1, "f") == outer(inner2, "f")
    assert outer(inner1, "f") != outer(inner2, "g")
    assert outer(inner1, "f") != outer(_mul_jaxpr(5.0)[0], "f")


def test_drop_var_equals_only_an_unread_binder():
    registry = PrimitiveRegistry()
    two = Primitive("two", registry=registry)
    two.multiple_results = True
    aval = ShapedArray((), f32)

    def build(drop, read_second):
        a, b = Var(aval), Var(aval)
        c = DropVar(aval) if drop else Var(aval)
        outvars = [b, c] if read_second and not drop else [b]
        return Jaxpr([], [a], outvars, [new_jaxpr_eqn([a], [b, c], two, {})])

    assert build(True, False) == build(True, False)
    # Printing writes an unread output as `_` too, so the two read back alike.
    assert build(True, False) == build(False, False)
    assert build(True, True) != build(False, True)


def test_closed_jaxpr():
    a, c, out = Var(ShapedArray((3,), f32)), Var(ShapedArray((3,), f32)), None
    registry = PrimitiveRegistry()
    add = Primitive("add", registry=registry)
    out = Var(ShapedArray((3,), f32))
    jaxpr = Jaxpr([c], [a], [out], [new_jaxpr_eqn([a, c], [out], add, {})])
    closed = ClosedJaxpr(jaxpr, [np.ones(3, f32)])
    assert closed.in_avals == [ShapedArray((3,), f32)]
    assert closed.out_avals == [ShapedArray((3,), f32)]
    assert closed.literals is closed.consts
    assert closed == ClosedJaxpr(jaxpr, [np.ones(3, f32)])
    assert closed != ClosedJaxpr(jaxpr, [np.zeros(3, f32)])
    with pytest.raises(ValueError, match="1 constvars"):
        ClosedJaxpr(jaxpr, [])


def test_eqn_replace():
    jaxpr, mul = _mul_jaxpr()
    eqn = jaxpr.eqns[0]
    changed = eqn.replace(params={"x": 1})
    assert changed.params == {"x": 1} and changed.primitive is mul
    assert eqn.params == {}
