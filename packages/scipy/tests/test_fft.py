"""lamina.scipy.fft (the type-2 DCT and its inverse) against scipy.fft: lengths that
pad and truncate, axes, norms, float32/float64/complex, gradients, jit and vmap, and
JAX's errors."""

import numpy as np
import pytest
import scipy.fft

import lamina.numpy as jnp
from lamina.interpreters import enable_x64, jit, vmap
from lamina.interpreters.test_util import check_grads
from lamina.scipy import fft

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)
XC = (X + 1j * RNG.standard_normal(X.shape)).astype(np.complex64)

ONE_AXIS = [({}), ({"n": 3}), ({"n": 7, "axis": 0}), ({"axis": 1, "norm": "ortho"})]
SEVERAL_AXES = [({}), ({"s": [2, 6]}), ({"s": 4}), ({"axes": (2, 0), "s": [3, 6], "norm": "ortho"})]


@pytest.mark.parametrize("name", ["dct", "idct"])
def test_one_axis_matches_scipy(name):
    for kwargs in ONE_AXIS:
        got = getattr(fft, name)(X, **kwargs)
        assert got.dtype == np.float32
        want = getattr(scipy.fft, name)(X, **kwargs)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=str(kwargs))


@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_several_axes_match_scipy(name):
    for kwargs in SEVERAL_AXES:
        got = getattr(fft, name)(X, **kwargs)
        want = getattr(scipy.fft, name)(X, **kwargs)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5, err_msg=str(kwargs))


def test_complex_and_integer_input():
    got = fft.dct(XC, n=6, norm="ortho")
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, scipy.fft.dct(XC, n=6, norm="ortho"), rtol=1e-5, atol=1e-5)
    got = fft.idctn(XC, axes=(0, 1))
    np.testing.assert_allclose(got, scipy.fft.idctn(XC, axes=(0, 1)), rtol=1e-5, atol=1e-5)
    # Integers become the default float (recorded from JAX 0.10.2).
    got = fft.dct(np.arange(5))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, scipy.fft.dct(np.arange(5.0)), rtol=1e-6, atol=1e-6)


def test_float64_under_x64():
    x = RNG.standard_normal((4, 6))
    with enable_x64():
        for name in ("dct", "idct", "dctn", "idctn"):
            got = getattr(fft, name)(x, norm="ortho")
            assert got.dtype == np.float64
            want = getattr(scipy.fft, name)(x, norm="ortho")
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_inverse_round_trip_and_gradients():
    x = X[0]
    np.testing.assert_allclose(fft.idctn(fft.dctn(x)), x, rtol=1e-5, atol=1e-5)
    check_grads(lambda v: fft.dct(v, n=6, norm="ortho"), (x,), order=1, atol=1e-2, rtol=1e-2)
    check_grads(lambda v: fft.idctn(v), (x,), order=1, modes=("rev",), atol=1e-2, rtol=1e-2)


def test_jit_and_vmap():
    got = jit(lambda v: fft.dct(v, axis=0), static_argnums=())(X[0])
    np.testing.assert_allclose(got, scipy.fft.dct(X[0], axis=0), rtol=1e-5, atol=1e-5)
    got = vmap(lambda v: fft.idct(v, n=4, norm="ortho"))(X)
    want = scipy.fft.idct(X, n=4, norm="ortho")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert isinstance(got, type(jnp.zeros(1)))


def test_errors():
    # Messages recorded from JAX 0.10.2.
    with pytest.raises(NotImplementedError, match=r"Only DCT type 2 is implemented\."):
        fft.dct(X, type=1)
    with pytest.raises(ValueError, match=r"jax.scipy.fft.dct: norm='forward' is not implemented"):
        fft.dct(X, norm="forward")
    with pytest.raises(ValueError, match=r"jax.scipy.fft.idctn: norm='forward' is not impl"):
        fft.idctn(X, norm="forward")
    with pytest.raises(ValueError, match=r"s must have at most x.ndim \(3\) elements, got 4"):
        fft.dctn(X, s=[1, 2, 3, 4])


def test_fewer_sizes_than_axes():
    # JAX resizes only the first len(s) axes and transforms all of `axes` (SciPy
    # refuses); recorded from JAX 0.10.2 to equal SciPy with the other sizes kept.
    got = fft.dctn(X, s=[3], axes=(2, 0))
    np.testing.assert_allclose(got, scipy.fft.dctn(X, s=[3, 3], axes=(2, 0)), atol=2e-5)
