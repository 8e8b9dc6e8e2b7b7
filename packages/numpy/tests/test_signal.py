"""lamina.numpy signal functions against NumPy: convolve / correlate (every mode,
either argument longer, complex, preferred_element_type), diff (n, axis, prepend,
append, booleans), ediff1d, gradient (spacings, coordinates, axes), trapezoid (x, dx,
axis) and interp (left/right values and 'extrapolate', period, complex fp); dtypes
recorded from JAX 0.10.2, gradients, vmap, jit and errors."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(11)
A = RNG.normal(size=7).astype(np.float32)
V = RNG.normal(size=3).astype(np.float32)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate(mode):
    for a, v in [(A, V), (V, A), (A[:1], V)]:
        np.testing.assert_allclose(
            np.asarray(jnp.convolve(a, v, mode)), np.convolve(a, v, mode), rtol=1e-5, atol=1e-6
        )
        np.testing.assert_allclose(
            np.asarray(jnp.correlate(a, v, mode)), np.correlate(a, v, mode), rtol=1e-5, atol=1e-6
        )
    z = (A + 1j * A[::-1]).astype(np.complex64)
    w = (V - 2j * V).astype(np.complex64)
    got = jnp.correlate(z, w, mode)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(got), np.correlate(z, w, mode), rtol=1e-5, atol=1e-5)


def test_convolve_dtypes_and_errors():
    ints = np.arange(3, dtype=np.int32)
    assert jnp.convolve(ints, ints).dtype == np.float32
    got = jnp.convolve(ints, np.arange(2, dtype=np.int32), preferred_element_type=np.int32)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), [0, 0, 1, 2])
    assert jnp.convolve(ints.astype(np.float16), ints).dtype == np.float16
    with pytest.raises(ValueError, match="only support 1-dimensional inputs"):
        jnp.convolve(np.ones((2, 2)), V)
    with pytest.raises(ValueError, match="inputs cannot be empty"):
        jnp.correlate(np.ones(0, np.float32), V)
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.convolve(A, V, "circular")
    check_grads(lambda a, v: jnp.convolve(a, v, "same"), (A, V), order=2, eps=1e-3)
    got = vmap(lambda a: jnp.correlate(a, V, "full"))(A.reshape(1, 7).repeat(2, 0))
    np.testing.assert_allclose(np.asarray(got[1]), np.correlate(A, V, "full"), rtol=1e-5)


def test_diff_and_ediff1d():
    x = RNG.normal(size=(3, 5)).astype(np.float32)
    for kwargs in [
        dict(),
        dict(n=2),
        dict(axis=0),
        dict(n=3, axis=1, prepend=1.5, append=x[:, :2]),
        dict(n=0),
        dict(prepend=x[:1], axis=0),
    ]:
        np.testing.assert_allclose(np.asarray(jnp.diff(x, **kwargs)), np.diff(x, **kwargs), 1e-6)
    flags = np.array([True, True, False, True])
    got = jnp.diff(flags)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(got), np.diff(flags))
    assert jnp.diff(np.arange(4, dtype=np.int8)).dtype == np.int8
    got = jnp.ediff1d(x, to_begin=np.array([9.0, 8.0]), to_end=3)
    np.testing.assert_allclose(np.asarray(got), np.ediff1d(x, to_begin=[9.0, 8.0], to_end=3), 1e-6)
    got = jnp.ediff1d(np.arange(4, dtype=np.int8), to_end=1.7)  # cast to the input's dtype
    assert got.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(got), [1, 1, 1, 1])
    with pytest.raises(ValueError, match="order must be non-negative"):
        jnp.diff(x, n=-1)
    with pytest.raises(ValueError, match="diff requires input that is at least one dimensional"):
        jnp.diff(np.float32(1))
    check_grads(lambda x: jnp.diff(x, n=2, axis=1), (x,), order=1)


def test_gradient():
    f = RNG.normal(size=(4, 5)).astype(np.float32)
    for got, want in zip(jnp.gradient(f), np.gradient(f), strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    coords = np.cumsum(RNG.uniform(0.5, 1.5, 5)).astype(np.float32)
    for got, want in zip(jnp.gradient(f, 0.5, coords), np.gradient(f, 0.5, coords), strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)
    got = jnp.gradient(f, 2.0, axis=-1)
    np.testing.assert_allclose(np.asarray(got), np.gradient(f, 2.0, axis=-1), 1e-5, 1e-6)
    assert jnp.gradient(np.arange(4)).dtype == np.float32
    assert jnp.gradient(f, axis=()) == []
    with pytest.raises(NotImplementedError, match="The 'edge_order' argument"):
        jnp.gradient(f, edge_order=2)
    with pytest.raises(ValueError, match="at least 2 elements are required"):
        jnp.gradient(np.ones((1, 3)))
    with pytest.raises(TypeError, match="Invalid number of spacing arguments 3"):
        jnp.gradient(f, 1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="Spacing arrays must have the same length"):
        jnp.gradient(f, coords[:3], axis=1)
    check_grads(lambda f: jnp.gradient(f, coords, axis=1), (f,), order=1)


def test_trapezoid():
    y = RNG.normal(size=(3, 6)).astype(np.float32)
    x = np.cumsum(RNG.uniform(0.1, 1, 6)).astype(np.float32)
    cases = [
        ((y,), {}),
        ((y,), dict(dx=0.25, axis=0)),
        ((y, x), {}),
        ((y, np.tile(x, (3, 1))), dict(axis=1)),
        ((y[0],), dict(dx=x[:5])),
    ]
    for args, kwargs in cases:
        got = jnp.trapezoid(*args, **kwargs)
        np.testing.assert_allclose(np.asarray(got), np.trapezoid(*args, **kwargs), 1e-5, 1e-6)
    got = jnp.trapezoid(np.arange(4))
    assert got.dtype == np.float32 and float(got) == 4.5
    check_grads(lambda y, x: jnp.trapezoid(y, x), (y, x), order=1)
    got = vmap(lambda row: jnp.trapezoid(row, x))(y)
    np.testing.assert_allclose(np.asarray(got), np.trapezoid(y, x), rtol=1e-5)


def test_interp():
    xp = np.cumsum(RNG.uniform(0.2, 1.0, 6)).astype(np.float32)
    fp = RNG.normal(size=6).astype(np.float32)
    x = np.linspace(-1, 6, 29).astype(np.float32)
    for kwargs in [{}, dict(left=-5.0, right=7.0), dict(period=2.5)]:
        np.testing.assert_allclose(
            np.asarray(jnp.interp(x, xp, fp, **kwargs)),
            np.interp(x, xp, fp, **kwargs),
            rtol=1e-4,
            atol=1e-5,
        )
    complex_fp = (fp + 1j * fp[::-1]).astype(np.complex64)
    got = jnp.interp(x, xp, complex_fp)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(got), np.interp(x, xp, complex_fp), 1e-5, 1e-6)
    both = jnp.interp(x, xp, fp, left="extrapolate", right="extrapolate")
    outside = (x < xp[0]) | (x > xp[-1])
    slope_left = (fp[1] - fp[0]) / (xp[1] - xp[0])
    left = x < xp[0]
    np.testing.assert_allclose(
        np.asarray(both)[left], fp[0] + slope_left * (x[left] - xp[0]), rtol=1e-5
    )
    assert np.isfinite(np.asarray(both)[outside]).all()
    ints = jnp.interp(np.array([1, 2]), np.array([0, 3]), np.array([0, 3]))
    assert ints.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(ints), [1.0, 2.0])
    with pytest.raises(ValueError, match="xp and fp must be one-dimensional arrays of equal size"):
        jnp.interp(x, xp, fp[:3])
    with pytest.raises(ValueError, match="the only valid string value of `left`"):
        jnp.interp(x, xp, fp, left="constant")
    with pytest.raises(ValueError, match="complex x values not supported"):
        jnp.interp(x.astype(np.complex64), xp, fp)
    with pytest.raises(ValueError, match="period must be a scalar"):
        jnp.interp(x, xp, fp, period=np.ones(2))
    inside = x[(x > xp[0] + 0.01) & (x < xp[-1] - 0.01)][:4]
    check_grads(lambda x, fp: jnp.interp(x, xp, fp), (inside, fp), order=1)
    got = jit(lambda x, fp: jnp.interp(x, xp, fp, period=3.0))(x, fp)
    np.testing.assert_allclose(np.asarray(got), np.interp(x, xp, fp, period=3.0), 1e-4, 1e-5)
