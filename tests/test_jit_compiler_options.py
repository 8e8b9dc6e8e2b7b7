"""``jit(f, compiler_options=...)``: the options reach XLA and key the executable, as in
JAX 0.10.2 (errors recorded from JAX 0.10.2)."""

import re

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp


def _double(x):
    return x * 2


def test_valid_options_compile_and_run():
    x = jnp.ones(3)
    for options in ({"xla_embed_ir_in_executable": True}, {"xla_backend_optimization_level": 0}):
        np.testing.assert_array_equal(jax.jit(_double, compiler_options=options)(x), [2, 2, 2])


@pytest.mark.parametrize(
    "options, message",
    [
        ({"bogus_option_name": True}, "No such compile option: 'bogus_option_name'"),
        (
            {"xla_embed_ir_in_executable": "notabool"},
            "While setting option xla_embed_ir_in_executable, 'notabool' is not a valid "
            "bool value.",
        ),
        (
            {"xla_backend_optimization_level": "x"},
            "While setting option xla_backend_optimization_level, 'x' is not a valid int32 value.",
        ),
    ],
)
def test_bad_options_raise_as_jax(options, message):
    with pytest.raises(jax.errors.JaxRuntimeError, match="INVALID_ARGUMENT: " + message):
        jax.jit(_double, compiler_options=options)(jnp.ones(3))


def test_options_key_the_executable():
    # The same function compiled without options first: the call with a bad option
    # compiles anew (and XLA rejects it) rather than reusing that executable.
    def f(x):
        return x + 1

    x = jnp.ones(3)
    np.testing.assert_array_equal(jax.jit(f)(x), [2, 2, 2])
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option: 'bogus'"):
        jax.jit(f, compiler_options={"bogus": 1})(x)
    good = jax.jit(f, compiler_options={"xla_embed_ir_in_executable": True})
    good(x)
    good(x)
    assert good._cache_size() == 1


def test_lowered_compile_adds_to_jit_options():
    # Recorded from JAX 0.10.2: jit's options stay when compile() is given more.
    lowered = jax.jit(_double, compiler_options={"bogus": 1}).lower(jnp.ones(3))
    for more in (None, {"xla_embed_ir_in_executable": True}):
        with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option: 'bogus'"):
            lowered.compile(more)


def test_transformations_keep_the_options():
    # Recorded from JAX 0.10.2: vmap, jvp and grad of the jitted function still compile
    # with its options.
    g = jax.jit(lambda x: jnp.sin(x).sum(), compiler_options={"bogus": True})
    x = jnp.ones(3)
    for run in (jax.grad(g), jax.vmap(g), lambda x: jax.jvp(g, (x,), (x,))):
        with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option: 'bogus'"):
            run(x)
    good = jax.jit(
        lambda x: jnp.sin(x).sum(), compiler_options={"xla_embed_ir_in_executable": True}
    )
    np.testing.assert_allclose(jax.vmap(good)(x), np.sin(np.ones(3)), rtol=1e-6)


def test_nested_jit_with_options_is_an_error():
    # Recorded from JAX 0.10.2 (its source info also has the column).
    inner = jax.jit(_double, compiler_options={"xla_embed_ir_in_executable": True})
    message = (
        "`compiler_options` can only be passed to top-level `jax.jit`. Got "
        "compiler_options={'xla_embed_ir_in_executable': True} specified on a nested jit "
        "with name: _double and source info: "
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        jax.jit(lambda x: inner(x))(jnp.ones(3))
    with pytest.raises(ValueError, match="can only be passed to top-level"):
        jax.make_jaxpr(inner)(jnp.ones(3))
    x = jnp.ones(3)
    with pytest.raises(ValueError, match="can only be passed to top-level"):
        jax.grad(lambda x: inner(x).sum())(x)


def test_stages_and_eval_shape_of_a_jit_with_options():
    # Recorded from JAX 0.10.2: eval_shape traces a jitted function as its own call, so
    # its options are no error there (nor in trace/lower/compile).
    g = jax.jit(_double, compiler_options={"xla_embed_ir_in_executable": True})
    x = jnp.ones(3)
    out = jax.eval_shape(g, x)
    assert (out.shape, out.dtype) == ((3,), np.float32)
    assert str(g.trace(x).jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }"
    np.testing.assert_array_equal(g.lower(x).compile()(x), [2, 2, 2])
