"""make_jaxpr, eval_shape, ShapeDtypeStruct and the jit call primitive.

Expected texts were printed by JAX 0.10.2 for the equivalent jax.numpy programs.
"""

import numpy as np
import pytest
import tracing_prims as P

from lamina.interpreters import calls
from lamina.interpreters.jaxprs.trace_api import ShapeDtypeStruct, eval_shape, make_jaxpr
from lamina.ir import dtypes

methods = P.methods
f32_3 = np.ones(3, np.float32)
c = np.arange(3.0, dtype=np.float32)


def text(closed_jaxpr):
    return str(closed_jaxpr)


def test_weak_literal(methods):
    jaxpr = make_jaxpr(lambda x: x * 2.0)(np.ones(5, np.float32))
    assert text(jaxpr) == "{ lambda ; a:f32[5]. let b:f32[5] = mul a 2.0:f32[] in (b,) }"
    lit = jaxpr.eqns[0].invars[1]
    assert lit.val == 2.0 and type(lit.val) is float and lit.aval.weak_type


def test_numpy_scalar_literal_is_strong(methods):
    jaxpr = make_jaxpr(lambda x: x * np.float32(3))(c)
    assert text(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = mul a 3.0:f32[] in (b,) }"
    assert not jaxpr.eqns[0].invars[1].aval.weak_type
    jaxpr = make_jaxpr(lambda x: x + 1)(np.int64(1))  # canonicalized to int32
    assert text(jaxpr) == "{ lambda ; a:i32[]. let b:i32[] = add a 1:i32[] in (b,) }"


def test_constvars(methods):
    assert text(make_jaxpr(lambda x: P.sin(x) * c)(f32_3)) == (
        "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = sin b; d:f32[3] = mul c a in (d,) }"
    )
    jaxpr = make_jaxpr(lambda x: x * c + c)(f32_3)
    assert text(jaxpr) == (
        "{ lambda a:f32[3]; b:f32[3]. let\n"
        "    c:f32[3] = mul b a\n"
        "    d:f32[3] = add c a\n"
        "  in (d,) }"
    )
    assert len(jaxpr.consts) == 1 and jaxpr.consts[0] is c


def test_unused_constant_does_not_appear(methods):
    unused = np.zeros(4)
    jaxpr = make_jaxpr(lambda x: (unused, x)[1] * 2.0)(f32_3)
    assert jaxpr.consts == [] and jaxpr.jaxpr.constvars == []


def test_identity_literal_and_const_outputs():
    assert text(make_jaxpr(lambda x: x)(1)) == "{ lambda ; a:i32[]. let  in (a,) }"
    assert text(make_jaxpr(lambda: 1.0)()) == "{ lambda ; . let  in (1.0:f32[],) }"
    assert text(make_jaxpr(lambda x: (x, 1.0, c))(1.0)) == (
        "{ lambda a:f32[3]; b:f32[]. let  in (b, 1.0:f32[], a) }"
    )
    assert text(make_jaxpr(lambda x: [x, {"a": x}])(1)) == "{ lambda ; a:i32[]. let  in (a, a) }"


def test_pytrees_in_and_out(methods):
    jaxpr, shape = make_jaxpr(lambda d: {"a": d["x"] * d["y"], "b": (d["x"],)}, return_shape=True)(
        {"x": np.float32(1), "y": np.float32(2)}
    )
    assert text(jaxpr) == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b in (c, a) }"
    assert shape == {"a": ShapeDtypeStruct((), np.float32), "b": (ShapeDtypeStruct((), "float32"),)}


def test_return_shape(methods):
    jaxpr, shapes = make_jaxpr(lambda x: (x, x * 2.0), return_shape=True)(f32_3)
    assert text(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (a, b) }"
    assert repr(shapes) == (
        "(ShapeDtypeStruct(shape=(3,), dtype=float32), ShapeDtypeStruct(shape=(3,), dtype=float32))"
    )
    _, shape = make_jaxpr(lambda x: x + x, return_shape=True)(1.0)
    assert repr(shape) == "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"


def test_static_argnums(methods):
    def f(x, n, flag):
        return x * float(n) if flag else x

    jaxpr = make_jaxpr(f, static_argnums=(1, -1))(f32_3, 3, True)
    assert text(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = mul a 3.0:f32[] in (b,) }"
    jaxpr = make_jaxpr(f, static_argnums=2)(f32_3, 3, False)
    assert text(jaxpr) == "{ lambda ; a:f32[3] b:i32[]. let  in (a,) }"


def test_kwargs_are_traced(methods):
    jaxpr = make_jaxpr(lambda x, *, y: x * y)(1.0, y=np.float32(2))
    assert [str(v.aval) for v in jaxpr.jaxpr.invars] == ["~float32[]", "float32[]"]


def test_inputs_of_every_kind():
    class Duck:
        shape, dtype = (2,), np.dtype("int64")

    args = (ShapeDtypeStruct((3,), np.float32), Duck(), np.zeros(2, np.float64), True, 1j)
    jaxpr = make_jaxpr(lambda *a: a)(*args)
    assert text(jaxpr) == (
        "{ lambda ; a:f32[3] b:i32[2] c:f32[2] d:bool[] e:c64[]. let\n    \n  in (a, b, c, d, e) }"
    )
    with dtypes.enable_x64():
        jaxpr = make_jaxpr(lambda *a: a)(np.zeros(2), 1)
    assert text(jaxpr) == "{ lambda ; a:f64[2] b:i64[]. let  in (a, b) }"


def test_bad_argument_and_output():
    with pytest.raises(TypeError, match=r"Argument \[0\]\[0\] of type <class 'str'>.*static"):
        make_jaxpr(lambda x: x)("abc")
    with pytest.raises(TypeError, match="returned a value of type <class 'str'>"):
        make_jaxpr(lambda x: "abc")(1.0)


