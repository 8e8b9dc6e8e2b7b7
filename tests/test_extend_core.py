"""lamina.extend.core: primitives defined outside lamina, Jaxpr helpers and the
trace-state queries libraries use (values recorded from JAX 0.10.2 where stated)."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina.extend import core, linear_util
from lamina.extend.core import primitives
from lamina.interpreters import lower_fun


def _my_double():
    p = core.Primitive("my_double", registry=None)  # kept out of the rule inventory
    p.def_impl(lambda x: np.asarray(x) * 2)  # eager: runs this Python
    p.def_abstract_eval(lambda x: x)
    p.def_lowering(lower_fun(lambda x: x * 2, multiple_results=False))
    return p


def test_primitive_defined_outside_runs_eagerly_staged_and_compiled():
    p = _my_double()
    # Recorded from JAX 0.10.2 (with mlir.register_lowering for the lowering).
    assert str(jax.make_jaxpr(lambda x: p.bind(x) + 1)(jnp.ones(3))) == (
        "{ lambda ; a:f32[3]. let\n    b:f32[3] = my_double a\n"
        "    c:f32[3] = add b 1.0:f32[]\n  in (c,) }"
    )
    np.testing.assert_array_equal(jax.jit(lambda x: p.bind(x) + 1)(jnp.ones(3)), [3, 3, 3])
    eager = p.bind(np.ones(2, np.float32))
    assert type(eager) is np.ndarray and eager.tolist() == [2.0, 2.0]


def test_effectful_abstract_eval_puts_effects_on_the_equation():
    class MyEffect(core.Effect):
        pass

    effect = MyEffect()
    p = core.Primitive("my_effectful", registry=None)
    p.def_effectful_abstract_eval(lambda x: (x, {effect}))
    jaxpr = jax.make_jaxpr(lambda x: p.bind(x))(1.0)
    assert jaxpr.eqns[0].effects == {effect}
    assert effect in jaxpr.effects


def test_opaque_trace_state_is_equal_within_one_trace_only():
    states = []

    def f(x):
        states.append(core.get_opaque_trace_state())
        states.append(core.get_opaque_trace_state(convention="flax"))
        return x

    f(1.0)
    jax.jit(f)(1.0)
    jax.jit(f)(2)  # a new signature: a new trace
    eager, eager2, jit1, jit1b, jit2, _ = states
    # Recorded from JAX 0.10.2: True True False False True.
    assert eager == eager2 and jit1 == jit1b
    assert eager != jit1 and jit1 != jit2
    with pytest.raises(TypeError):  # compared, never hashed
        hash(eager)


def test_trace_queries():
    seen = {}

    def probe(tag):
        def f(x):
            seen[tag] = (
                core.nonempty_axis_env_DO_NOT_USE(),
                core.unsafe_am_i_under_a_jit_DO_NOT_USE(),
                core.unsafe_am_i_under_a_vmap_DO_NOT_USE(),
                core.unsafe_get_axis_names_DO_NOT_USE(),
            )
            return x

        return f

    probe("eager")(1.0)
    jax.vmap(probe("vmap"))(jnp.ones(2))
    jax.vmap(probe("vmap_named"), axis_name="i")(jnp.ones(2))
    jax.jit(probe("jit"))(1.0)
    jax.grad(probe("grad"))(1.0)
    jax.jit(jax.vmap(probe("jit_vmap")))(jnp.ones(2))
    jax.jit(jax.grad(probe("jit_grad")))(1.0)
    # Recorded from JAX 0.10.2.
    assert seen == {
        "eager": (False, False, False, []),
        "vmap": (False, False, True, []),
        "vmap_named": (True, False, True, ["i"]),
        "jit": (False, True, False, []),
        "grad": (False, False, False, []),
        "jit_vmap": (False, True, True, []),
        "jit_grad": (False, True, False, []),
    }


def test_concrete_or_error():
    assert core.concrete_or_error(int, 3.0) == 3
    assert core.concrete_or_error(None, 3) == 3

    def f(x):
        return core.concrete_or_error(int, x, "my context")

    with pytest.raises(jax.errors.ConcretizationTypeError, match="my context"):
        jax.jit(f)(1.0)


def test_avals_and_dtypes():
    aval = core.mapped_aval(3, 1, jax.core.ShapedArray((2, 3, 4), jnp.float32))
    assert str(aval) == "float32[2,4]"  # recorded from JAX 0.10.2
    vec = jax.core.ShapedArray((2,), jnp.float32)
    assert str(core.unmapped_aval(5, 0, vec)) == "float32[5,2]"
    assert core.unmapped_aval(5, None, vec) == vec
    with pytest.raises(AssertionError):
        core.mapped_aval(3, 1, jax.core.ShapedArray((2, 4, 4), jnp.float32))
    assert core.primal_dtype_to_tangent_dtype(jnp.int32) == jax.dtypes.float0
    assert core.primal_dtype_to_tangent_dtype(jnp.float16) == jnp.float16
    # Recorded from JAX 0.10.2: True False False True False.
    assert [core.valid_jaxtype(x) for x in (1.0, "a", None, jnp.ones(2), [1])] == [
        True,
        False,
        False,
        True,
        False,
    ]
    assert np.float32 in core.array_types and np.ndarray in core.array_types
    assert core.gensym()(vec).aval == vec


def test_jaxpr_helpers():
    closed = jax.make_jaxpr(lambda x: jax.jit(jnp.sin)(x) + 1)(1.0)
    (inner,) = core.subjaxprs(closed.jaxpr)
    assert inner is closed.jaxpr.eqns[0].params["jaxpr"].jaxpr
    assert list(core.jaxprs_in_params(closed.jaxpr.eqns[0].params)) == [inner]
    (out,) = core.jaxpr_as_fun(closed)(2.0)
    np.testing.assert_allclose(out, np.sin(2.0) + 1, rtol=1e-6)
    (out,) = core.jaxpr_as_fun(closed, 0.0)
    assert float(out) == 1.0
    core.check_jaxpr(closed.jaxpr)


def test_primitives_are_the_ones_lamina_binds():
    jaxpr = jax.make_jaxpr(lambda x: jax.lax.sin(x) * x)(1.0)
    assert [e.primitive for e in jaxpr.eqns] == [primitives.sin_p, primitives.mul_p]
    # Names that differ from the attribute, recorded from JAX 0.10.2.
    assert primitives.scatter_add_p.name == "scatter-add"
    assert primitives.add_jaxvals_p.name == "add_any"
    assert primitives.linear_solve_p.name == "custom_linear_solve"
    assert primitives.jit_p.name == "jit"
    assert "while_p" in dir(primitives)
    with pytest.raises(AttributeError):
        primitives.not_a_primitive_p  # noqa: B018


def test_call_primitive_runs_its_function():
    def f(x):
        return [jnp.sin(x) * 2]

    wrapped = linear_util.wrap_init(f)
    (out,) = primitives.call_p.bind(wrapped, 0.5)
    np.testing.assert_allclose(out, 2 * np.sin(0.5), rtol=1e-6)
    grad = jax.grad(lambda x: primitives.call_p.bind(linear_util.wrap_init(f), x)[0])(0.5)
    np.testing.assert_allclose(grad, 2 * np.cos(0.5), rtol=1e-6)
    assert isinstance(primitives.call_p, core.CallPrimitive)
    assert core.call_impl(wrapped, 0.0) == [0.0]
    closed = jax.make_jaxpr(lambda x: x * 3)(1.0)
    assert primitives.closed_call_p.bind(2.0, call_jaxpr=closed)[0] == 6.0


def test_trace_tags_and_context_managers():
    assert core.TraceTag() == core.TraceTag()  # as in JAX: every tag equal
    with core.take_current_trace() as trace, core.set_current_trace(trace):
        assert float(jnp.sin(0.0)) == 0.0
    assert core.find_top_trace(()) is trace
