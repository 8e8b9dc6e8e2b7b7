"""lamina.scipy.linalg's matrix functions (expm, expm_frechet, sqrtm, funm, polar,
eigh_tridiagonal, solve_sylvester) against scipy.linalg, with JAX 0.10.2's errors."""

import numpy as np
import pytest
import scipy.linalg as sl

import lamina.numpy as jnp
from lamina.interpreters import enable_x64, jit, vmap
from lamina.interpreters.test_util import check_grads
from lamina.scipy import linalg as L

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws the same numbers however the tests are selected or ordered."""
    global RNG
    RNG = np.random.default_rng(0)


def _random(shape, dtype=np.float32, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def _close(got, want, rtol):
    """Close relative to the size of ``want`` (entries of an exponential vary widely)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=rtol * max(1.0, np.abs(want).max()))


# --------------------------------------------------------------------------- expm


def test_expm_float32_matches_scipy():
    # 1-norms reaching each Padé degree (3, 5, 7) and the squarings, in one shape
    mats = [_random((4, 4), scale=s) for s in (0.05, 0.3, 0.9, 8.0)]
    mats.append(np.triu(np.ones((4, 4), np.float32), 1))  # nilpotent: exact polynomial
    for a in mats:
        got = L.expm(a)
        assert got.dtype == np.float32
        _close(got, sl.expm(a.astype(np.float64)), 2e-5)
    _close(L.expm(mats[-1]), np.eye(4) + mats[-1] + mats[-1] @ mats[-1] / 2
           + mats[-1] @ mats[-1] @ mats[-1] / 6, 1e-6)  # fmt: skip


def test_expm_float64_matches_scipy():
    with enable_x64(True):
        # the five double-precision degrees (3, 5, 7, 9, 13) and the squarings
        for s in (0.002, 0.03, 0.15, 0.4, 1.0, 20.0):
            a = _random((4, 4), np.float64, scale=s)
            got = L.expm(a)
            assert got.dtype == np.float64
            _close(got, sl.expm(a), 1e-12)
        c = _random((3, 3), np.complex128) + 1j * _random((3, 3), np.float64)
        _close(L.expm(c), sl.expm(c), 1e-12)


def test_expm_batched_upper_triangular_int_and_overflow():
    a = _random((2, 3, 3, 3))
    _close(L.expm(a), np.stack([[sl.expm(m) for m in row] for row in a.astype(float)]), 2e-5)
    t = np.triu(_random((3, 3)))
    _close(L.expm(t, upper_triangular=True), sl.expm(t.astype(float)), 2e-5)
    ints = L.expm(np.array([[0, 1], [0, 0]]))
    assert ints.dtype == np.float32
    np.testing.assert_array_equal(ints, [[1, 1], [0, 1]])
    # more squarings needed than allowed: NaNs, as JAX 0.10.2
    assert np.isnan(L.expm(np.eye(3, dtype=np.float32) * 1e6)).all()
    assert np.isnan(L.expm(np.eye(2, dtype=np.float32) * 100, max_squarings=2)).all()


def test_expm_jit_vmap_and_gradients():
    a = _random((3, 3))
    batch = _random((4, 3, 3))
    np.testing.assert_allclose(jit(L.expm)(a), L.expm(a), rtol=1e-6)
    np.testing.assert_allclose(vmap(L.expm)(batch), L.expm(batch), rtol=1e-5, atol=1e-6)
    with enable_x64(True):
        x = _random((3, 3), np.float64, scale=3.0)  # 1-norm above 5.4: one squaring
        check_grads(L.expm, (x,), 1, modes=("fwd", "rev"))


def test_expm_frechet_matches_scipy():
    with enable_x64(True):
        a, e = _random((4, 4), np.float64, scale=2.0), _random((4, 4), np.float64)
        want_expm, want = sl.expm_frechet(a, e)
        got_expm, got = L.expm_frechet(a, e, method="SPS")
        _close(got_expm, want_expm, 1e-12)
        _close(got, want, 1e-11)
        _close(L.expm_frechet(a, e, compute_expm=False), want, 1e-11)
    a, e = _random((3, 3)), _random((3, 3))
    _close(L.expm_frechet(a, e)[1], sl.expm_frechet(a.astype(float), e.astype(float))[1], 1e-5)


# --------------------------------------------------------------------------- sqrtm, funm


def test_sqrtm_matches_scipy_and_squares_back():
    a = _random((5, 5), scale=0.5) + 2 * np.eye(5, dtype=np.float32)  # none on the real axis < 0
    root = L.sqrtm(a)
    assert root.dtype == np.complex64  # always complex, as JAX 0.10.2
    _close(root, sl.sqrtm(a.astype(np.float64)), 1e-5)
    _close(root @ root, a, 1e-5)
    upper = np.triu(np.ones((3, 3), np.float32))
    # recorded from JAX 0.10.2
    np.testing.assert_allclose(L.sqrtm(upper), [[1, 0.5, 0.375], [0, 1, 0.5], [0, 0, 1]])
    with enable_x64(True):
        spd = _random((4, 4), np.float64)
        spd = spd @ spd.T + np.eye(4)
        root = L.sqrtm(spd)
        assert root.dtype == np.complex128
        _close(root, sl.sqrtm(spd), 1e-12)


