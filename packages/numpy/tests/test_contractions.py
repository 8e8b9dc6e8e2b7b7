"""lamina.numpy's products (matmul, dot, vdot, vecdot, inner, outer, tensordot, kron,
matvec, vecmat, cross) and diagonal reductions (trace, diagonal) against NumPy, with
JAX 0.10.2's dtypes, weak types and errors, derivatives and vmap."""

import numpy as np
import pytest

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import jit, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(1)


def _rand(*shape, dtype=np.float32):
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-4, 5, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def _close(actual, expected, rtol=2e-5):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol)


MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (1, 3, 4)),
    ((6, 1, 1, 2, 3), (4, 1, 3, 2)),
    ((2, 0), (0, 3)),
]


@pytest.mark.parametrize("a_shape, b_shape", MATMUL_SHAPES)
def test_matmul_matches_numpy(a_shape, b_shape):
    a, b = _rand(*a_shape), _rand(*b_shape)
    out = jnp.matmul(a, b)
    assert out.dtype == np.float32 and not out.weak_type
    _close(out, np.matmul(a.astype(np.float64), b))


@pytest.mark.parametrize(
    "a_dtype, b_dtype, expected",
    [
        (np.int8, np.float16, np.float16),
        (np.int32, np.int32, np.int32),
        (np.int8, np.uint8, np.int16),
        (np.bool_, np.bool_, np.bool_),
        (np.complex64, np.float32, np.complex64),
    ],
)
def test_matmul_dtypes(a_dtype, b_dtype, expected):
    a, b = _rand(2, 3, dtype=a_dtype), _rand(3, 4, dtype=b_dtype)
    if a_dtype == np.bool_:
        a, b = a != 0, b != 0
    out = jnp.matmul(a, b)
    assert out.dtype == expected
    reference = a.astype(np.complex128) @ b.astype(np.complex128)
    _close(out, (reference != 0) if expected == np.bool_ else reference, rtol=1e-2)


def test_preferred_element_type_and_precision():
    a = _rand(2, 3, dtype=np.int8)
    out = jnp.matmul(a, a.T, preferred_element_type=np.float32)
    assert out.dtype == np.float32 and not out.weak_type
    _close(out, a.astype(np.float32) @ a.T)
    closed = make_jaxpr(lambda x: jnp.matmul(x, x.T, precision="highest"))(_rand(2, 3))
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "dot_general"]
    assert eqn.params["precision"] == (lax.Precision.HIGHEST, lax.Precision.HIGHEST)
    assert eqn.params["preferred_element_type"] == np.float32
    out = jnp.dot(2.0, 3)
    assert out.dtype == np.float32 and out.weak_type and float(out) == 6.0


def test_dot_vdot_inner_outer_tensordot_kron():
    a3, b3 = _rand(2, 3, 4), _rand(5, 4, 6)
    _close(jnp.dot(a3, b3), np.dot(a3, b3))
    vec = _rand(4)
    _close(jnp.dot(a3, vec), np.dot(a3, vec))
    _close(jnp.dot(a3, 2.0), a3 * 2)
    z1, z2 = _rand(2, 3, dtype=np.complex64), _rand(6, dtype=np.complex64)
    out = jnp.vdot(z1, z2)
    assert out.dtype == np.complex64 and out.shape == ()
    _close(out, np.vdot(z1, z2), rtol=1e-5)
    x, y = _rand(2, 3), _rand(4, 5, 3)
    _close(jnp.inner(x, y), np.inner(x, y))
    out = jnp.inner(_rand(2, 3, dtype=np.int8), 2)
    assert out.dtype == np.int8 and out.shape == (2, 3)
    out = jnp.outer(_rand(2, 3, dtype=np.int8), np.ones(2, bool))
    assert out.dtype == np.int8 and out.shape == (6, 2)
    out = jnp.outer(np.array([True, False]), np.array([True, True, False]))
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, np.outer([True, False], [True, True, False]))
    out = jnp.outer(2.0, 3)
    assert out.weak_type and out.shape == (1, 1)
    u, v = _rand(3), _rand(4)
    _close(jnp.outer(u, v), np.outer(u, v))
    t1, t2 = _rand(2, 3, 4), _rand(3, 4, 5)
    _close(jnp.tensordot(t1, t2), np.tensordot(t1, t2))
    _close(jnp.tensordot(t1, t2, 0), np.tensordot(t1, t2, 0))
    _close(jnp.tensordot(t1, t2, ([1, 2], [0, 1])), np.tensordot(t1, t2, ([1, 2], [0, 1])))
    _close(jnp.tensordot(t1, t2, (1, 0)), np.tensordot(t1, t2, (1, 0)))
    _close(jnp.tensordot(t1, t2, [[-2], [-3]]), np.tensordot(t1, t2, [[1], [0]]))
    k1, k2 = _rand(2, 3, dtype=np.int8), _rand(2, dtype=np.float16)
    out = jnp.kron(k1, k2)
    assert out.dtype == np.float16
    _close(out, np.kron(k1.astype(np.float32), k2.astype(np.float32)), rtol=1e-2)
    k3 = _rand(2, 2, 3)
    _close(jnp.kron(k3, u), np.kron(k3, u))
    assert jnp.kron(2.0, 3).weak_type


