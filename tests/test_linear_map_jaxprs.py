"""The Jaxprs of the linear maps ``linear_transpose`` and ``linearize`` return, and the
name ``jit`` gives a partial function: as JAX 0.10.2 prints them."""

import functools

import numpy as np

import lamina as jax
import lamina.numpy as jnp

ONES = np.ones(3, np.float32)


def _transpose():
    return jax.linear_transpose(lambda x: x * jnp.sin(jnp.arange(3.0)), ONES)


def test_linear_transpose_computes_what_does_not_depend_on_the_input_now():
    t = _transpose()
    # recorded from JAX 0.10.2: sin(arange(3)) is a constant of the transpose
    assert str(jax.make_jaxpr(t)(ONES)) == (
        "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }"
    )
    (out,) = t(ONES)
    np.testing.assert_allclose(out, np.sin(np.arange(3.0)), rtol=1e-6)


def test_jit_of_a_linear_transpose_is_named_for_the_transposed_function():
    # recorded from JAX 0.10.2
    assert str(jax.make_jaxpr(jax.jit(_transpose()))(ONES)) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = jit[\n"
        "      name=transposed_fun\n"
        "      jaxpr={ lambda c:f32[3]; a:f32[3]. let b:f32[3] = mul a c in (b,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )


def test_jit_of_a_functools_partial_is_named_for_its_function():
    def scale(a, x):
        return a * x

    jaxpr = jax.make_jaxpr(jax.jit(functools.partial(scale, 2.0)))(1.0)
    assert jaxpr.eqns[0].params["name"] == "scale"  # recorded from JAX 0.10.2


def test_linear_transpose_with_an_output_that_does_not_depend_on_the_input():
    t = jax.linear_transpose(lambda x: (x, jnp.zeros(2)), 1.0)
    ct = (1.0, np.ones(2, np.float32))
    # recorded from JAX 0.10.2
    assert str(jax.make_jaxpr(t)(ct)) == "{ lambda ; a:f32[] b:f32[2]. let  in (a,) }"
    assert t(ct) == (1.0,)


def test_linearized_function_is_evaluated_inline():
    _, f_jvp = jax.linearize(lambda x: jnp.sin(x) * jnp.arange(3.0), ONES)
    # recorded from JAX 0.10.2: no jit equation around the linear map
    assert str(jax.make_jaxpr(f_jvp)(ONES)) == (
        "{ lambda a:f32[3] b:f32[3]; c:f32[3]. let\n"
        "    d:f32[3] = mul c a\n"
        "    e:f32[3] = mul d b\n"
        "  in (e,) }"
    )
    np.testing.assert_allclose(f_jvp(ONES), np.cos(1.0) * np.arange(3.0), rtol=1e-6)
