"""lamina.scipy.linalg (factorizations, solves, decompositions, special matrices)
against scipy.linalg: values in float32, complex64 and float64 (x64), reconstructions
of the decompositions, gradients (numerical checks), jit and vmap, and JAX's errors
(messages recorded from JAX 0.10.2)."""

import warnings

import numpy as np
import pytest
import scipy.linalg as sla

import lamina.scipy.linalg as la
from lamina.interpreters import config, jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4)).astype(np.float32)
B = RNG.standard_normal((4, 2)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
TALL = RNG.standard_normal((5, 3)).astype(np.float32)
C = (A + 1j * RNG.standard_normal((4, 4))).astype(np.complex64)
HPD = (C @ C.conj().T + 4 * np.eye(4)).astype(np.complex64)
CB = (B + 1j * RNG.standard_normal((4, 2))).astype(np.complex64)


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def herm(x):
    return np.conj(np.swapaxes(x, -1, -2))


@pytest.fixture
def x64():
    config.update("jax_enable_x64", True)
    yield
    config.update("jax_enable_x64", False)


# --- factorizations ---------------------------------------------------------------------


def test_cholesky_and_cho_solve():
    for m, b in [(SPD, B), (HPD, CB)]:
        for lower in (False, True):
            factor = la.cholesky(m, lower=lower)
            assert factor.dtype == m.dtype
            close(factor, sla.cholesky(m, lower=lower), 1e-3)
            c_and_lower = la.cho_factor(m, lower=lower)
            assert c_and_lower[1] is lower
            close(la.cho_solve(c_and_lower, b), sla.cho_solve((np.asarray(factor), lower), b), 1e-3)
    close(la.cho_solve(la.cho_factor(SPD), B[:, 0]), np.linalg.solve(SPD, B[:, 0]), 1e-3)
    assert la.cholesky(np.eye(2, dtype=np.int32)).dtype == np.float32  # recorded from JAX 0.10.2


def test_lu_and_lu_solve():
    for m in (TALL, TALL.T, C):
        p, l, u = la.lu(m)
        sp, sl, su = sla.lu(m)
        close(p, sp)
        close(l, sl, 1e-3)
        close(u, su, 1e-3)
        close(np.asarray(p) @ np.asarray(l) @ np.asarray(u), m, 1e-3)
        pl, u2 = la.lu(m, permute_l=True)
        close(np.asarray(pl) @ np.asarray(u2), m, 1e-3)
    # The permutation matrix is real even for complex input (recorded from JAX 0.10.2).
    assert [x.dtype for x in la.lu(C)] == [np.float32, np.complex64, np.complex64]
    lu, piv = la.lu_factor(A)
    slu, spiv = sla.lu_factor(A)
    close(lu, slu, 1e-3)
    np.testing.assert_array_equal(piv, spiv)
    assert piv.dtype == np.int32
    for m, b in [(A, B), (C, CB)]:
        factors = la.lu_factor(m)
        for trans in (0, 1, 2):
            want = sla.lu_solve(sla.lu_factor(m), b, trans=trans)
            close(la.lu_solve(factors, b, trans=trans), want, 1e-3)
        close(la.lu_solve(factors, b[:, 0]), sla.lu_solve(sla.lu_factor(m), b[:, 0]), 1e-3)


def test_qr_modes_and_pivoting():
    for m in (A, TALL, TALL.T, C):
        q, r = la.qr(m)
        sq, sr = sla.qr(m)
        close(q, sq, 1e-3)
        close(r, sr, 1e-3)
        (r_only,) = la.qr(m, mode="r")
        close(r_only, sr, 1e-3)
        q, r = la.qr(m, mode="economic")
        close(np.asarray(q) @ np.asarray(r), m, 1e-3)
        assert q.shape == (m.shape[0], min(m.shape))
        q, r, p = la.qr(m, mode="economic", pivoting=True)
        assert p.dtype == np.int32
        close(np.asarray(q) @ np.asarray(r), m[:, np.asarray(p)], 1e-3)
        np.testing.assert_array_equal(p, sla.qr(m, mode="economic", pivoting=True)[2])
        r, p = la.qr(m, mode="r", pivoting=True)
        assert r.shape == m.shape


def test_qr_multiply():
    for m in (TALL, TALL.T):
        right = RNG.standard_normal((2, m.shape[0])).astype(np.float32)
        left = RNG.standard_normal((min(m.shape), 2)).astype(np.float32)
        for c, mode, conjugate in [(right, "right", False), (left[:, 0], "left", True)]:
            got, r = la.qr_multiply(m, c, mode=mode, conjugate=conjugate)
            want, sr = sla.qr_multiply(m, c, mode=mode, conjugate=conjugate)
            close(got, want, 1e-3)
            close(r, sr, 1e-3)
        got, r, p = la.qr_multiply(m, right, pivoting=True)
        want, sr, sp = sla.qr_multiply(m, right, pivoting=True)
        close(got, want, 1e-3)
        np.testing.assert_array_equal(p, sp)
    got, _ = la.qr_multiply(C, CB, mode="left", conjugate=True)
    close(got, sla.qr_multiply(C, CB, mode="left", conjugate=True)[0], 1e-3)


def test_svd_and_eigh():
    for m in (A, TALL, C):
        u, s, vh = la.svd(m)
        close(s, sla.svd(m, compute_uv=False), 1e-3)
        u, s, vh = la.svd(m, full_matrices=False)
        close((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), m, 1e-3)
        assert la.svd(m, compute_uv=False).shape == (min(m.shape),)
    for m in (SPD, HPD):
        w, v = la.eigh(m)
        assert w.dtype == np.float32 and v.dtype == m.dtype
        close(w, sla.eigh(m, eigvals_only=True), 1e-3)
        close(np.asarray(m) @ np.asarray(v), np.asarray(v) * np.asarray(w), 1e-3)
        # The input is symmetrized first (recorded from JAX 0.10.2).
        upper = np.triu(m)
        want = np.linalg.eigvalsh((upper + herm(upper)) / 2)
        close(la.eigh(upper, lower=False, eigvals_only=True), want, 1e-3)


def test_schur_rsf2csf_hessenberg():
    t, z = la.schur(A)
    assert t.dtype == z.dtype == np.float32
    t, z = np.asarray(t), np.asarray(z)
    close(z @ t @ z.T, A, 1e-3)
    assert np.allclose(np.tril(t, -2), 0)
    close(np.sort_complex(np.linalg.eigvals(t)), np.sort_complex(np.linalg.eigvals(A)), 1e-3)
    tc, zc = la.schur(A, output="complex")
    assert tc.dtype == np.complex64
    tc, zc = np.asarray(tc), np.asarray(zc)
    close(zc @ tc @ herm(zc), A, 1e-3)
    assert np.allclose(np.tril(tc, -1), 0)
    # rsf2csf on SciPy's real Schur form gives SciPy's complex one.
    st, sz = sla.schur(A.astype(np.float64))
    got_t, got_z = la.rsf2csf(st.astype(np.float32), sz.astype(np.float32))
    want_t, want_z = sla.rsf2csf(st, sz)
    close(got_t, want_t, 1e-3)
    close(got_z, want_z, 1e-3)
    for m in (A, C):
        h, q = la.hessenberg(m, calc_q=True)
        sh, sq = sla.hessenberg(m, calc_q=True)
        close(h, sh, 1e-3)
        close(q, sq, 1e-3)
        close(np.asarray(q) @ np.asarray(h) @ herm(np.asarray(q)), m, 1e-3)
        close(la.hessenberg(m), sh, 1e-3)
    h, q = la.hessenberg(np.zeros((0, 0), np.float32), calc_q=True)
    assert h.shape == q.shape == (0, 0)


def test_batched_decompositions():
    stack = np.stack([A, 2 * A.T])
    t, z = la.schur(stack)
    for i in range(2):
        close(np.asarray(z[i]) @ np.asarray(t[i]) @ np.asarray(z[i]).T, stack[i], 1e-3)
    h, q = la.hessenberg(stack, calc_q=True)
    close(np.asarray(q) @ np.asarray(h) @ herm(np.asarray(q)), stack, 1e-3)
    factor = la.cholesky(np.stack([SPD, 2 * SPD]))
    close(factor[1], sla.cholesky(2 * SPD), 1e-3)
    lu, piv = la.lu_factor(stack)
    close(la.lu_solve((lu, piv), np.stack([B, B])), np.linalg.solve(stack, np.stack([B, B])), 1e-3)
    st = np.stack([sla.schur(m.astype(np.float64))[0] for m in stack]).astype(np.float32)
    sz = np.stack([sla.schur(m.astype(np.float64))[1] for m in stack]).astype(np.float32)
    ct, cz = la.rsf2csf(st, sz)
    close(np.asarray(cz) @ np.asarray(ct) @ herm(np.asarray(cz)), stack, 1e-3)


# --- solves -----------------------------------------------------------------------------


def test_solve_assume_a():
    for assume_a in ("gen", "sym", "her", "pos"):
        close(la.solve(SPD, B, assume_a=assume_a), sla.solve(SPD, B), 1e-3)
        close(la.solve(SPD, B[:, 0], assume_a=assume_a), sla.solve(SPD, B[:, 0]), 1e-3)
    # "pos" reads only the named triangle.
    close(la.solve(np.tril(SPD), B, assume_a="pos", lower=True), sla.solve(SPD, B), 1e-3)
    close(la.solve(np.triu(SPD), B, assume_a="pos"), sla.solve(SPD, B), 1e-3)
    close(la.solve(HPD, CB, assume_a="pos"), sla.solve(HPD, CB), 1e-3)
    batch = np.stack([SPD, 2 * SPD])
    close(
        la.solve(batch, np.stack([B, B]), assume_a="pos"),
        np.linalg.solve(batch, np.stack([B, B])),
        1e-3,
    )
    assert la.solve(np.eye(2, dtype=np.int32), np.ones(2, np.int32)).dtype == np.float32


def test_solve_triangular():
    upper, lower = np.triu(A) + 4 * np.eye(4, dtype=np.float32), np.tril(C) + 4 * np.eye(4)
    for m, b, is_lower in [(upper, B, False), (lower.astype(np.complex64), CB, True)]:
        for trans in (0, 1, 2, "N", "T", "C"):
            for unit in (False, True):
                want = sla.solve_triangular(m, b, trans=trans, lower=is_lower, unit_diagonal=unit)
                got = la.solve_triangular(m, b, trans=trans, lower=is_lower, unit_diagonal=unit)
                close(got, want, 1e-3)
        close(
            la.solve_triangular(m, b[:, 0], lower=is_lower),
            sla.solve_triangular(m, b[:, 0], lower=is_lower),
            1e-3,
        )
    # Only the named triangle is read.
    close(
        la.solve_triangular(A + 4 * np.eye(4, dtype=np.float32), B),
        sla.solve_triangular(upper, B),
        1e-3,
    )
    batch = np.stack([upper, 2 * upper])
    got = la.solve_triangular(batch, np.stack([B, B]))
    close(got[1], sla.solve_triangular(2 * upper, B), 1e-3)


def test_inv_det():
    close(la.inv(A), sla.inv(A), 1e-3)
    close(la.det(A), sla.det(A), 1e-3)
    close(la.det(C), sla.det(C), 1e-3)
    close(la.det(np.stack([A, 2 * A])), np.linalg.det(np.stack([A, 2 * A])), 1e-3)


def test_batched_1d_solves_warn_as_jax():
    batch = np.stack([SPD, SPD])
    with pytest.warns(FutureWarning, match="cho_solve: batched 1D solves"):
        got = la.cho_solve(la.cho_factor(batch), np.stack([B[:, 0], B[:, 1]]))
    close(got[1], np.linalg.solve(SPD, B[:, 1]), 1e-3)
    with pytest.warns(FutureWarning, match="solve_triangular: batched 1D solves"):
        la.solve_triangular(np.triu(batch), np.ones((2, 4), np.float32))
    with pytest.warns(FutureWarning, match="lu_solve: batched 1D solves"):
        la.lu_solve(la.lu_factor(batch), np.ones((2, 4), np.float32))


# --- float64 ----------------------------------------------------------------------------


def test_float64(x64):
    a, b, spd = A.astype(np.float64), B.astype(np.float64), SPD.astype(np.float64)
    tol = 1e-10
    close(la.solve(a, b), sla.solve(a, b), tol)
    close(la.solve(spd, b, assume_a="pos"), sla.solve(spd, b), tol)
    close(la.cho_solve(la.cho_factor(spd), b), sla.cho_solve(sla.cho_factor(spd), b), tol)
    close(la.lu_solve(la.lu_factor(a), b, trans=1), sla.lu_solve(sla.lu_factor(a), b, trans=1), tol)
    close(la.solve_triangular(spd, b, lower=True), sla.solve_triangular(spd, b, lower=True), tol)
    close(la.inv(a), sla.inv(a), tol)
    close(la.det(a), sla.det(a), tol)
    q, r = la.qr(a)
    close(np.asarray(q) @ np.asarray(r), a, tol)
    close(la.svd(a, compute_uv=False), sla.svdvals(a), tol)
    close(la.eigh(spd, eigvals_only=True), sla.eigh(spd, eigvals_only=True), tol)
    h = la.hessenberg(a)
    close(h, sla.hessenberg(a), tol)
    t, z = la.schur(a)
    assert t.dtype == z.dtype == h.dtype == np.float64
    close(np.asarray(z) @ np.asarray(t) @ np.asarray(z).T, a, tol)


# --- gradients, jit, vmap ---------------------------------------------------------------


def test_gradients():
    # One numerical check over all the solves, so it compiles once per mode.
    a, b, spd = A[:3, :3] + 3 * np.eye(3, dtype=np.float32), B[:3], SPD[:3, :3]
    lu, piv = la.lu_factor(a)

    def solves(a, b, spd, c, lu):
        return (
            la.solve(a, b),
            la.solve(spd, b, assume_a="pos"),
            la.cho_solve((c, True), b),
            la.solve_triangular(a, b, trans=1),
            la.det(a),
            la.inv(a),
            la.lu_solve((lu, piv), b, trans=2),
        )

    args = (a, b, spd, np.linalg.cholesky(spd), np.asarray(lu))
    check_grads(jit(solves), args, 1, atol=5e-2, rtol=5e-2)


def test_jit_and_vmap():
    batch = np.stack([SPD, 2 * SPD])
    bs = np.stack([B, 3 * B])
    got = jit(lambda m, y: la.solve(m, y, assume_a="pos"))(batch, bs)
    close(got, np.linalg.solve(batch, bs), 1e-3)
    got = vmap(lambda m, y: la.solve(m, y[:, 0], assume_a="pos"))(batch, bs)
    close(got, np.linalg.solve(batch, bs)[..., 0], 1e-3)
    got = vmap(lambda m, y: la.cho_solve(la.cho_factor(m), y))(batch, bs)
    close(got, np.linalg.solve(batch, bs), 1e-3)
    got = vmap(lambda m, y: la.lu_solve(la.lu_factor(m), y, trans=1))(batch, bs)
    close(got, np.linalg.solve(np.swapaxes(batch, 1, 2), bs), 1e-3)
    p, l, u = jit(la.lu)(A)
    close(np.asarray(p) @ np.asarray(l) @ np.asarray(u), A, 1e-3)
    c = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(vmap(la.toeplitz)(c), np.stack([sla.toeplitz(x) for x in c]))
    np.testing.assert_array_equal(jit(la.circulant)(c), np.stack([sla.circulant(x) for x in c]))


# --- special matrices -------------------------------------------------------------------


def exact(got, want, dtype):
    assert got.dtype == dtype, (got.dtype, dtype)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want).astype(dtype))


