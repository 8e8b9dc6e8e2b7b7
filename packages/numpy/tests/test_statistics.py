"""lamina.numpy statistics against NumPy: quantile / percentile / median and their
NaN-ignoring variants (every method, axis tuples, keepdims, weights with
'inverted_cdf'), average (weights, returned), cov (rowvar, bias, ddof, fweights,
aweights, dtype) and corrcoef; JAX's own choices (the 'nearest' tie, recorded from JAX
0.10.2), dtypes, gradients, vmap, jit and errors."""

import warnings

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(5)
X = RNG.normal(size=(3, 4, 5)).astype(np.float32)
METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]
Q = np.array([0.0, 0.1, 0.52, 0.93, 1.0], np.float32)  # no exact ties for 'nearest'


@pytest.mark.parametrize("method", METHODS)
def test_quantile_matches_numpy(method):
    for axis, keepdims in [(None, False), (1, True), ((0, 2), False), (-1, False), ((2, 0), True)]:
        got = jnp.quantile(X, Q, axis=axis, method=method, keepdims=keepdims)
        want = np.quantile(X, Q, axis=axis, method=method, keepdims=keepdims)
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    got = jnp.percentile(X, 37.0, axis=1, method=method)
    np.testing.assert_allclose(
        np.asarray(got), np.percentile(X, 37.0, axis=1, method=method), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("method", METHODS)
def test_nanquantile_matches_numpy(method):
    x = X.copy()
    x.reshape(-1)[::4] = np.nan
    x[1, 2] = np.nan  # a row with no numbers at all
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for axis in [None, -1, (0, 1)]:
            got = jnp.nanquantile(x, Q, axis=axis, method=method)
            want = np.nanquantile(x, Q, axis=axis, method=method)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
        got = jnp.nanpercentile(x, 61.0, axis=2, method=method, keepdims=True)
        want = np.nanpercentile(x, 61.0, axis=2, method=method, keepdims=True)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    # Without skipping, one NaN makes the whole slice's quantile NaN.
    got = np.asarray(jnp.quantile(x, 0.5, axis=2, method=method))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(x).any(axis=2))


def test_median():
    for dtype in (np.float32, np.int32, np.float16, np.bool_):
        x = (RNG.normal(size=(4, 6)) * 3).astype(dtype)
        for axis in (None, 0, (0, 1)):
            got = jnp.median(x, axis=axis, keepdims=axis == 0)
            want = np.median(x.astype(np.float64), axis=axis, keepdims=axis == 0)
            assert got.dtype == (np.float16 if dtype == np.float16 else np.float32)
            tol = 1e-2 if dtype == np.float16 else 1e-6
            np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol)
    x = X.copy()
    x[0, 0, :3] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(
            np.asarray(jnp.nanmedian(x, axis=2)), np.nanmedian(x, axis=2), rtol=1e-6
        )


def test_jax_specific_choices():
    # JAX's 'nearest' takes the lower neighbour at an exact tie (NumPy rounds to even).
    values = np.arange(60, dtype=np.float32)
    assert float(jnp.quantile(values, 0.5, method="nearest")) == 29.0  # recorded from JAX
    assert jnp.quantile(np.arange(5), 0.5).dtype == np.float32
    assert jnp.percentile(np.arange(5, dtype=np.float16), 50).dtype == np.float16


def test_weights_with_inverted_cdf():
    weights = RNG.uniform(size=5).astype(np.float32)
    got = jnp.quantile(X, Q, axis=2, method="inverted_cdf", weights=weights)
    want = np.quantile(
        X, Q, axis=2, method="inverted_cdf", weights=np.broadcast_to(weights, X.shape)
    )
    np.testing.assert_allclose(np.asarray(got), want)
    full = RNG.uniform(size=X.shape).astype(np.float32)
    got = jnp.percentile(X, 30.0, method="inverted_cdf", weights=full, axis=(0, 1))
    want = np.percentile(X, 30.0, method="inverted_cdf", weights=full, axis=(0, 1))
    np.testing.assert_allclose(np.asarray(got), want)
    with pytest.raises(NotImplementedError, match="Only method 'inverted_cdf' supports weights"):
        jnp.quantile(X, 0.5, weights=full)
    with pytest.raises(ValueError, match="Weights shape must match 'a' shape when axis is None"):
        jnp.quantile(X, 0.5, weights=weights, method="inverted_cdf")
    with pytest.raises(ValueError, match="Weights cannot be complex types"):
        jnp.quantile(X, 0.5, weights=full.astype(np.complex64), method="inverted_cdf")


def test_quantile_errors():
    with pytest.raises(ValueError, match="method can only be 'linear'"):
        jnp.quantile(X, 0.5, method="nearest_neighbour")
    with pytest.raises(ValueError, match="does not support overwrite_input=True or out"):
        jnp.median(X, overwrite_input=True)
    with pytest.raises(ValueError, match="does not support complex input"):
        jnp.quantile(X.astype(np.complex64), 0.5)
    with pytest.raises(ValueError, match="q must be have rank <= 1"):
        jnp.quantile(X, np.ones((2, 2), np.float32) / 2)
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.quantile(X, 0.5, axis=(0, 0))
    with pytest.raises(TypeError, match="quantile requires ndarray or scalar arguments"):
        jnp.quantile([1.0, 2.0], 0.5)


