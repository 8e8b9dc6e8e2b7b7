"""lamina.numpy's NaN-ignoring reductions against NumPy: nansum, nanprod, nanmax,
nanmin, nanmean, nanvar, nanstd (axis, keepdims, where, initial, ddof, dtype), rows
that are all NaN, integer inputs (no NaN to ignore), gradients, vmap and jit."""

import warnings

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import grad, jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(3)


def with_nans(shape, dtype=np.float32, every=3):
    x = RNG.normal(size=shape).astype(dtype)
    x.reshape(-1)[::every] = np.nan
    return x


X = with_nans((4, 5))
X[2] = np.nan  # one row entirely NaN
NAMES = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]


def numpy_reference(name, x, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = np.complex128 if np.iscomplexobj(x) else np.float64
        return getattr(np, name)(x.astype(wide), **kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_matches_numpy(name):
    for axis, keepdims in [(None, False), (0, True), (1, False), ((0, 1), True), (-1, True)]:
        got = getattr(jnp, name)(X, axis=axis, keepdims=keepdims)
        want = numpy_reference(name, X, axis=axis, keepdims=keepdims)
        assert got.dtype == np.float32 and got.shape == np.shape(want)
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_other_dtypes(name):
    half = with_nans((3, 4), np.float16, every=4)
    got = getattr(jnp, name)(half, axis=1)
    assert got.dtype == np.float16
    np.testing.assert_allclose(
        np.asarray(got, np.float64), numpy_reference(name, half, axis=1), rtol=2e-2, atol=2e-2
    )
    ints = RNG.integers(-3, 5, (3, 4)).astype(np.int8)
    got = getattr(jnp, name)(ints, axis=0)
    want_dtype = {"nansum": np.int32, "nanprod": np.int32, "nanmax": np.int8, "nanmin": np.int8}
    assert got.dtype == want_dtype.get(name, np.float32)
    np.testing.assert_allclose(np.asarray(got), numpy_reference(name, ints, axis=0), rtol=1e-5)


def test_complex_variance_is_real():
    z = (RNG.normal(size=6) + 1j * RNG.normal(size=6)).astype(np.complex64)
    z[2] = np.nan
    for name in ("nanvar", "nanstd"):
        got = getattr(jnp, name)(z)
        assert got.dtype == np.float32
        np.testing.assert_allclose(float(got), numpy_reference(name, z), 1e-5)
    got = jnp.nanmean(z)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(complex(got), np.nanmean(z.astype(np.complex128)), 1e-5)


def test_options():
    mask = np.arange(20).reshape(4, 5) % 4 != 0
    for name, kwargs in [
        ("nansum", dict(initial=1.5)),
        ("nanprod", {}),
        ("nanmax", dict(initial=-9.0)),
        ("nanmin", dict(initial=9.0)),
        ("nanmean", {}),
        ("nanvar", dict(ddof=1)),
        ("nanstd", {}),
    ]:
        got = getattr(jnp, name)(X, axis=1, where=mask, **kwargs)
        want = numpy_reference(name, X, axis=1, where=mask, **kwargs)
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, err_msg=name)
    # With `initial`, an all-NaN row gives the initial value, not NaN.
    assert float(jnp.nanmax(X[2], initial=-1.0)) == -1.0
    assert jnp.nansum(X, dtype=np.float16).dtype == np.float16
    np.testing.assert_allclose(
        np.asarray(jnp.nanvar(X, axis=0, ddof=3)),
        numpy_reference("nanvar", X, axis=0, ddof=3),
        rtol=1e-5,
    )
    mean = np.nanmean(X, axis=1, keepdims=True)
    np.testing.assert_allclose(
        np.asarray(jnp.nanstd(X[:2], axis=1, mean=mean[:2])), np.nanstd(X[:2], axis=1), rtol=1e-5
    )
    with pytest.raises(ValueError, match="where must be None or a boolean array"):
        jnp.nansum(X, where=mask.astype(np.int8))
    with pytest.raises(NotImplementedError, match=r"The 'out' argument to jnp\.nanmean"):
        jnp.nanmean(X, out=X)


def test_grads():
    # Numerical derivatives need finite inputs; the NaN branch is checked separately.
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    check_grads(lambda x: jnp.nansum(x * x, axis=1), (x,), order=2, eps=1e-3)
    check_grads(lambda x: jnp.nanmean(x, axis=0), (x,), order=1, eps=1e-3)
    check_grads(lambda x: jnp.nanvar(x, axis=1), (x,), order=1, eps=1e-3)
    check_grads(lambda x: jnp.nanmax(x, axis=1), (x,), order=1, modes="rev", eps=1e-3)
    # A NaN element does not contribute: its gradient is zero, the others' are untouched.
    with_nan = with_nans((3, 4), every=5)
    got = grad(lambda x: jnp.nansum(x))(with_nan)
    np.testing.assert_array_equal(np.asarray(got), np.where(np.isnan(with_nan), 0.0, 1.0))
    got = grad(lambda x: jnp.nanmean(x))(with_nan)
    count = np.sum(~np.isnan(with_nan))
    np.testing.assert_allclose(np.asarray(got), np.where(np.isnan(with_nan), 0.0, 1 / count))


def test_vmap_and_jit():
    fns = [
        lambda x: jnp.nanmean(x, axis=0),
        lambda x: jnp.nanmax(x),
        lambda x: jnp.nanstd(x, axis=-1, keepdims=True),
        lambda x: jnp.nancumsum(x, axis=1),
    ]
    stack = np.stack([X, with_nans((4, 5)), with_nans((4, 5), every=2)])
    for fn in fns:
        got = vmap(fn)(stack)
        want = np.stack([np.asarray(fn(x)) for x in stack])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(jit(fn)(X)), np.asarray(fn(X)), rtol=1e-6)
