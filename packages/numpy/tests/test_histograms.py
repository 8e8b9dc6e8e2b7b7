"""lamina.numpy counting and binning against NumPy: bincount (weights, minlength,
length, and the ConcretizationTypeError under jit without length), digitize (increasing
and decreasing bins, right, NaN), histogram_bin_edges, histogram (bins, range, weights,
density), histogram2d and histogramdd; dtypes recorded from JAX 0.10.2, vmap, jit and
errors."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, jit, vmap

RNG = np.random.default_rng(7)
DATA = RNG.normal(size=60).astype(np.float32)


def test_bincount():
    x = np.array([0, 1, 1, 5, 3, 3, 3], np.int32)
    got = jnp.bincount(x)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), np.bincount(x))
    w = RNG.uniform(size=7).astype(np.float32)
    got = jnp.bincount(x, weights=w, minlength=9)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.bincount(x, weights=w, minlength=9), 1e-6)
    # With `length`, values past the end are dropped and negatives count as 0 (as in JAX).
    got = jit(lambda x: jnp.bincount(x, length=4))(np.array([0, 1, 1, 3, 9, -1], np.int8))
    np.testing.assert_array_equal(np.asarray(got), [2, 2, 0, 1])
    np.testing.assert_array_equal(np.asarray(jnp.bincount(np.array([True, False, True]))), [1, 2])
    assert jnp.bincount(np.zeros(0, np.int32)).shape == (0,)
    with pytest.raises(ConcretizationTypeError, match="pass a static `length` argument"):
        jit(lambda x: jnp.bincount(x))(x)
    with pytest.raises(TypeError, match="x argument to bincount must have an integer type"):
        jnp.bincount(DATA)
    with pytest.raises(ValueError, match="only 1-dimensional input supported"):
        jnp.bincount(x.reshape(1, 7))
    with pytest.raises(ValueError, match="type of weights must match type of x"):
        jnp.bincount(x, weights=w[:3])


def test_digitize():
    increasing = np.array([-1.0, 0.0, 0.5, 2.0], np.float32)
    values = np.array([-3.0, -1.0, 0.2, 0.5, 1.0, 2.0, 7.0, np.nan], np.float32)
    for bins in (increasing, increasing[::-1].copy()):
        for right in (False, True):
            got = jnp.digitize(values, bins, right=right)
            assert got.dtype == np.int32
            np.testing.assert_array_equal(np.asarray(got), np.digitize(values, bins, right=right))
    ints = RNG.integers(-3, 4, (3, 4)).astype(np.int32)
    got = jnp.digitize(ints, np.array([-1, 0, 2], np.int32), method="compare_all")
    np.testing.assert_array_equal(np.asarray(got), np.digitize(ints, [-1, 0, 2]))
    np.testing.assert_array_equal(np.asarray(jnp.digitize(ints, np.zeros(0))), np.zeros((3, 4)))
    with pytest.raises(ValueError, match="bins must be a 1-dimensional array"):
        jnp.digitize(values, np.ones((2, 2)))
    with pytest.raises(ValueError, match="Unsupported method"):
        jnp.digitize(values, increasing, method="bisect")


def test_histogram_bin_edges():
    np.testing.assert_allclose(
        np.asarray(jnp.histogram_bin_edges(DATA, 7)), np.histogram_bin_edges(DATA, 7), 1e-6, 1e-6
    )
    got = jnp.histogram_bin_edges(np.arange(4), 3, range=(1, 1))
    assert got.dtype == np.float32
    # The values JAX 0.10.2 gives (a degenerate range widens by one half on each side).
    np.testing.assert_array_equal(
        np.asarray(got), np.array([0.5, 0.8333333, 1.1666666, 1.5], np.float32)
    )
    edges = np.array([0.0, 1.0, 4.0])
    np.testing.assert_array_equal(np.asarray(jnp.histogram_bin_edges(DATA, edges)), edges)
    with pytest.raises(NotImplementedError, match="string values for `bins`"):
        jnp.histogram_bin_edges(DATA, "auto")
    with pytest.raises(ValueError, match="`range` must be either None or a sequence"):
        jnp.histogram_bin_edges(DATA, 3, range=(1, 2, 3))


def test_histogram():
    for bins, kwargs in [
        (10, {}),
        (4, dict(range=(-1.0, 1.5))),
        (np.array([-2, 0, 0.5, 3]), {}),
        (6, dict(density=True)),
        (5, dict(weights=DATA**2)),
        (np.array([-1.0, 0.0, 2.0]), dict(weights=DATA, density=True)),
    ]:
        counts, edges = jnp.histogram(DATA, bins, **kwargs)
        want_counts, want_edges = np.histogram(DATA, bins, **kwargs)
        assert counts.dtype == np.float32 and edges.dtype == np.float32
        np.testing.assert_allclose(np.asarray(edges), want_edges, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(counts), want_counts, rtol=1e-5, atol=1e-6)
    counts, _ = jnp.histogram(np.arange(5), 3)  # the last bin holds its right edge
    np.testing.assert_array_equal(np.asarray(counts), [2.0, 1.0, 2.0])
    got = jit(lambda d: jnp.histogram(d, 5, range=(-2.0, 2.0))[0])(DATA)
    np.testing.assert_array_equal(np.asarray(got), np.histogram(DATA, 5, range=(-2, 2))[0])
    got = vmap(lambda d: jnp.histogram(d, 4, range=(-1.0, 1.0))[0])(DATA.reshape(3, 20))
    want = [np.histogram(d, 4, range=(-1, 1))[0] for d in DATA.reshape(3, 20)]
    np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(ValueError, match="weights should have the same shape as a"):
        jnp.histogram(DATA, weights=DATA[:4])


def test_histogram2d_and_dd():
    x, y = DATA[:30], DATA[30:]
    for bins, kwargs in [
        (3, {}),
        ((3, 5), {}),
        (4, dict(density=True)),
        ([np.array([-1.0, 0.0, 1.0]), 3], dict(weights=x**2)),
        (2, dict(range=[(-1, 1), (0, 2)])),
    ]:
        hist, x_edges, y_edges = jnp.histogram2d(x, y, bins, **kwargs)
        want, want_x, want_y = np.histogram2d(x, y, bins, **kwargs)
        np.testing.assert_allclose(np.asarray(hist), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(x_edges), want_x, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(y_edges), want_y, rtol=1e-6, atol=1e-6)
    hist, _, _ = jnp.histogram2d(x, y, 3)
    assert hist.dtype == np.int32  # JAX counts in the default integer type
    sample = RNG.normal(size=(40, 3)).astype(np.float32)
    hist, edges = jnp.histogramdd(sample, bins=(2, 3, 4), density=True)
    want, want_edges = np.histogramdd(sample, bins=(2, 3, 4), density=True)
    assert hist.dtype == np.float32 and len(edges) == 3
    np.testing.assert_allclose(np.asarray(hist), want, rtol=1e-5)
    for got_edges, expected in zip(edges, want_edges, strict=True):
        np.testing.assert_allclose(np.asarray(got_edges), expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="should have one weight for each sample"):
        jnp.histogramdd(sample, weights=np.ones(3))
    with pytest.raises(ValueError, match="should be a bin for each dimension"):
        jnp.histogramdd(sample, bins=[2, 2])
    with pytest.raises(ValueError, match="range must be a sequence of 3 pairs or Nones"):
        jnp.histogramdd(sample, range=[(0, 1)])
