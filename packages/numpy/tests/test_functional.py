"""lamina.numpy.vectorize, apply_along_axis and apply_over_axes against NumPy and
Python loops, with JAX 0.10.2's errors."""

import numpy as np
import pytest

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import jit, make_jaxpr

RNG = np.random.default_rng(3)


def _rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _row_sum(x):
    return lax.reduce_sum(x, (x.ndim - 1,))


def test_vectorize_elementwise_broadcasts():
    calls = []

    def clipped(x, y):
        calls.append(x.shape)
        return lax.max(x, y)

    f = jnp.vectorize(clipped)
    a, b = _rand(3, 1), _rand(4)
    out = f(a, b)
    np.testing.assert_array_equal(out, np.maximum(a, b))
    assert calls == [()]  # pyfunc traced once, on scalars
    out = f(np.float32(2.0), np.float32(1.0))
    assert float(out) == 2.0


def test_vectorize_with_signature():
    def matvec(m, v):
        assert m.ndim == 2 and v.ndim == 1
        return lax.dot_general(m, v, (((1,), (0,)), ((), ())))

    f = jnp.vectorize(matvec, signature="(n,m),(m)->(n)")
    m, v = _rand(5, 1, 2, 3), _rand(4, 3)
    out = f(m, v)
    assert out.shape == (5, 4, 2)
    np.testing.assert_allclose(out, np.einsum("abij,bj->abi", m, v), rtol=1e-5)

    def stats(x):
        return lax.reduce_max(x, (0,)), lax.reduce_min(x, (0,))

    x = _rand(2, 3, 5)
    high, low = jnp.vectorize(stats, signature="(n)->(),()")(x)
    np.testing.assert_array_equal(high, x.max(-1))
    np.testing.assert_array_equal(low, x.min(-1))
    # size-1 loop axes that no argument maps over come back as size 1
    out = jnp.vectorize(_row_sum, signature="(n)->()")(_rand(1, 3))
    assert out.shape == (1,)


def test_vectorize_excluded_and_keywords():
    def scaled(x, scale, *, offset):
        return x * scale + offset

    f = jnp.vectorize(scaled, excluded={1})
    x = _rand(3)
    out = f(x, 2.0, offset=np.ones(3, np.float32))
    np.testing.assert_allclose(out, 2 * x + 1, rtol=1e-6)
    g = jnp.vectorize(scaled, excluded={1, "offset"})
    np.testing.assert_allclose(g(x, 3.0, offset=1.0), 3 * x + 1, rtol=1e-6)
    h = jnp.vectorize(lambda x, axis: lax.reduce_sum(x, (axis,)), excluded={1},
                      signature="(n,m)->(n)")  # fmt: skip
    m = _rand(2, 3, 4)
    np.testing.assert_allclose(h(m, 1), m.sum(-1), rtol=1e-5)
    closed = make_jaxpr(jnp.vectorize(lambda a, b: a * b))(_rand(3), _rand(3))
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["mul"]
    np.testing.assert_allclose(jit(jnp.vectorize(lambda a: a * 2))(x), 2 * x, rtol=1e-6)


def test_vectorize_errors():
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(_row_sum, signature="(n->()")(_rand(3))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        jnp.vectorize(_row_sum, signature="(n,m)->()")(_rand(3))
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n': 4 vs 3"):
        jnp.vectorize(lambda a, b: a, signature="(n),(n)->(n)")(_rand(3), _rand(4))
    with pytest.raises(ValueError, match=r"output shape \(\) does not match core dimensions"):
        jnp.vectorize(_row_sum, signature="(n)->(n)")(_rand(3))
    with pytest.raises(TypeError, match="wrong number of positional arguments: expected 2"):
        jnp.vectorize(lambda a, b: a, signature="(n),(n)->(n)")(_rand(3))
    with pytest.raises(TypeError, match="output must be a tuple"):
        jnp.vectorize(_row_sum, signature="(n)->(),()")(_rand(3))
    with pytest.raises(TypeError, match="can only exclude integer or string arguments"):
        jnp.vectorize(_row_sum, excluded={1.5})
    with pytest.raises(ValueError, match="contains negative numbers"):
        jnp.vectorize(_row_sum, excluded={-1})
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.vectorize(lax.add)(_rand(3), _rand(4))


def test_apply_along_axis():
    a = _rand(2, 3, 4)
    for axis in (0, 1, 2, -1):
        out = jnp.apply_along_axis(lambda v: lax.reduce_sum(v * v, (0,)), axis, a)
        np.testing.assert_allclose(out, np.apply_along_axis(lambda v: (v * v).sum(), axis, a),
                                   rtol=1e-5)  # fmt: skip

    def outer_self(v, scale, *, shift):
        return lax.broadcast_in_dim(v, (v.shape[0], v.shape[0]), (0,)) * scale + shift

    out = jnp.apply_along_axis(outer_self, 1, a, 2.0, shift=1.0)
    expected = np.apply_along_axis(lambda v: np.repeat(v[:, None], 3, 1) * 2 + 1, 1, a)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="axis 3 is out of bounds"):
        jnp.apply_along_axis(_row_sum, 3, a)
    with pytest.raises(TypeError, match="apply_along_axis requires ndarray or scalar"):
        jnp.apply_along_axis(_row_sum, 0, [1.0, 2.0])


def test_apply_over_axes():
    a = _rand(2, 3, 4)

    def total(x, axis):
        return lax.reduce_sum(x, (axis,))

    out = jnp.apply_over_axes(total, a, [0, 2])
    np.testing.assert_allclose(out, np.apply_over_axes(np.sum, a, [0, 2]), rtol=1e-5)

    def keep(x, axis):
        return lax.expand_dims(lax.reduce_max(x, (axis,)), (axis,))

    out = jnp.apply_over_axes(keep, a, (1,))
    np.testing.assert_array_equal(out, a.max(1, keepdims=True))
    with pytest.raises(ValueError, match="function is not returning an array of the correct"):
        jnp.apply_over_axes(lambda x, axis: lax.reduce_sum(x, (0, 1)), a, [0])
