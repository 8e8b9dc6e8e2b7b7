"""jvp and linearize on test-local primitives (lax is a higher layer): the trace,
symbolic zeros, float0 tangents, pytrees, has_aux, nesting, jit, and JAX's errors."""

import jit_prims
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina.interpreters import jit, make_jaxpr
from lamina.interpreters.core.tangents import Zero, tangent_aval
from lamina.interpreters.test_util import check_grads
from lamina.interpreters.transformations.ad import JVPTracer, add_tangents, defjvp2, deflinear, jvp
from lamina.interpreters.transformations.reverse import linearize
from lamina.ir import MissingRuleError, Primitive, ShapedArray, dtypes

add, mul, sin, neg = jit_prims.add, jit_prims.mul, jit_prims.sin, jit_prims.neg_p.bind
cos_p = jit_prims._unary("cos", hlo.cosine)
cos = cos_p.bind
defjvp2(jit_prims.sin_p, lambda t, ans, x: mul(t, cos(x)))
defjvp2(cos_p, lambda t, ans, x: neg(mul(t, sin(x))))
defjvp2(jit_prims.mul_p, lambda t, ans, x, y: mul(t, y), lambda t, ans, x, y: mul(x, t))
defjvp2(jit_prims.add_p, lambda t, ans, x, y: t, lambda t, ans, x, y: t)
deflinear(jit_prims.neg_p)

nodiff_p = Primitive("nodiff", registry=None)
nodiff_p.def_abstract_eval(lambda x: x)
nodiff_p.def_impl(lambda x: x)

x2, x3 = np.float32(2.0), np.float32(3.0)
one = np.float32(1.0)


def test_values():
    out, t = jvp(sin, (x2,), (one,))
    np.testing.assert_allclose([out, t], [np.sin(2.0), np.cos(2.0)], rtol=1e-6)
    out, t = jvp(lambda a, b: add(mul(a, b), sin(a)), (x2, x3), (one, x2))
    np.testing.assert_allclose(t, 3 + 2 * 2 + np.cos(2.0), rtol=1e-6)


def test_check_grads_orders():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    check_grads(lambda a: mul(sin(a), cos(a)), (x,), order=1, modes="fwd")
    check_grads(lambda a: mul(sin(a), cos(a)), (x,), order=2, modes="fwd")
    check_grads(lambda a, b: mul(a, add(b, a)), (x, x[::-1].copy()), order=2, modes="fwd")
    with pytest.raises(AssertionError):
        check_grads(lambda a: jvp_wrong(a), (x,), order=1, modes="fwd")


wrong_p = jit_prims._unary("wrong_sin", hlo.sine)
defjvp2(wrong_p, lambda t, ans, x: t)  # deliberately wrong


def jvp_wrong(a):
    return wrong_p.bind(a)


def test_pytrees_and_lists():
    primals = ({"a": x2, "b": [x3]},)
    tangents = ({"a": one, "b": [one]},)
    out, t = jvp(lambda d: (mul(d["a"], d["b"][0]), {"s": sin(d["a"])}), primals, tangents)
    assert isinstance(out, tuple) and set(out[1]) == {"s"}
    np.testing.assert_allclose(t[0], 5.0)
    np.testing.assert_allclose(t[1]["s"], np.cos(2.0), rtol=1e-6)
    out, t = jvp(sin, [x2], [one])
    np.testing.assert_allclose(t, np.cos(2.0), rtol=1e-6)


def test_has_aux():
    _out, t, aux = jvp(lambda a: (mul(a, a), {"aux": sin(a)}), (x2,), (one,), has_aux=True)
    assert float(t) == 4.0
    assert not isinstance(aux["aux"], JVPTracer)
    np.testing.assert_allclose(aux["aux"], np.sin(2.0), rtol=1e-6)
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        jvp(lambda a: mul(a, a), (x2,), (one,), has_aux=True)


def test_python_scalars_and_identity():
    assert jvp(lambda a: a, (1.0,), (1.0,)) == (1.0, 1.0)


def test_integer_inputs_get_float0():
    n = np.int32(4)
    out, t = jvp(lambda k: mul(k, k), (n,), (np.zeros((), dtypes.float0),))
    assert int(out) == 16 and np.asarray(t).dtype == dtypes.float0
    out, t = jvp(
        lambda a, k: mul(a, k), (x2, np.ones(3, np.int32)), (one, np.zeros(3, dtypes.float0))
    )
    np.testing.assert_allclose(t, np.ones(3))
    assert tangent_aval(ShapedArray((2,), np.dtype(np.bool_))).dtype == dtypes.float0