def test_structured_matrices_equal_scipy():
    c, r = np.array([1, 2, 3], np.int32), np.array([4, 5], np.int32)
    f = np.array([1.0, 2.0, 3.0], np.float32)
    s = np.array([0.5, 0.25], np.float32)
    exact(la.toeplitz(c), sla.toeplitz(c), np.int32)
    exact(la.toeplitz(c, r), sla.toeplitz(c, r), np.int32)
    z = np.array([1 + 1j, 2, 3j], np.complex64)
    exact(la.toeplitz(z), sla.toeplitz(z), np.complex64)
    exact(la.hankel(c), sla.hankel(c), np.int32)
    exact(la.hankel(c, r), sla.hankel(c, r), np.int32)
    exact(la.circulant(c), sla.circulant(c), np.int32)
    exact(la.leslie(f, s), sla.leslie(f, s), np.float32)
    exact(la.companion(c), sla.companion(c), np.float32)
    exact(la.fiedler(c), sla.fiedler(c), np.int32)
    poly = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    exact(la.fiedler_companion(poly), sla.fiedler_companion(poly), np.float32)
    exact(la.fiedler_companion(poly[:2]), sla.fiedler_companion(poly[:2]), np.float32)
    for n in (2, 3, 5):
        for mode in ("full", "same", "valid"):
            exact(la.convolution_matrix(c, n, mode), sla.convolution_matrix(c, n, mode), np.int32)
    blocks = (1, np.array([2, 3], np.int32), np.ones((2, 2), np.float32))
    exact(la.block_diag(*blocks), sla.block_diag(*blocks), np.float32)
    exact(la.block_diag(), np.zeros((1, 0)), np.float32)
    # Batches over leading axes (recorded from JAX 0.10.2: leslie/companion map rows).
    rows = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    exact(la.companion(rows), np.stack([sla.companion(x) for x in rows]), np.float32)
    exact(
        la.toeplitz(rows, rows[0]), np.stack([sla.toeplitz(x, rows[0]) for x in rows]), np.float32
    )
    exact(la.hankel(rows), np.stack([sla.hankel(x) for x in rows]), np.float32)
    exact(la.fiedler(rows), np.stack([sla.fiedler(x) for x in rows]), np.float32)