def test_average():
    x = X[0]
    w = RNG.uniform(size=5).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.average(x)), np.average(x), rtol=1e-6)
    got, total = jnp.average(x, axis=1, weights=w, returned=True)
    want, want_total = np.average(x, axis=1, weights=w, returned=True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(total), want_total, rtol=1e-6)
    w2 = RNG.uniform(size=(4, 5)).astype(np.float32)
    got = jnp.average(x, axis=(1, 0), weights=w2.T, keepdims=True)
    np.testing.assert_allclose(
        np.asarray(got), np.average(x, axis=(1, 0), weights=w2.T, keepdims=True), rtol=1e-5
    )
    got, total = jnp.average(np.arange(6).reshape(2, 3), axis=0, returned=True)
    assert got.dtype == np.float32 and total.shape == (3,) and float(total[0]) == 2.0
    with pytest.raises(ValueError, match="Axis must be specified when shapes of a and weights"):
        jnp.average(x, weights=w)
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        jnp.average(x, axis=0, weights=w)


def test_cov_and_corrcoef():
    m = RNG.normal(size=(3, 7)).astype(np.float32)
    y = RNG.normal(size=(2, 7)).astype(np.float32)
    fw = np.array([1, 2, 1, 3, 1, 1, 2])
    aw = RNG.uniform(size=7).astype(np.float32)
    cases = [
        dict(),
        dict(rowvar=False),
        dict(bias=True),
        dict(ddof=2),
        dict(fweights=fw),
        dict(aweights=aw),
        dict(fweights=fw, aweights=aw, ddof=0),
        dict(fweights=fw, aweights=aw),
    ]
    for kwargs in cases:
        got = jnp.cov(m, **kwargs)
        np.testing.assert_allclose(np.asarray(got), np.cov(m, **kwargs), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.cov(m, y)), np.cov(m, y), rtol=1e-4, atol=1e-6)
    got = jnp.cov(m[0])
    assert got.shape == () and got.dtype == np.float32
    assert jnp.cov(np.arange(5)).dtype == np.float32
    assert jnp.cov(m, dtype=np.float16).dtype == np.float16
    z = (m + 1j * m[::-1]).astype(np.complex64)
    np.testing.assert_allclose(np.asarray(jnp.cov(z)), np.cov(z), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.corrcoef(m)), np.corrcoef(m), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(jnp.corrcoef(m, y, rowvar=True)), np.corrcoef(m, y), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(np.asarray(jnp.corrcoef(z)), np.corrcoef(z), rtol=1e-4, atol=1e-5)
    assert float(jnp.corrcoef(m[0])) == 1.0
    assert np.isnan(np.asarray(jnp.cov(np.zeros((2, 0), np.float32)))).all()
    assert jnp.cov(np.zeros((0, 3), np.float32)).shape == (0, 0)
    with pytest.raises(ValueError, match="m has more than 2 dimensions"):
        jnp.cov(X)
    with pytest.raises(TypeError, match="fweights must be integer"):
        jnp.cov(m, fweights=aw)
    with pytest.raises(RuntimeError, match="incompatible numbers of samples and aweights"):
        jnp.cov(m, aweights=aw[:3])
    with pytest.raises(ValueError, match="dtype must be a subclass of float or complex"):
        jnp.corrcoef(m, dtype=np.int32)


def test_grads():
    x = RNG.normal(size=(3, 5)).astype(np.float32)
    check_grads(lambda x: jnp.median(x, axis=1), (x,), order=1)
    check_grads(lambda x: jnp.quantile(x, np.array([0.3, 0.8], np.float32), axis=0), (x,), 1)
    check_grads(lambda x: jnp.nanpercentile(x, 40.0), (x,), order=1, modes="rev")
    check_grads(lambda x: jnp.average(x, axis=1, weights=x[0] ** 2), (x,), order=1)
    check_grads(lambda x: jnp.cov(x), (x,), order=1, modes="rev")
    check_grads(lambda x: jnp.corrcoef(x), (x,), order=1, modes="rev")


def test_vmap_and_jit():
    fns = [
        lambda x: jnp.median(x, axis=0),
        lambda x: jnp.quantile(x, np.array([0.2, 0.7], np.float32), method="lower"),
        lambda x: jnp.nanpercentile(x, 25.0, axis=-1, keepdims=True),
        lambda x: jnp.cov(x),
        lambda x: jnp.average(x, axis=0, weights=x[:, 0] ** 2, returned=True)[0],
    ]
    for fn in fns:
        got = vmap(fn)(X)
        want = np.stack([np.asarray(fn(x)) for x in X])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(jit(fn)(X[0])), np.asarray(fn(X[0])), rtol=1e-6)
