"""lax.linalg.qdwh against scipy.linalg.polar: u·h = x, u orthonormal, h Hermitian
positive semi-definite, for real and complex, tall and square, well and badly
conditioned inputs."""

import numpy as np
import pytest
import scipy.linalg

import lamina.lax as lax
from lamina.interpreters import enable_x64, jit

RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    "shape, dtype, tol",
    [((5, 3), np.float32, 1e-4), ((4, 4), np.float64, 1e-10), ((6, 2), np.complex64, 1e-4)],
)
def test_polar_decomposition_matches_scipy(shape, dtype, tol):
    with enable_x64(dtype == np.float64):
        x = RNG.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * RNG.standard_normal(shape)
        x = x.astype(dtype)
        u, h, num_iters, converged = lax.linalg.qdwh(x)
        want_u, want_h = scipy.linalg.polar(x)
        assert u.dtype == dtype and h.dtype == dtype
        np.testing.assert_allclose(np.asarray(u), want_u, atol=10 * tol)
        np.testing.assert_allclose(np.asarray(h), want_h, atol=10 * tol)
        np.testing.assert_allclose(np.asarray(u) @ np.asarray(h), x, atol=10 * tol)
        assert bool(converged) and 0 < int(num_iters) <= 10


def test_ill_conditioned_input_converges():
    with enable_x64(True):
        x = np.diag([1.0, 1e-6, 1e3])
        u, h, num_iters, converged = lax.linalg.qdwh(x)
        np.testing.assert_allclose(np.asarray(u), np.eye(3), atol=1e-12)
        np.testing.assert_allclose(np.asarray(h), x, rtol=1e-10)
        assert bool(converged) and int(num_iters) <= 10


def test_jit_and_errors():
    u = jit(lambda x: lax.linalg.qdwh(x)[0])(2 * np.eye(3, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(u), np.eye(3), atol=1e-6)
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        lax.linalg.qdwh(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="must be 2-dimensional"):
        lax.linalg.qdwh(np.ones((2, 2, 2), np.float32))