def test_vecdot_matvec_vecmat():
    x1, x2 = _rand(4, 3, dtype=np.complex64), _rand(5, 1, 3, dtype=np.complex64)
    out = jnp.vecdot(x1, x2)
    assert out.shape == (5, 4) and out.dtype == np.complex64
    _close(out, np.sum(np.conj(x1) * x2, axis=-1), rtol=1e-5)
    y1, y2 = _rand(3, 4), _rand(5, 3, 1)
    _close(jnp.vecdot(y1, y2, axis=-2), np.sum(y1 * y2, axis=-2))
    m, v = _rand(5, 2, 3), _rand(3)
    _close(jnp.matvec(m, v), m @ v)
    w, n = _rand(2, dtype=np.complex64), _rand(2, 3)
    _close(jnp.vecmat(w, n), np.conj(w) @ n, rtol=1e-5)


def test_cross():
    a, b = _rand(4, 3), _rand(3)
    _close(jnp.cross(a, b), np.cross(a, b))
    c, d = _rand(4, 2), _rand(2)
    _close(jnp.cross(c, d), c[:, 0] * d[1] - c[:, 1] * d[0])
    e, f = _rand(4, 2), _rand(4, 3)
    _close(jnp.cross(e, f), np.cross(np.pad(e, [(0, 0), (0, 1)]), f))
    _close(jnp.cross(f, e), np.cross(f, np.pad(e, [(0, 0), (0, 1)])))
    g, h = _rand(3, 4), _rand(4, 3)
    _close(jnp.cross(g, h, axisa=0, axisc=0), np.cross(g, h, axisa=0, axisc=0))
    _close(jnp.cross(g.T, h, axis=1), np.cross(g.T, h, axis=1))
    out = jnp.cross(np.ones((4, 2), np.int32), np.ones(3, np.float32))
    assert out.dtype == np.float32 and out.shape == (4, 3)


def test_trace_and_diagonal():
    a = _rand(3, 4, 5)
    for offset, axis1, axis2 in [(1, 0, 1), (-2, 1, 2), (7, 2, 0)]:
        _close(jnp.trace(a, offset, axis1, axis2), np.trace(a, offset, axis1, axis2))
        _close(jnp.diagonal(a, offset, axis1, axis2), np.diagonal(a, offset, axis1, axis2))
    m = np.arange(9, dtype=np.float32).reshape(3, 3)
    assert float(jit(jnp.trace)(m, 1)) == 6.0  # a traced offset
    for dtype, expected in [(np.int8, np.int32), (np.uint8, np.uint32), (np.bool_, np.int32),
                            (np.float16, np.float16)]:  # fmt: skip
        out = jnp.trace(np.ones((3, 3), dtype))
        assert out.dtype == expected and int(out) == 3
    out = jnp.trace(np.ones((3, 3), np.float16), dtype=np.int8)
    assert out.dtype == np.int8
    out = jnp.diagonal(np.arange(12).reshape(3, 4) > 4, -1)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, np.diagonal(np.arange(12).reshape(3, 4) > 4, -1))


