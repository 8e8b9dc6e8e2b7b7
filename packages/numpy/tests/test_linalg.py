"""lamina.numpy.linalg against numpy.linalg: values by reconstruction or comparison,
batches, complex inputs, gradients (numerical checks), vmap, and errors."""

import numpy as np
import pytest

import lamina.numpy.linalg as la
from lamina.interpreters import grad, jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4, 2)).astype(np.float32)
C = (A + 1j * RNG.standard_normal(A.shape)).astype(np.complex64)
SPD = A @ np.swapaxes(A, -1, -2) + 4 * np.eye(4, dtype=np.float32)
X = RNG.standard_normal((2, 3)).astype(np.float32)


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_solve_inv_det_slogdet():
    close(la.solve(A, B), np.linalg.solve(A, B))
    close(la.solve(A[0], B[0, :, 0]), np.linalg.solve(A[0], B[0, :, 0]))
    close(la.solve(A, B[0]), np.linalg.solve(A, B[0]))  # batch broadcasting
    close(la.inv(A), np.linalg.inv(A), 1e-3)
    close(la.det(A), np.linalg.det(A))
    close(la.det(C), np.linalg.det(C))
    for m, method in [(C, None), (A, "qr"), (A, "lu")]:
        got, want = la.slogdet(m, method=method), np.linalg.slogdet(m)
        close(got.sign, want.sign)
        close(got.logabsdet, want.logabsdet)
    singular = la.slogdet(np.zeros((2, 2), np.float32))
    assert float(singular.sign) == 0 and float(singular.logabsdet) == -np.inf
    assert float(la.det(np.zeros((0, 0), np.float32))) == 1.0
    assert la.det(np.array([[1, 2], [3, 4]])).dtype == np.float32


def test_det_gradient_at_singular_matrices_is_the_adjugate():
    det_grad = grad(la.det)
    close(det_grad(np.array([[1.0, 2], [2, 4]], np.float32)), [[4, -2], [-2, 1]], 1e-4)
    close(det_grad(np.zeros((3, 3), np.float32)), np.zeros((3, 3)))
    close(det_grad(A[0]), np.linalg.det(A[0]) * np.linalg.inv(A[0]).T, 1e-3)


@pytest.mark.parametrize(
    "f, args",
    [
        (la.det, (A[0],)),
        (lambda m: la.slogdet(m).logabsdet, (A[0],)),
        (lambda m: la.slogdet(m, method="qr").logabsdet, (A[0],)),
        (la.solve, (A[0], B[0])),
        (la.inv, (A[0],)),
        (la.pinv, (X,)),
        (lambda m: la.norm(m, "nuc"), (X,)),
        (lambda m: la.eigh(m).eigenvalues, (SPD[0],)),
        (lambda m: la.matrix_power(m, 3), (A[0],)),
    ],
)
def test_gradients(f, args):
    check_grads(f, args, order=1, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)


def test_det_second_order():
    check_grads(la.det, (A[0],), order=2, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)


def test_factorizations_reconstruct():
    close(la.cholesky(SPD), np.linalg.cholesky(SPD))
    close(la.cholesky(SPD, upper=True), np.swapaxes(np.linalg.cholesky(SPD), -1, -2))
    w, v = la.eigh(SPD)
    close(
        np.asarray(v) * np.asarray(w)[..., None, :] @ np.swapaxes(np.asarray(v), -1, -2), SPD, 1e-3
    )
    close(la.eigvalsh(SPD, "U"), np.linalg.eigvalsh(SPD, "U"), 1e-3)
    w, v = la.eig(A[0])
    close(np.asarray(A[0]) @ np.asarray(v), np.asarray(v) * np.asarray(w)[None, :], 1e-3)
    got = np.sort_complex(np.asarray(la.eigvals(A[0])))
    close(got, np.sort_complex(np.linalg.eigvals(A[0])), 1e-3)
    q, r = la.qr(A[:, :, :3])
    close(np.asarray(q) @ np.asarray(r), A[:, :, :3])
    assert la.qr(A[:, :, :3], mode="complete").Q.shape == (3, 4, 4)
    close(la.qr(A[0], mode="r"), np.linalg.qr(A[0], mode="r"), 1e-3)
    h, tau = la.qr(A[0, :, :3], mode="raw")
    h_np, tau_np = np.linalg.qr(A[0, :, :3].astype(np.float64), mode="raw")
    close(h, h_np, 1e-3)
    close(tau, tau_np, 1e-3)
    u, s, vh = la.svd(A)
    close(np.asarray(u) * np.asarray(s)[..., None, :] @ np.asarray(vh), A, 1e-3)
    close(la.svdvals(A), np.linalg.svd(A, compute_uv=False), 1e-3)
    symmetric = A[0] + A[0].T
    u, s, vh = la.svd(symmetric, hermitian=True)
    close(s, np.linalg.svd(symmetric, compute_uv=False), 1e-3)
    close(np.asarray(u) * np.asarray(s)[None, :] @ np.asarray(vh), symmetric, 1e-3)