def test_funm_matches_scipy():
    a = _random((4, 4))
    got = L.funm(a, jnp.sin)
    assert got.dtype == np.complex64
    _close(got, sl.funm(a.astype(float), np.sin), 2e-5)
    got, err = L.funm(a, jnp.exp, disp=False)
    _close(got, sl.expm(a.astype(float)), 2e-5)
    assert err.shape == () and 0 < float(err) < 1e-3
    with enable_x64(True):
        b = _random((4, 4), np.float64)
        _close(L.funm(b, jnp.cos), sl.funm(b, np.cos), 1e-11)


# --------------------------------------------------------------------------- polar


@pytest.mark.parametrize("method", ["qdwh", "svd"])
def test_polar_reconstructs(method):
    for side, shape in (("right", (5, 3)), ("left", (3, 5))):
        a = _random(shape)
        u, p = L.polar(a, side, method=method)
        k = min(shape)
        assert u.shape == shape and p.shape == (k, k)
        _close(u @ p if side == "right" else p @ u, a, 2e-5)
        gram = u.T @ u if side == "right" else u @ u.T
        _close(gram, np.eye(k), 2e-5)
        _close(p, sl.polar(a.astype(float), side)[1], 2e-5)
    u, p = L.polar(_random((2, 4, 4)), method=method)  # batched
    assert u.shape == p.shape == (2, 4, 4)
    _close(u @ p, np.asarray(u) @ np.asarray(p), 1e-6)


# --------------------------------------------------------------------------- eigh_tridiagonal


def test_eigh_tridiagonal_values_match_scipy():
    d, e = _random(7), _random(6)
    want = sl.eigh_tridiagonal(d.astype(float), e.astype(float), eigvals_only=True)
    np.testing.assert_allclose(L.eigh_tridiagonal(d, e, eigvals_only=True), want, atol=2e-6)
    got = L.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(2, 4))
    np.testing.assert_allclose(got, want[2:5], atol=2e-6)
    with enable_x64(True):
        d64, e64 = d.astype(np.float64), e.astype(np.float64)
        got = L.eigh_tridiagonal(d64, e64, eigvals_only=True, tol=1e-14)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, atol=1e-13)


def test_eigh_tridiagonal_vectors():
    rng = np.random.default_rng(0)
    d, e = rng.standard_normal(6), rng.standard_normal(5)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    w, v = L.eigh_tridiagonal(d.astype(np.float32), e.astype(np.float32))
    np.testing.assert_allclose(t @ v, v * w, atol=1e-5)
    # signs follow the random start vectors of jax.random.key(42): recorded from JAX 0.10.2
    np.testing.assert_array_equal(np.sign(v[0]), [1, 1, 1, 1, -1, 1])
    with enable_x64(True):
        w, v = L.eigh_tridiagonal(d, e)
        np.testing.assert_allclose(t @ v, v * w, atol=1e-12)
        np.testing.assert_array_equal(np.sign(v[0]), [-1, -1, 1, 1, -1, 1])  # JAX 0.10.2
    # a cluster (all eigenvalues equal) is orthonormalized
    w, v = L.eigh_tridiagonal(np.ones(6, np.float32), np.zeros(5, np.float32))
    np.testing.assert_allclose(np.abs(v), np.eye(6), atol=1e-6)


# --------------------------------------------------------------------------- solve_sylvester


@pytest.mark.parametrize("method", ["schur", "eigen"])
def test_solve_sylvester(method):
    a, b, c = _random((4, 4)), _random((3, 3)), _random((4, 3))
    x = L.solve_sylvester(a, b, c, method=method)
    assert x.dtype == np.float32
    _close(a @ x + x @ b, c, 1e-4)
    _close(x, sl.solve_sylvester(a.astype(float), b.astype(float), c.astype(float)), 1e-4)
    # eigenvalues of A and B summing to zero: NaNs
    assert np.isnan(L.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2)), method=method)).all()


def test_solve_sylvester_complex_and_batched():
    with enable_x64(True):
        a = _random((3, 3), np.float64) + 1j * _random((3, 3), np.float64)
        b = _random((2, 2), np.float64) + 1j * _random((2, 2), np.float64)
        c = _random((3, 2), np.float64) + 1j * _random((3, 2), np.float64)
        x = L.solve_sylvester(a, b, c)
        assert x.dtype == np.complex128
        _close(a @ x + x @ b, c, 1e-12)
    a, c = _random((2, 3, 3)), _random((2, 3, 2))
    x = L.solve_sylvester(a, _random((2, 2)), c)
    assert x.shape == (2, 3, 2)


