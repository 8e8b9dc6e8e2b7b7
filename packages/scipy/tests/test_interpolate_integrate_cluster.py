"""lamina.scipy.interpolate.RegularGridInterpolator, lamina.scipy.integrate.trapezoid
and lamina.scipy.cluster.vq.vq against SciPy: values, float64, gradients, jit, vmap,
the interpolator as a pytree, and JAX's errors."""

import numpy as np
import pytest
import scipy.cluster.vq
import scipy.integrate
import scipy.interpolate

import lamina.numpy as jnp
from lamina.interpreters import enable_x64, jit, vmap
from lamina.interpreters.test_util import check_grads
from lamina.ir import tree_util
from lamina.scipy import cluster, integrate, interpolate

RNG = np.random.default_rng(0)
GRID = (np.linspace(0.0, 1.0, 5), np.array([0.0, 0.2, 0.5, 1.5, 2.0, 3.0]))
VALUES = RNG.standard_normal((5, 6, 2)).astype(np.float32)
POINTS = np.stack([RNG.uniform(-0.2, 1.2, 12), RNG.uniform(-0.2, 3.1, 12)], -1)
Y = RNG.standard_normal((3, 9)).astype(np.float32)


def test_regular_grid_interpolator():
    for method in ("linear", "nearest"):
        for fill in (np.nan, None, 0.5):
            got = interpolate.RegularGridInterpolator(GRID, VALUES, method, fill_value=fill)
            want = scipy.interpolate.RegularGridInterpolator(GRID, VALUES, method,
                                                             bounds_error=False,
                                                             fill_value=fill)  # fmt: skip
            np.testing.assert_allclose(got(POINTS), want(POINTS), rtol=1e-5, atol=1e-6)
    rgi = interpolate.RegularGridInterpolator(GRID, VALUES[..., 0])
    want = scipy.interpolate.RegularGridInterpolator(GRID, VALUES[..., 0], bounds_error=False)
    np.testing.assert_allclose(rgi((POINTS[:, 0], POINTS[:, 1])), want(POINTS), rtol=1e-5)
    np.testing.assert_allclose(rgi(POINTS, method="nearest"), want(POINTS, method="nearest"))


def test_interpolator_is_a_pytree():
    rgi = interpolate.RegularGridInterpolator(GRID, VALUES, "nearest")
    leaves, _ = tree_util.tree_flatten(rgi)
    assert len(leaves) == 4  # two grid arrays, the values and the fill value
    got = jit(lambda r, p: r(p))(rgi, POINTS)
    np.testing.assert_allclose(got, rgi(POINTS))
    doubled = tree_util.tree_map(lambda v: v * 2, rgi)
    assert isinstance(doubled, interpolate.RegularGridInterpolator)
    assert doubled.method == "nearest"
    np.testing.assert_allclose(doubled.values, 2 * VALUES)
    check_grads(lambda v: interpolate.RegularGridInterpolator(GRID, v)(np.abs(POINTS[:4]) * 0.8),
                (VALUES,), order=1, modes=("rev",), atol=1e-2, rtol=1e-2)  # fmt: skip


def test_trapezoid():
    x = np.linspace(0.0, 2.0, 9)
    for kwargs in ({}, {"x": x}, {"dx": 0.5}, {"axis": 0}):
        got = integrate.trapezoid(Y, **kwargs)
        assert got.dtype == np.float32
        want = scipy.integrate.trapezoid(Y, **kwargs)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    check_grads(lambda y, x: integrate.trapezoid(y, x), (Y, x.astype(np.float32)), order=2,
                atol=1e-2, rtol=1e-2)  # fmt: skip
    with enable_x64():
        got = integrate.trapezoid(Y.astype(np.float64), x)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, scipy.integrate.trapezoid(Y, x), rtol=1e-6)


def test_vq():
    code_book = RNG.standard_normal((4, 3)).astype(np.float32)
    obs = RNG.standard_normal((10, 3)).astype(np.float32)
    code, dist = cluster.vq.vq(obs, code_book)
    want_code, want_dist = scipy.cluster.vq.vq(obs, code_book)
    np.testing.assert_array_equal(code, want_code)
    np.testing.assert_allclose(dist, want_dist, rtol=1e-5)
    code, dist = cluster.vq.vq(obs[:, 0], code_book[:, 0])
    np.testing.assert_array_equal(code, scipy.cluster.vq.vq(obs[:, 0], code_book[:, 0])[0])
    code, _ = vmap(cluster.vq.vq, in_axes=(0, None))(np.stack([obs, -obs]), code_book)
    np.testing.assert_array_equal(code[1], scipy.cluster.vq.vq(-obs, code_book)[0])
    assert code.dtype == jnp.zeros(1, int).dtype


ERRORS = [  # messages recorded from JAX 0.10.2
    (lambda: interpolate.RegularGridInterpolator(GRID, VALUES, "cubic"), ValueError,
     "method 'cubic' is not defined"),
    (lambda: interpolate.RegularGridInterpolator(GRID, VALUES)(POINTS, method="cubic"),
     ValueError, "method 'cubic' is not defined"),
    (lambda: interpolate.RegularGridInterpolator(GRID, VALUES, bounds_error=True),
     NotImplementedError, "`bounds_error` takes no effect under JIT"),
    (lambda: interpolate.RegularGridInterpolator(GRID * 2, VALUES), ValueError,
     "there are 4 point arrays, but values has 3 dimensions"),
    (lambda: interpolate.RegularGridInterpolator(GRID, VALUES)(POINTS[:, :1]), ValueError,
     "the requested sample points xi have dimension 1, but this RegularGridInterpolator "
     "has dimension 2"),
    (lambda: interpolate.RegularGridInterpolator(GRID, VALUES, fill_value=1j), ValueError,
     "fill_value must be either 'None' or of a type compatible with values"),
    (lambda: cluster.vq.vq(np.ones((3, 2)), np.ones(2)), ValueError,
     "Observation and code_book should have the same rank"),
    (lambda: cluster.vq.vq(np.ones((1, 3, 2)), np.ones((1, 2, 2))), ValueError,
     "ndim different than 1 or 2 are not supported"),
]  # fmt: skip


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index):
    call, kind, message = ERRORS[index]
    with pytest.raises(kind, match=message):
        call()