def test_named_matrices_match_scipy():
    exact(la.hadamard(8), sla.hadamard(8), np.int32)
    exact(la.hadamard(4, np.float32), sla.hadamard(4), np.float32)
    close(la.hilbert(4), sla.hilbert(4), 1e-7)
    assert la.hilbert(4).dtype == np.float32
    # JAX computes binomials through lgamma in float32, so these are close, not exact.
    close(la.invhilbert(4), sla.invhilbert(4), 1e-3)
    for kind in ("symmetric", "lower", "upper"):
        close(la.pascal(5, kind), sla.pascal(5, kind), 1e-4)
        close(la.invpascal(5, kind), sla.invpascal(5, kind), 1e-4)
    close(la.helmert(5), sla.helmert(5), 1e-6)
    close(la.helmert(5, full=True), sla.helmert(5, full=True), 1e-6)
    for scale in (None, "sqrtn", "n"):
        close(la.dft(5, scale), sla.dft(5, scale), 1e-6)
    assert la.dft(3).dtype == np.complex64


def test_matrix_dtypes_under_x64(x64):
    # Recorded from JAX 0.10.2 with jax_enable_x64: pascal stays float32.
    assert la.pascal(3).dtype == np.float32
    for m, dtype in [
        (la.hilbert(3), np.float64),
        (la.invpascal(3), np.float64),
        (la.invhilbert(3), np.float64),
        (la.helmert(3), np.float64),
        (la.hadamard(4), np.int64),
        (la.dft(4), np.complex128),
        (la.companion(np.array([1, 2, 3])), np.float64),
        (la.fiedler(np.array([1, 2, 3])), np.int64),
    ]:
        assert m.dtype == dtype
    close(la.invhilbert(5), sla.invhilbert(5), 1e-9)
    close(la.dft(5), sla.dft(5), 1e-12)