# --------------------------------------------------------------------------- vmap


def test_vmap_of_matrix_functions():
    # no eigenvalue on the negative real axis (where the principal root is undefined)
    a = _random((2, 3, 3)) + 3 * np.eye(3, dtype=np.float32)
    roots = vmap(L.sqrtm)(a)
    _close(roots, np.stack([sl.sqrtm(m) for m in a.astype(float)]), 1e-5)
    values = vmap(lambda m: L.eigh_tridiagonal(jnp.diagonal(m), jnp.diagonal(m, 1),
                                               eigvals_only=True))(a)  # fmt: skip
    want = [sl.eigh_tridiagonal(np.diag(m), np.diag(m, 1), eigvals_only=True) for m in a]
    np.testing.assert_allclose(values, np.stack(want), atol=2e-6)
    x = vmap(lambda m: L.solve_sylvester(m, m.T, m))(a)
    _close(a @ x + x @ np.swapaxes(a, 1, 2), a, 1e-4)


# --------------------------------------------------------------------------- errors


# (call, error type, start of the message): recorded from JAX 0.10.2
ERRORS = [
    (lambda: L.expm(np.ones((2, 3))), ValueError,
     "Expected A to be a (batched) square matrix, got A.shape=(2, 3)."),
    (lambda: L.expm(np.eye(2, dtype=np.float16)), TypeError, "A.dtype=float16 is not supported."),
    (lambda: L.expm_frechet(np.eye(2), np.eye(3)), ValueError,
     "expected A and E to be the same shape, got A.shape=(2, 2) E.shape=(3, 3)"),
    (lambda: L.expm_frechet(np.eye(2), np.ones((2, 3))), ValueError,
     "expected E to be a (batched) square matrix, got E.shape=(2, 3)"),
    (lambda: L.sqrtm(np.ones((2, 3))), ValueError,
     "The input to schur must be a square matrix. Got shape (2, 3)."),
    (lambda: L.sqrtm(np.eye(2), blocksize=2), NotImplementedError,
     "Blocked version is not implemented yet."),
    (lambda: L.funm(np.ones((2, 3)), jnp.sin), ValueError, "expected square array_like input"),
    (lambda: L.funm(np.eye(2, dtype=np.int32), jnp.sin), TypeError,
     "schur does not accept dtype int32 at position 0."),
    (lambda: L.polar(np.ones(3)), ValueError, "The input `a` must be at least a 2-D array."),
    (lambda: L.polar(np.ones((3, 3)), "up"), ValueError,
     "The argument `side` must be either 'right' or 'left'."),
    (lambda: L.polar(np.ones((3, 5))), NotImplementedError,
     "method='qdwh' only supports mxn matrices where m < n where side='right' and m >= n "
     "side='left', got (3, 5) with side='right'"),
    # eps reaches qdwh as a traced value (JAX 0.10.2 fails there too, with a TypeError)
    (lambda: L.polar(np.ones((3, 3)), eps=1e-6), TypeError, ""),
    (lambda: L.polar(np.eye(2, dtype=np.int32)), ValueError,
     "data type <class 'numpy.int32'> not inexact"),
    (lambda: L.polar(np.eye(2, dtype=np.int32), method="svd"), TypeError,
     "svd does not accept dtype int32 at position 0."),
    (lambda: L.polar(np.ones((3, 3)), method="x"), ValueError,
     "Unknown polar decomposition method x."),
    (lambda: L.solve_sylvester(np.eye(2), np.eye(3), np.ones((2, 2))), ValueError,
     "Incompatible shapes for Sylvester equation:\nA: (2, 2)\nB: (3, 3)\nC: (2, 2)"),
    (lambda: L.solve_sylvester(np.eye(2), np.eye(2), np.ones((2, 2)), method="q"), ValueError,
     'Unrecognized method q. The two valid methods are either "schur" or "eigen".'),
    (lambda: L.eigh_tridiagonal(np.ones(3), np.ones(2), eigvals_only=True, select="v"),
     NotImplementedError, "eigh_tridiagonal(..., select='v') is not implemented"),
    (lambda: L.eigh_tridiagonal(np.ones(3), np.ones(2), select="x"), ValueError,
     "'select must have a value in {'a', 'i', 'v'}."),
    (lambda: L.eigh_tridiagonal(np.ones(3), np.ones(2), select="i"), ValueError,
     "for select='i', select_range must be specified."),
    (lambda: L.eigh_tridiagonal(np.ones(3), np.ones(2), select="i", select_range=(2, 1)),
     ValueError, "Got empty index range in select_range."),
    (lambda: L.eigh_tridiagonal(np.ones(3, np.int32), np.ones(2, np.int32)), TypeError,
     "Only float32 and float64 inputs are supported as inputs to "
     "jax.scipy.linalg.eigh_tridiagonal, got int32 and int32"),
]  # fmt: skip


@pytest.mark.parametrize("call,error,message", ERRORS)
def test_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value).startswith(message)