def test_eval_shape(methods):
    assert eval_shape(lambda x: x * 2, f32_3) == ShapeDtypeStruct((3,), np.float32)
    assert repr(eval_shape(lambda x: x * 2, 1.0)) == (
        "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"
    )
    out = eval_shape(
        lambda x, y: {"s": x.sum(), "p": x * y}, ShapeDtypeStruct((2, 4), "float32"), y=2
    )
    assert out == {"s": ShapeDtypeStruct((), np.float32), "p": ShapeDtypeStruct((2, 4), np.float32)}


def test_shape_dtype_struct():
    s = ShapeDtypeStruct([3], "int64")
    assert repr(s) == "ShapeDtypeStruct(shape=(3,), dtype=int64)"
    assert (s.shape, s.ndim, s.size, s.weak_type, s.sharding) == ((3,), 1, 3, False, None)
    assert repr(ShapeDtypeStruct((3,), np.float32, weak_type=True)) == (
        "ShapeDtypeStruct(shape=(3,), dtype=float32, weak_type=True)"
    )
    assert s.update(dtype=np.float32) == ShapeDtypeStruct((3,), np.float32)
    assert hash(s) == hash(ShapeDtypeStruct((3,), "int64"))


def g(x):
    return [P.sin(x)]


def test_nested_jit_call(methods):
    jaxpr = make_jaxpr(lambda x: calls.call_staged(g, x)[0] * 2.0)(f32_3)
    assert text(jaxpr) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = jit[\n"
        "      name=g\n"
        "      jaxpr={ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }\n"
        "    ] a\n"
        "    c:f32[3] = mul b 2.0:f32[]\n"
        "  in (c,) }"
    )
    eqn = jaxpr.eqns[0]
    assert eqn.params["in_shardings"] == (calls.UNSPECIFIED,)
    assert eqn.params["donated_invars"] == (False,) and eqn.params["keep_unused"] is False


def test_shared_jaxpr_printed_once(methods):
    inner = make_jaxpr(lambda x: g(x))(f32_3)
    jaxpr = make_jaxpr(
        lambda x: calls.call_jaxpr(inner, *calls.call_jaxpr(inner, x, name="g"), name="g")
    )(f32_3)
    assert text(jaxpr) == (
        "let g = { lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) } in\n"
        "{ lambda ; c:f32[3]. let\n"
        "    d:f32[3] = jit[name=g jaxpr=g] c\n"
        "    e:f32[3] = jit[name=g jaxpr=g] d\n"
        "  in (e,) }"
    )


def test_jit_params_printed_when_not_default(methods):
    jaxpr = make_jaxpr(
        lambda x: calls.call_staged(lambda a: [a], x, name="<lambda>", donated_invars=(True,))
    )(f32_3)
    assert text(jaxpr) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = jit[\n"
        "      name=<lambda>\n"
        "      donated_invars=(True,)\n"
        "      jaxpr={ lambda ; a:f32[3]. let  in (a,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )
    inline = make_jaxpr(lambda x: calls.call_staged(g, x, inline=True)[0] * 2.0)(f32_3)
    assert [e.primitive.name for e in inline.eqns] == ["sin", "mul"]


def test_jit_closing_over_constants_and_outer_tracers(methods):
    jaxpr = make_jaxpr(lambda x: calls.call_staged(lambda y: [y * c], x, name="<lambda>"))(c)
    assert text(jaxpr) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda c:f32[3]; a:f32[3]. let b:f32[3] = mul a c in (b,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )
    jaxpr = make_jaxpr(lambda x: calls.call_staged(lambda y: [y * x], 2.0, name="<lambda>"))(1.0)
    assert text(jaxpr) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f32[] c:f32[]. let b:f32[] = mul c a in (b,) }\n"
        "    ] a 2.0:f32[]\n"
        "  in (b,) }"
    )


def test_jit_eager_compiles_the_jaxpr(methods):
    # Eager jit equations compile the whole Jaxpr (see test_jit.py for values); these
    # test primitives have NumPy impls only, so lowering names the missing rule.
    from lamina.ir import MissingRuleError

    with pytest.raises(MissingRuleError, match="primitive 'sin'"):
        calls.call_staged(lambda x: [P.sin(x) * 2.0, x], c)


def test_make_jaxpr_inside_make_jaxpr(methods):
    inner_texts = []

    def outer(x):
        inner = make_jaxpr(lambda y: x * y)(1.0)  # x: a tracer of the outer trace
        inner_texts.append(text(inner))
        assert inner.consts[0] is x
        return calls.call_jaxpr(inner, 3.0, name="inner")

    jaxpr = make_jaxpr(outer)(f32_3)
    assert inner_texts == ["{ lambda a:f32[3]; b:f32[]. let c:f32[3] = mul a b in (c,) }"]
    assert text(jaxpr) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = jit[\n"
        "      name=inner\n"
        "      jaxpr={ lambda ; a:f32[3] c:f32[]. let b:f32[3] = mul a c in (b,) }\n"
        "    ] a 3.0:f32[]\n"
        "  in (b,) }"
    )


def test_deep_nesting(methods):
    def level(n):
        def f(x):
            if n == 0:
                return [P.sin(x)]
            return calls.call_staged(level(n - 1), x * 2.0, name=f"l{n}")

        return f

    jaxpr = make_jaxpr(lambda x: level(4)(x))(f32_3)
    depth, j = 0, jaxpr.jaxpr
    while j.eqns[-1].primitive is calls.jit_p:
        depth, j = depth + 1, j.eqns[-1].params["jaxpr"].jaxpr
    assert depth == 4 and j.eqns[-1].primitive.name == "sin"