def test_grads():
    a, b = _rand(2, 3), _rand(3, 4)
    check_grads(jnp.matmul, (a, b), order=1, atol=2e-2, rtol=2e-2)
    check_grads(lambda x, y: jnp.tensordot(x, y, ([1, 2], [0, 1])), (_rand(2, 3, 4),
                _rand(3, 4, 2)), order=1, atol=2e-2, rtol=2e-2)  # fmt: skip
    check_grads(jnp.cross, (_rand(4, 3), _rand(4, 2)), order=1, atol=2e-2, rtol=2e-2)


def test_vmap_and_jit_match_loops():
    xs, y = _rand(4, 2, 3), _rand(3, 5)
    _close(vmap(jnp.matmul, in_axes=(0, None))(xs, y), np.stack([x @ y for x in xs]))
    _close(vmap(jnp.dot, in_axes=(None, 0))(y.T, xs.transpose(0, 2, 1)),
           np.stack([y.T @ x.T for x in xs]))  # fmt: skip
    vs, ws = _rand(4, 3), _rand(4, 3)
    _close(vmap(jnp.cross)(vs, ws), np.cross(vs, ws))
    _close(vmap(lambda x: jnp.diagonal(x, 1))(xs), np.stack([np.diagonal(x, 1) for x in xs]))
    _close(jit(jnp.tensordot, static_argnums=2)(xs, y, 1), np.tensordot(xs, y, 1))


def test_errors():
    f = _rand(2, 3)
    with pytest.raises(ValueError, match="matmul input operand 1 must have ndim at least 1"):
        jnp.matmul(f, 2.0)
    with pytest.raises(
        TypeError, match=r"contracting dimensions to have the same shape, got \(3,\) and \(2,\)"
    ):
        jnp.matmul(f, f)
    with pytest.raises(TypeError, match=r"got \(1,\) and \(3,\)"):
        jnp.matmul(_rand(2, 1), _rand(3, 4))
    with pytest.raises(
        ValueError,
        match=r"Incompatible types for matmul arguments: float32\[2,2,3\] and float32\[3,3,4\]",
    ):
        jnp.matmul(_rand(2, 2, 3), _rand(3, 3, 4))
    with pytest.raises(TypeError, match="contracting dimensions to have the same shape"):
        jnp.dot(f, f)
    with pytest.raises(ValueError, match=r"axes must match; got shapes \(3, 4\) and \(3, 5\)"):
        jnp.vecdot(_rand(3, 4), _rand(3, 5))
    with pytest.raises(TypeError, match=r"Number of tensordot axes \(axes 4\) exceeds"):
        jnp.tensordot(_rand(2, 3, 4), _rand(3, 4, 5), 4)
    with pytest.raises(TypeError, match="axes lists to have equal length"):
        jnp.tensordot(_rand(2, 3), _rand(3, 4), [[1], [0, 1]])
    with pytest.raises(TypeError, match="axes argument must be an int"):
        jnp.tensordot(_rand(2, 3), _rand(3, 4), "a")
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'm': 4 vs 3"):
        jnp.matvec(_rand(5, 2, 3), _rand(4))
    with pytest.raises(ValueError, match="Dimension must be either 2 or 3 for cross product"):
        jnp.cross(_rand(4, 4), _rand(3))
    with pytest.raises(ValueError, match="axis1 and axis2 can not be same"):
        jnp.trace(_rand(3, 3), axis1=1, axis2=-1)
    with pytest.raises(ValueError, match="diagonal requires an array of at least two"):
        jnp.diagonal(_rand(3))
    with pytest.raises(TypeError, match="matmul requires ndarray or scalar arguments"):
        jnp.matmul([1, 2], [3, 4])
