"""``logsumexp``, ``softmax`` and ``log_softmax``, which lamina.numpy exports (outside
``jax.numpy``'s names) for ``jax.nn`` and ``jax.scipy.special``: values against NumPy,
and JAX 0.10.2's handling of infinities, masks, negative weights and integers."""

import numpy as np

import lamina.interpreters as api
import lamina.numpy as jnp

inf, nan = np.inf, np.nan
A = np.array([[0.5, -inf, 2.0], [-inf, -inf, -inf], [1.0, inf, 0.0]], np.float32)
WHERE = np.array([[True, False, True], [True, True, False], [False, False, False]])


def test_logsumexp():
    x = np.random.default_rng(0).normal(size=(3, 4)) * 30
    b = np.array([0.5, 1.0, 2.0, 0.0])
    with api.enable_x64():
        want = np.log(np.sum(b * np.exp(x), axis=1))
        np.testing.assert_allclose(jnp.logsumexp(x, axis=1, b=b), want, rtol=1e-12)
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(jnp.logsumexp(A, axis=1), [2.2014134, -inf, inf], rtol=1e-6)
    got = jnp.logsumexp(A, axis=1, where=WHERE)
    np.testing.assert_allclose(got, [2.2014134, -inf, -inf], rtol=1e-6)
    b = np.array([1.0, -1.0, -3.0], np.float32)
    np.testing.assert_array_equal(jnp.logsumexp(A, axis=1, b=b), [nan, -inf, nan])
    value, sign = jnp.logsumexp(A, axis=1, b=b, return_sign=True)
    np.testing.assert_allclose(value, [3.0213242, -inf, inf], rtol=1e-6)
    np.testing.assert_array_equal(sign, [-1.0, 0.0, -1.0])
    got = jnp.logsumexp(np.array([1 + 1j, 2 - 1j], np.complex64))
    np.testing.assert_allclose(got, 1.9063238 - 0.62382865j, rtol=1e-6)
    got = jnp.logsumexp(np.arange(3), keepdims=True)
    assert got.shape == (1,) and got.dtype == np.float32
    assert not jnp.logsumexp(2.0).weak_type
    grad = api.grad(lambda x: jnp.logsumexp(x, where=WHERE[0]))(A[0])
    np.testing.assert_allclose(grad, [0.18242551, 0.0, 0.81757444], rtol=1e-6)


def test_softmax_and_log_softmax():
    x = np.random.default_rng(1).normal(size=(2, 5)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(jnp.softmax(x), e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    want = np.log(e / e.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(jnp.log_softmax(x), want, rtol=1e-5)
    # Recorded from JAX 0.10.2: -inf rows and +inf give nan; masked entries are 0.
    got = jnp.softmax(A, axis=1)
    np.testing.assert_allclose(got[0], [0.18242551, 0.0, 0.81757444], rtol=1e-6)
    assert np.isnan(got[1:]).all()
    got = jnp.softmax(A, axis=1, where=WHERE)
    np.testing.assert_allclose(got[0], [0.18242551, 0.0, 0.81757444], rtol=1e-6)
    np.testing.assert_array_equal(got[1:], [[nan, nan, 0.0], [0.0, 0.0, 0.0]])
    assert np.isnan(jnp.log_softmax(A, axis=(0, 1))).all()
    got = jnp.log_softmax(np.arange(3))
    np.testing.assert_allclose(got, [-2.407606, -1.4076059, -0.40760595], rtol=1e-6)
    grad = api.grad(lambda x: (jnp.softmax(x) * np.arange(3.0)).sum())(A[0])
    np.testing.assert_allclose(grad, [-0.2982929, 0.0, 0.29829288], rtol=1e-5)
    with api.softmax_custom_jvp(True):
        custom = api.grad(lambda x: (jnp.softmax(x) * np.arange(3.0)).sum())(A[0])
    np.testing.assert_allclose(custom, grad, rtol=1e-5)