def test_norms_of_every_order():
    for order in [None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2]:
        close(la.norm(X, order), np.linalg.norm(X, order))
    v = np.array([3.0, -4, 0], np.float32)
    for order in [None, np.inf, -np.inf, 0, 1, 2, 3, 0.5]:
        close(la.norm(v, order), np.linalg.norm(v, order))
    close(la.norm(A, axis=(0, 2), keepdims=True), np.linalg.norm(A, axis=(0, 2), keepdims=True))
    close(la.norm(A), np.linalg.norm(A.ravel()))
    close(la.norm(C[0], 1), np.linalg.norm(C[0], 1))
    close(la.vector_norm(A, ord=1), np.abs(A).sum(), 1e-3)
    close(la.matrix_norm(A, ord=2), np.linalg.norm(A, 2, axis=(-2, -1)), 1e-3)
    close(la.cond(A[0]), np.linalg.cond(A[0]), 1e-2)
    close(la.cond(A[0], 1), np.linalg.cond(A[0], 1), 1e-2)
    assert float(la.cond(np.array([[1.0, 2], [2, 4]], np.float32), 1)) == np.inf


def test_rank_pinv_lstsq_powers_tensors():
    assert int(la.matrix_rank(np.ones((3, 3), np.float32))) == 1
    np.testing.assert_array_equal(la.matrix_rank(A), [4, 4, 4])
    assert la.matrix_rank(A).dtype == np.int32
    close(la.pinv(X), np.linalg.pinv(X), 1e-3)
    a, b = RNG.standard_normal((5, 3)).astype(np.float32), RNG.standard_normal(5).astype(np.float32)
    x, resid, rank, s = la.lstsq(a, b)
    want = np.linalg.lstsq(a, b, rcond=None)
    close(x, want[0], 1e-3)
    close(resid, want[1], 1e-3)
    assert int(rank) == want[2]
    close(s, want[3], 1e-3)
    assert la.lstsq(np.ones((3, 2), np.float32), np.ones((3, 2), np.float32), numpy_resid=True)[
        1
    ].shape == (0,)
    close(la.matrix_power(A[0], 3), np.linalg.matrix_power(A[0], 3), 1e-3)
    close(la.matrix_power(A[0], -2), np.linalg.matrix_power(A[0], -2), 1e-2)
    assert la.matrix_power(np.arange(4).reshape(2, 2), 0).dtype == np.int32
    t = RNG.standard_normal((4, 6, 8, 3)).astype(np.float32)
    close(la.tensorinv(t, 2), np.linalg.tensorinv(t, 2), 1e-2)
    t = RNG.standard_normal((6, 4, 2, 3, 4)).astype(np.float32)
    rhs = RNG.standard_normal((6, 4)).astype(np.float32)
    close(la.tensorsolve(t, rhs), np.linalg.tensorsolve(t, rhs), 1e-2)
    chain = [RNG.standard_normal(s).astype(np.float32) for s in [(3,), (3, 5), (5, 2), (2,)]]
    close(la.multi_dot(chain), np.linalg.multi_dot(chain), 1e-3)


def test_array_api_spellings():
    v1, v2 = (
        RNG.standard_normal((2, 3)).astype(np.float32),
        RNG.standard_normal(3).astype(np.float32),
    )
    close(la.cross(v1, v2), np.cross(v1, v2))
    close(la.outer(v2, v2), np.outer(v2, v2))
    close(la.matmul(A, B), A @ B, 1e-3)
    close(la.tensordot(A, B[0], axes=1), np.tensordot(A, B[0], axes=1), 1e-3)
    close(la.vecdot(A, A), (A * A).sum(-1), 1e-3)
    close(la.diagonal(A, offset=1), np.diagonal(A, 1, -2, -1))
    close(la.trace(A), np.trace(A, axis1=-2, axis2=-1), 1e-4)
    close(la.matrix_transpose(A), np.swapaxes(A, -1, -2))


def test_vmap_and_jit():
    close(vmap(la.det)(A), np.linalg.det(A))
    close(jit(la.solve)(A, B), np.linalg.solve(A, B))
    close(vmap(la.pinv)(A[:, :, :3]), np.linalg.pinv(A[:, :, :3]), 1e-3)


def test_errors():
    with pytest.raises(ValueError, match=r"Argument to inv must have shape \[..., n, n\]"):
        la.inv(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"Argument to _det\(\) must have shape"):
        la.det(np.ones(3))
    with pytest.raises(ValueError, match=r"Invalid shapes for solve.*Prior to JAX v0.5.0"):
        la.solve(A, B[:, :, 0])
    with pytest.raises(ValueError, match="Invalid order 'bad' for matrix norm"):
        la.norm(X, ord="bad")
    with pytest.raises(ValueError, match="Invalid order 'fro' for vector norm"):
        la.norm(X[0], ord="fro")
    with pytest.raises(ValueError, match="Improper number of axes for norm"):
        la.norm(A, axis=(0, 1, 2))
    with pytest.raises(ValueError, match="UPLO must be one of None, 'L', or 'U', got X"):
        la.eigh(SPD, UPLO="X")
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'x'"):
        la.qr(A, mode="x")
    with pytest.raises(ValueError, match="full_matrices and subset_by_index cannot both be set"):
        la.svd(A, subset_by_index=(0, 1))
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        la.inv([[1.0, 0.0], [0.0, 1.0]])
