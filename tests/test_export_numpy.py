"""lamina.export with lamina.numpy programs (values recorded from JAX 0.10.2)."""

import numpy as np

import lamina as jax
import lamina.numpy as jnp
from lamina import export


def test_jax_s_docstring_example():
    exported = export.export(jnp.sin)(np.arange(4, dtype=np.float32))
    assert repr(exported.in_avals) == "(ShapedArray(float32[4]),)"
    rehydrated = export.deserialize(exported.serialize())
    assert rehydrated.fun_name == "sin"
    out = rehydrated.call(np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32))
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(out, [0.09983342, 0.19866933, 0.29552022, 0.38941833], rtol=1e-6)


def test_linear_algebra_round_trip():
    a = np.array([[4, 1, 0], [1, 3, 1], [0, 1, 2]], np.float32)
    b = np.array([1, 2, 3], np.float32)
    exp = export.export(jax.jit(jnp.linalg.solve))(a, b)
    again = export.deserialize(exp.serialize(vjp_order=1))
    np.testing.assert_allclose(again.call(a, b), np.linalg.solve(a, b), rtol=1e-5)
    g = jax.grad(lambda b: again.call(a, b).sum())(b)
    np.testing.assert_allclose(g, np.linalg.solve(a.T, np.ones(3)), rtol=1e-5)


def test_training_step_through_an_exported_model():
    def model(params, x):
        return jnp.tanh(x @ params["w"] + params["b"])

    params = {"w": np.full((3, 2), 0.5, np.float32), "b": np.zeros(2, np.float32)}
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    exp = export.deserialize(export.export(jax.jit(model))(params, x).serialize(vjp_order=1))

    def loss(params):
        return jnp.mean(exp.call(params, x) ** 2)

    def direct(params):
        return jnp.mean(model(params, x) ** 2)

    grads, expected = jax.grad(loss)(params), jax.grad(direct)(params)
    for k in params:
        np.testing.assert_allclose(grads[k], expected[k], rtol=1e-5)
    np.testing.assert_allclose(jax.jit(loss)(params), direct(params), rtol=1e-6)