# --- errors (messages recorded from JAX 0.10.2) ----------------------------------------

SQ = np.eye(3, dtype=np.float32)
WIDE = np.ones((2, 3), np.float32)

ERRORS = [
    (
        lambda: la.cholesky(WIDE),
        ValueError,
        r"The input to cholesky must be a square matrix\. Got shape \(3, 2\)\.",
    ),
    (
        lambda: la.cholesky(np.ones(3)),
        ValueError,
        "x must be at least two-dimensional for matrix_transpose; got ndim=1",
    ),
    (
        lambda: la.cho_solve((SQ, False), np.ones(4)),
        ValueError,
        "inconsistent size for core dimension 'n': 4 vs 3",
    ),
    (
        lambda: la.lu(np.ones(3)),
        TypeError,
        r"Input 0 to lu must have rank at least 2, but got shape=\(3,\)",
    ),
    (lambda: la.lu_factor(np.ones(3)), TypeError, "Input 0 to lu must have rank at least 2"),
    (
        lambda: la.lu_solve(la.lu_factor(SQ), np.ones(3), trans=3),
        ValueError,
        "'trans' value must be 0, 1, or 2, got 3",
    ),
    (
        lambda: la.lu_solve(la.lu_factor(SQ), np.ones(4)),
        ValueError,
        "inconsistent size for core dimension 'n': 4 vs 3",
    ),
    (lambda: la.qr(SQ, mode="raw"), ValueError, "Unsupported QR decomposition mode 'raw'"),
    (lambda: la.qr(np.ones(3)), TypeError, "Input 0 to qr must have rank at least 2"),
    (
        lambda: la.qr_multiply(SQ, np.ones(3), mode="up"),
        ValueError,
        "mode must be 'right' or 'left', got 'up'",
    ),
    (
        lambda: la.qr_multiply(SQ, np.ones((4, 2)), mode="left"),
        ValueError,
        r"Array shapes are not compatible for Q @ c operation: a has shape \(3, 3\) so Q has "
        r"3 columns, but c has 4 rows \(expected 3\)\.",
    ),
    (
        lambda: la.qr_multiply(SQ, np.ones((2, 4))),
        ValueError,
        r"Array shapes are not compatible for c @ Q operation: a has shape \(3, 3\) so Q has "
        r"3 rows, but c has 4 columns \(expected 3\)\.",
    ),
    (
        lambda: la.solve(SQ, np.ones(3), assume_a="foo"),
        ValueError,
        r"Expected assume_a to be one of \['gen', 'sym', 'her', 'pos'\]; got 'foo'",
    ),
    (
        lambda: la.solve(SQ, np.ones(4), assume_a="pos"),
        ValueError,
        r"The arguments to solve must have shapes a=\[\.\.\., m, m\] and b=\[\.\.\., m, k\] "
        r"or b=\[\.\.\., m\]; got a=\(3, 3\) and b=\(4,\)",
    ),
    (
        lambda: la.solve(WIDE, np.ones(2), assume_a="pos"),
        ValueError,
        r"got a=\(2, 3\) and b=\(2,\)",
    ),
    (lambda: la.solve_triangular(SQ, np.ones(3), trans=3), ValueError, "Invalid 'trans' value 3"),
    (lambda: la.solve_triangular(SQ, np.ones(3), trans="X"), ValueError, "Invalid 'trans' value X"),
    (
        lambda: la.solve_triangular(SQ, np.ones(4)),
        ValueError,
        "inconsistent size for core dimension 'n': 4 vs 3",
    ),
    (
        lambda: la.inv(WIDE),
        ValueError,
        r"Argument to inv must have shape \[\.\.\., n, n\], got \(2, 3\)",
    ),
    (lambda: la.svd(np.ones(3)), TypeError, "Input 0 to svd must have rank at least 2"),
    (lambda: la.eigh(SQ, SQ), NotImplementedError, "Only the b=None case of eigh is implemented"),
    (
        lambda: la.eigh(SQ, type=2),
        NotImplementedError,
        r"Only the type=1 case of eigh is implemented\.",
    ),
    (
        lambda: la.eigh(SQ, eigvals=(0, 1)),
        NotImplementedError,
        r"Only the eigvals=None case of eigh is implemented\.",
    ),
    (
        lambda: la.schur(SQ, output="foo"),
        ValueError,
        r"Expected 'output' to be either 'real' or 'complex', got output='foo'\.",
    ),
    (
        lambda: la.schur(WIDE),
        ValueError,
        r"The input to schur must be a square matrix\. Got shape \(2, 3\)\.",
    ),
    (lambda: la.schur(np.ones(3)), TypeError, "Input 0 to schur must have rank at least 2"),
    (
        lambda: la.schur(np.eye(3, dtype=np.int32)),
        TypeError,
        "schur does not accept dtype int32 at position 0. Accepted dtypes at position 0 are "
        "subtypes of floating, complexfloating.",
    ),
    (lambda: la.rsf2csf(WIDE, SQ), ValueError, "Input 'T' must be square."),
    (lambda: la.rsf2csf(SQ, WIDE), ValueError, "Input 'Z' must be square."),
    (
        lambda: la.rsf2csf(SQ, np.eye(2)),
        ValueError,
        r"Input array shapes must match: Z: \(2, 2\) vs\. T: \(3, 3\)",
    ),
    (
        lambda: la.hessenberg(WIDE),
        ValueError,
        r"Argument to Hessenberg reduction must have shape \[\.\.\., n, n\], got shape \(2, 3\)",
    ),
    (
        lambda: la.hessenberg(np.ones(3)),
        TypeError,
        "Input 0 to hessenberg must have rank at least 2",
    ),
    (
        lambda: la.hessenberg(np.eye(3, dtype=np.int32)),
        TypeError,
        "hessenberg does not accept dtype int32",
    ),
    (
        lambda: la.block_diag(np.ones((1, 1, 1))),
        ValueError,
        "Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got .* at "
        "argument 0.",
    ),
    (
        lambda: la.toeplitz([1, 2]),
        TypeError,
        "toeplitz requires ndarray or scalar arguments, got <class 'list'> at position 0.",
    ),
    (lambda: la.hankel(1), ValueError, "hankel: c must be at least 1-dimensional, got a scalar."),
    (
        lambda: la.hankel(np.ones(2), 1),
        ValueError,
        "hankel: r must be at least 1-dimensional, got a scalar.",
    ),
    (lambda: la.circulant([1]), TypeError, "circulant requires ndarray or scalar arguments"),
    (
        lambda: la.companion(np.ones(1)),
        ValueError,
        r"The length of `a` along the last axis must be at least 2; got shape \(1,\)\.",
    ),
    (
        lambda: la.leslie(np.ones(1), np.ones(0)),
        ValueError,
        r"The length of f along the last axis must be at least 2; got shape \(1,\)\.",
    ),
    (
        lambda: la.leslie(np.ones(3), np.ones(1)),
        ValueError,
        r"Incorrect lengths for f and s\. The length of s along the last axis must be one less "
        r"than the length of f; got f shape \(3,\) and s shape \(1,\)\.",
    ),
    (
        lambda: la.fiedler_companion(np.zeros(0)),
        ValueError,
        r"fiedler_companion requires the last axis of 'a' to have nonzero length, but got an "
        r"array of shape \(0,\)\.",
    ),
    (
        lambda: la.convolution_matrix(np.ones(3), 0),
        ValueError,
        r"n must be a positive integer; got 0\.",
    ),
    (
        lambda: la.convolution_matrix(np.ones(3), 2, "x"),
        ValueError,
        r"mode must be one of 'full', 'valid', 'same'; got 'x'\.",
    ),
    (
        lambda: la.convolution_matrix(1.0, 2),
        ValueError,
        "convolution_matrix: a must be at least 1-dimensional, got a scalar.",
    ),
    (
        lambda: la.convolution_matrix(np.zeros(0), 2),
        ValueError,
        r"len\(a\) must be at least 1; got shape \(0,\)\.",
    ),
    (lambda: la.dft(4, "x"), ValueError, r"scale must be None, 'sqrtn', or 'n'; got 'x'\."),
    (
        lambda: la.dft(4, dtype=np.float32),
        ValueError,
        r"dtype must be a complex floating-point type; got float32\.",
    ),
    (lambda: la.hadamard(3), ValueError, r"n must be a positive power of 2; got 3\."),
    (lambda: la.helmert(0), ValueError, r"n must be a positive integer; got 0\."),
    (
        lambda: la.pascal(3, "x"),
        ValueError,
        r"Expected kind to be on of: \['symmetric', 'lower', 'upper'\]; got x",
    ),
    (
        lambda: la.invpascal(3, "x"),
        ValueError,
        r"Expected kind to be one of: \['symmetric', 'lower', 'upper'\]; got x",
    ),
]


def test_errors():
    for i, (call, kind, message) in enumerate(ERRORS):
        with warnings.catch_warnings(), pytest.raises(kind, match=message):
            warnings.simplefilter("ignore")
            call()
            pytest.fail(f"case {i} raised nothing")
