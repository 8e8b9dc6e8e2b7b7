"""lamina.numpy's polynomial functions (poly, polyadd, polysub, polymul, polydiv,
polyder, polyint, polyval, polyfit, roots) against NumPy, with JAX 0.10.2's dtypes,
edge cases and errors (values recorded from JAX where JAX differs from NumPy)."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(2)


def _close(actual, expected, rtol=1e-5, atol=1e-5):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def _sorted_complex(x):
    x = np.asarray(x)
    return x[np.lexsort((x.imag, x.real))]


def test_poly():
    out = jnp.poly(np.array([1, 2, 3]))
    assert out.dtype == np.float32
    _close(out, [1, -6, 11, -6])
    roots = RNG.standard_normal(5).astype(np.float32)
    _close(jnp.poly(roots), np.poly(roots), rtol=1e-4, atol=1e-4)
    z = np.array([1j, -1j], np.complex64)
    out = jnp.poly(z)
    assert out.dtype == np.complex64
    _close(out, [1, 0, 1])
    matrix = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    out = jnp.poly(matrix)  # characteristic polynomial, complex (eigenvalues) as in JAX
    assert out.dtype == np.complex64
    _close(out, np.poly(matrix), rtol=1e-5, atol=1e-5)
    out = jnp.poly(np.zeros((0,), np.float32))
    assert out.shape == () and float(out) == 1.0
    out = jnp.poly(2.0)
    assert out.dtype == np.float32 and not out.weak_type
    _close(out, [1, -2])
    with pytest.raises(ValueError, match="input must be 1d or non-empty square 2d array"):
        jnp.poly(np.ones((2, 3)))


def test_polyadd_polysub():
    out = jnp.polyadd(np.array([1, 2, 3]), np.array([1.0, 2.0], np.float32))
    assert out.dtype == np.float32
    _close(out, [1, 3, 5])
    out = jnp.polyadd(np.array([1, 2], np.int8), np.array([1, 2, 3], np.int8))
    assert out.dtype == np.int8
    _close(out, [1, 3, 5])
    _close(jnp.polyadd(np.ones((3, 2)), np.ones((2, 2))), [[1, 1], [2, 2], [2, 2]])
    out = jnp.polysub(np.array([1, 2, 3]), np.array([1, 2, 5, 6]))
    assert out.dtype == np.int32
    _close(out, np.polysub([1, 2, 3], [1, 2, 5, 6]))
    with pytest.raises(IndexError):
        jnp.polyadd(np.array([1.0, 2.0]), 2.0)
    with pytest.raises(TypeError, match="neg does not accept dtype bool"):
        jnp.polysub(np.array([True]), np.array([True]))


def test_polymul():
    a, b = RNG.standard_normal(5).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    _close(jnp.polymul(a, b), np.polymul(a, b))
    out = jnp.polymul(np.array([1, 2, 3]), np.array([1, 2]))
    assert out.dtype == np.float32
    _close(out, [1, 4, 7, 6])
    out = jnp.polymul(np.array([0, 0, 1, 2, 3.0]), np.array([0, 1, 2]), trim_leading_zeros=True)
    _close(out, [1, 4, 7, 6])
    _close(jnp.polymul(np.zeros((0,)), np.array([1, 2])), [0, 0])
    _close(jnp.polymul(np.array([1j, 2]), np.array([1, 2])), [1j, 2 + 2j, 4])
    with pytest.raises(TypeError, match="len"):
        jnp.polymul(2.0, np.array([1, 2]))
    with pytest.raises(ConcretizationTypeError):
        jit(lambda x: jnp.polymul(x, x, trim_leading_zeros=True))(np.array([0.0, 1.0]))


def test_polydiv():
    q, r = jnp.polydiv(np.array([1, 2, 3, 4]), np.array([1, 2]))
    assert q.dtype == r.dtype == np.float32
    _close(q, [1, 0, 3])
    _close(r, [0, 0, 0, -2])
    u, v = RNG.standard_normal(6).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    q, r = jnp.polydiv(u, v)
    np_q, np_r = np.polydiv(u.astype(np.float64), v)
    _close(q, np_q, rtol=1e-4, atol=1e-4)
    _close(np.asarray(r)[-len(np_r) :], np_r, rtol=1e-4, atol=1e-4)
    q, r = jnp.polydiv(np.array([1, 2]), np.array([1, 2, 3]))
    _close(q, [0])
    _close(r, [1, 2])
    q, r = jnp.polydiv(np.array([1.0, 3, 3, 1]), np.array([1.0, 1]), trim_leading_zeros=True)
    _close(q, [1, 2, 1])
    assert r.shape == (0,)
    q, r = jit(jnp.polydiv)(np.array([1.0, 3, 3, 1]), np.array([1.0, 1]))
    _close(r, [0, 0, 0, 0])


def test_polyder_polyint():
    p = np.array([1, 2, 3, 4])
    out = jnp.polyder(p)
    assert out.dtype == np.float32
    _close(out, [3, 4, 3])
    _close(jnp.polyder(p, 2), [6, 4])
    _close(jnp.polyder(p, 0), p)
    assert jnp.polyder(p, 5).shape == (0,)
    _close(jnp.polyint(p), np.polyint(p))
    _close(jnp.polyint(p, 2, np.array([3, 4])), np.polyint(p, 2, [3, 4]))
    # JAX repeats a scalar k for every integration (NumPy's k=5 too)
    _close(jnp.polyint(p, 2, 5), [0.05, 1 / 6, 0.5, 2.0, 5.0, 5.0])
    _close(jnp.polyint(p, 0), p)
    with pytest.raises(ValueError, match="Order of derivative must be positive"):
        jnp.polyder(p, -1)
    with pytest.raises(ValueError, match="Order of integral must be positive"):
        jnp.polyint(p, -1)
    with pytest.raises(ValueError, match="k must be a scalar or a rank-1 array of length 1 or m"):
        jnp.polyint(p, 2, np.array([3, 4, 5]))


def test_polyval():
    p, x = RNG.standard_normal(6).astype(np.float32), RNG.standard_normal(7).astype(np.float32)
    for unroll in (1, 16):
        _close(jnp.polyval(p, x, unroll=unroll), np.polyval(p, x), rtol=1e-4, atol=1e-4)
    out = jnp.polyval(np.array([1, 2, 3]), np.array([1, 2]))
    assert out.dtype == np.int32
    _close(out, [6, 11])
    out = jnp.polyval(np.array([1, 2, 3], np.int8), 2)
    assert out.dtype == np.int8 and int(out) == 11
    out = jnp.polyval(np.array([1.0, 2, 3], np.float32), 2.0)
    assert out.dtype == np.float32 and not out.weak_type
    p2 = RNG.standard_normal((3, 4)).astype(np.float32)
    x2 = RNG.standard_normal((2, 1)).astype(np.float32)
    expected = sum(p2[i] * x2 ** (2 - i) for i in range(3))
    _close(jnp.polyval(p2, x2), expected, rtol=1e-4, atol=1e-4)
    with pytest.raises(IndexError):
        jnp.polyval(2.0, np.ones(3))


def test_roots():
    # lengths 3 and 6 only: each new length compiles an eigenvalue problem
    out = jnp.roots(np.array([1, -3, 2]))
    assert out.dtype == np.complex64
    _close(_sorted_complex(out), [1, 2])
    p = RNG.standard_normal(3).astype(np.float32)
    _close(_sorted_complex(jnp.roots(p)), _sorted_complex(np.roots(p)), rtol=1e-3, atol=1e-3)
    _close(_sorted_complex(jnp.roots(np.array([0, 0, 0, 1.0, -3, 2]))), [1, 2])
    # recorded from JAX: zero roots rotated to the end, one NaN per leading zero
    keeping_length = jit(lambda p: jnp.roots(p, strip_zeros=False))
    out = keeping_length(np.array([0, 0, 1, -3, 2, 0.0]))
    assert out.shape == (5,) and out.dtype == np.complex64
    _close(_sorted_complex(out[:3]), [0, 1, 2])
    assert np.isnan(np.asarray(out[3:])).all()
    assert np.isnan(np.asarray(keeping_length(np.zeros(6)))).all()
    assert jnp.roots(np.array([3.0])).shape == (0,)
    assert jnp.roots(np.zeros(3)).shape == (0,)
    with pytest.raises(ValueError, match="Input must be a rank-1 array"):
        jnp.roots(np.ones((2, 2)))
    with pytest.raises(ConcretizationTypeError, match="pass strip_zeros=False"):
        jit(jnp.roots)(np.array([1.0, -3, 2]))


def test_polyfit():
    # one compilation per static configuration: full, weighted 2-D, cov
    x = np.linspace(-1, 1, 12).astype(np.float32)
    y = (2 * x**3 - x + 0.5 + 0.01 * RNG.standard_normal(12)).astype(np.float32)
    c, resid, rank, s, rcond = jnp.polyfit(x, y, 3, full=True)
    np_c, np_resid, np_rank, np_s, _ = np.polyfit(x, y, 3, full=True)
    _close(c, np_c, rtol=1e-3, atol=1e-3)
    _close(resid, np_resid, rtol=1e-2, atol=1e-6)
    assert rank.dtype == np.int32 and int(rank) == np_rank
    _close(s, np_s, rtol=1e-4)
    assert rcond.weak_type and float(rcond) == pytest.approx(12 * np.finfo(np.float32).eps)
    w = np.linspace(1, 2, 12).astype(np.float32)
    ys = np.stack([y, 2 * y], 1)
    _close(jnp.polyfit(x, ys, 3, w=w), np.polyfit(x, ys, 3, w=w), rtol=1e-3, atol=1e-3)
    c, cov = jnp.polyfit(x, y, 2, cov=True)
    np_c, np_cov = np.polyfit(x, y, 2, cov=True)
    _close(c, np_c, rtol=1e-3, atol=1e-3)
    _close(cov, np_cov, rtol=1e-2, atol=1e-6)
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        jnp.polyfit(x, y[:3], 2)
    with pytest.raises(ValueError, match="number of data points must exceed order"):
        jnp.polyfit(x[:3], y[:3], 2, cov=True)
    with pytest.raises(ValueError, match="expected deg >= 0"):
        jnp.polyfit(x, y, -1)
    with pytest.raises(TypeError, match="expected 1D vector for x"):
        jnp.polyfit(x[:, None], y, 1)
    with pytest.raises(ValueError, match="not inexact"):  # JAX: finfo of an integer x
        jnp.polyfit(np.arange(6), np.arange(6), 1)


def test_grads_and_vmap():
    p, x = RNG.standard_normal(4).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    check_grads(jnp.polyval, (p, x), order=1, atol=2e-2, rtol=2e-2)
    check_grads(jnp.polymul, (p, x), order=1, atol=2e-2, rtol=2e-2)
    ps = RNG.standard_normal((5, 4)).astype(np.float32)
    _close(vmap(jnp.polyval, in_axes=(0, None))(ps, x), np.stack([np.polyval(q, x) for q in ps]),
           rtol=1e-4, atol=1e-4)  # fmt: skip
    _close(vmap(jnp.polyder)(ps), np.stack([np.polyder(q) for q in ps]))