def test_symbolic_zeros_skip_rules():
    # nodiff has no JVP rule, but its operand's tangent is zero, so it just runs.
    _out, t = jvp(lambda a: mul(a, nodiff_p.bind(x3)), (x2,), (one,))
    assert float(t) == 3.0
    assert add_tangents(Zero(ShapedArray((), np.dtype(np.float32))), one) is one
    jaxpr = make_jaxpr(lambda a, b, ta: jvp(lambda p: mul(p, b), (a,), (ta,)))(x2, x3, one)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["mul", "mul"]


def test_missing_rule_names_primitive():
    with pytest.raises(
        NotImplementedError, match="Differentiation rule for 'nodiff' not implemented"
    ):
        jvp(nodiff_p.bind, (x2,), (one,))
    assert issubclass(MissingRuleError, NotImplementedError)


def test_nested_and_perturbation_confusion():
    d2 = jvp(lambda a: jvp(sin, (a,), (one,))[1], (x2,), (one,))[1]
    np.testing.assert_allclose(d2, -np.sin(2.0), rtol=1e-6)

    # d/dx [x * d/dy (x + y)] = 1: the inner jvp must not see the outer tangent of x.
    def f(x):
        return mul(x, jvp(lambda y: add(x, y), (x3,), (one,))[1])

    assert float(jvp(f, (x2,), (one,))[1]) == 1.0


def test_python_control_flow_on_concrete_values():
    def f(a):
        return sin(a) if float(a) > 0 else neg(a)

    assert float(jvp(f, (x2,), (one,))[1]) == pytest.approx(np.cos(2.0))
    assert float(jvp(f, (-x2,), (one,))[1]) == -1.0


def test_jit_inside_and_outside():
    g = jit(lambda a: mul(sin(a), a))
    _out, t = jvp(g, (x2,), (one,))
    np.testing.assert_allclose(t, np.cos(2.0) * 2 + np.sin(2.0), rtol=1e-6)
    h = jit(lambda a, ta: jvp(g, (a,), (ta,)))
    np.testing.assert_allclose(h(x2, one)[1], t, rtol=1e-6)
    jaxpr = make_jaxpr(lambda a, ta: jvp(g, (a,), (ta,)))(x2, one)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["jit"]
    assert len(jaxpr.jaxpr.eqns[0].params["jaxpr"].jaxpr.invars) == 2


def test_linearize():
    out, f_jvp = linearize(lambda a, b: mul(sin(a), b), x2, x3)
    np.testing.assert_allclose(out, np.sin(2.0) * 3, rtol=1e-6)
    np.testing.assert_allclose(f_jvp(one, x2), np.cos(2.0) * 3 + np.sin(2.0) * 2, rtol=1e-6)
    with pytest.raises(ValueError, match="inconsistent"):
        f_jvp(np.ones(3, np.float32), one)


def test_errors():
    def f(a, b):
        return mul(a, b)

    with pytest.raises(TypeError, match="must be tuples or lists; found float32 and float32"):
        jvp(f, x2, x2)
    with pytest.raises(
        TypeError,
        match=r"same tree structure; primals have tree structure "
        r"PyTreeDef\(\[\*\]\) whereas tangents have tree structure "
        r"PyTreeDef\(\[\*, \*\]\)",
    ):
        jvp(f, [x2], [x2, x3])
    with pytest.raises(
        TypeError,
        match=r"float0.Got primal dtype float32 and so expected "
        r"tangent dtype float32, but got tangent dtype float16 instead.",
    ):
        jvp(sin, (x2,), (np.float16(1),))
    with pytest.raises(
        TypeError,
        match=r"expected tangent dtype \[\('float0', 'V'\)\], but got "
        "tangent dtype float32 instead",
    ):
        jvp(sin, (np.int32(1),), (one,))
    with pytest.raises(
        ValueError,
        match=r"different primal and tangent shapes;Got primal shape "
        r"\(\) and tangent shape as \(3,\)",
    ):
        jvp(sin, (x2,), (np.ones(3, np.float32),))
    with pytest.raises(TypeError, match="Argument 's' of type <class 'str'> is not a valid JAX"):
        jvp(lambda a: a, ("s",), ("s",))
    with pytest.raises(TypeError, match="Expected a callable value, got 1"):
        jvp(1, (x2,), (one,))
