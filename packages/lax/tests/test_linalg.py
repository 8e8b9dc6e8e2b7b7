"""lax.linalg on CPU (LAPACK through jaxlib's FFI targets): factorizations checked by
reconstruction against NumPy/SciPy, derivatives against numerical differences, vmap
against a Python loop, and the errors JAX raises for bad shapes."""

from __future__ import annotations

import inspect
import json
import pathlib

import numpy as np
import pytest
import scipy.linalg

from lamina import lax
from lamina import lax as lax_module
from lamina.interpreters import enable_x64, jit, jvp, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads
from lamina.lax import linalg

rng = np.random.default_rng(0)
DTYPES = [np.float32, np.float64, np.complex64]
TOL = {np.float32: 1e-4, np.float64: 1e-10, np.complex64: 1e-4, np.complex128: 1e-10}


def rand(shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def spd(shape, dtype):
    a = rand(shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def hermitian(shape, dtype):
    a = rand(shape, dtype)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def close(got, want, dtype):
    np.testing.assert_allclose(np.asarray(got), want, atol=TOL[dtype] * 10, rtol=TOL[dtype])


# The cases run under x64 so float64 stays float64.
@pytest.fixture(autouse=True)
def x64():
    with enable_x64():
        yield


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_cholesky_reconstructs(dtype, shape):
    a = spd(shape, dtype)
    c = np.asarray(linalg.cholesky(a))
    assert c.dtype == dtype and c.shape == shape
    close(c, np.linalg.cholesky(a), dtype)
    close(c @ H(c), a, dtype)


def test_cholesky_of_indefinite_matrix_is_nan():
    a = -spd((3, 3), np.float32)
    assert np.isnan(np.asarray(linalg.cholesky(a))[np.tril_indices(3)]).all()


CHOLESKY_JAXPR = "\n".join(
    [
        "{ lambda ; a:f32[3,3]. let",
        "    b:f32[3,3] = transpose[permutation=(1, 0)] a",
        "    c:f32[3,3] = add a b",
        "    d:f32[3,3] = div c 2.0:f32[]",
        "    e:f32[3,3] = cholesky d",
        "    f:i32[3,3] = iota[dimension=0 dtype=int32 shape=(3, 3) sharding=None] ",
        "    g:i32[3,3] = add f 0:i32[]",
        "    h:i32[3,3] = iota[dimension=1 dtype=int32 shape=(3, 3) sharding=None] ",
        "    i:bool[3,3] = ge g h",
        "    j:f32[3,3] = broadcast_in_dim 0.0:f32[]",
        "    k:f32[3,3] = select_n i j e",
        "  in (k,) }",
    ]
)

SVD_JAXPR = """{ lambda ; a:f32[3,3]. let
    b:f32[3] c:f32[3,3] d:f32[3,3] = svd[
      algorithm=None
      compute_uv=True
      full_matrices=True
      subset_by_index=None
    ] a
  in (c, b, d) }"""


def test_jaxprs_print_as_jax():
    a = np.eye(3, dtype=np.float32)
    assert str(make_jaxpr(linalg.cholesky)(a)) == CHOLESKY_JAXPR
    assert str(make_jaxpr(linalg.svd)(a)) == SVD_JAXPR
    lu_text = "{ lambda ; a:f32[3,3]. let b:f32[3,3] c:i32[3] d:i32[3] = lu a in (b, c, d) }"
    assert str(make_jaxpr(linalg.lu)(a)) == lu_text


# Each flag both ways, each dtype several times (a sample of the full product).
TRSM_CASES = [
    (dtype, left_side, lower, transpose_a, conjugate_a)
    for i, (left_side, lower, transpose_a, conjugate_a) in enumerate(
        [
            (True, True, False, False),
            (True, False, True, False),
            (False, True, True, True),
            (False, False, False, True),
            (True, True, True, True),
            (False, True, False, False),
            (True, False, False, True),
            (False, False, True, False),
        ]
    )
    for dtype in (DTYPES[i % 3], DTYPES[(i + 1) % 3])
]


@pytest.mark.parametrize("dtype,left_side,lower,transpose_a,conjugate_a", TRSM_CASES)
def test_triangular_solve(dtype, left_side, lower, transpose_a, conjugate_a):
    n = 4
    a = rand((2, n, n), dtype) + 4 * np.eye(n, dtype=dtype)
    b = rand((2, n, 3) if left_side else (2, 3, n), dtype)
    unit = lower and transpose_a
    x = linalg.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                conjugate_a=conjugate_a, unit_diagonal=unit)  # fmt: skip
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = t - np.diagonal(t, axis1=-2, axis2=-1)[..., None] * np.eye(n) + np.eye(n)
    t = np.swapaxes(t, -1, -2) if transpose_a else t
    t = np.conj(t) if conjugate_a else t
    x = np.asarray(x)
    close(t @ x if left_side else x @ t, b, dtype)


def test_triangular_solve_shape_error():
    a = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match="Incompatible shapes for arguments to triangular_solve"):
        linalg.triangular_solve(a, np.ones((3, 2), np.float32))


@pytest.mark.parametrize(
    "dtype,shape",
    [(np.float32, (5, 5)), (np.float64, (2, 4, 4)), (np.complex64, (5, 3)), (np.float64, (3, 5))],
)
def test_lu(dtype, shape):
    a = rand(shape, dtype)
    lu, pivots, perm = map(np.asarray, linalg.lu(a))
    m, n = shape[-2:]
    k = min(m, n)
    assert pivots.shape == (*shape[:-2], k) and perm.shape == (*shape[:-2], m)
    lower = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    upper = np.triu(lu)[..., :k, :]
    permuted = np.take_along_axis(a, perm[..., :, None], axis=-2)
    close(lower @ upper, permuted, dtype)
    for idx in np.ndindex(shape[:-2]):  # LAPACK's pivots, as SciPy reports them
        _, want_piv = scipy.linalg.lu_factor(a[idx])
        np.testing.assert_array_equal(pivots[idx], want_piv)


def test_lu_pivots_to_permutation():
    pivots = np.array([[2, 2, 3], [0, 4, 4]], np.int32)
    got = np.asarray(linalg.lu_pivots_to_permutation(pivots, 5))
    np.testing.assert_array_equal(got, [[2, 0, 3, 1, 4], [0, 4, 1, 3, 2]])
    with pytest.raises(ValueError, match="Output permutation size 2 has to exceed"):
        linalg.lu_pivots_to_permutation(pivots, 2)


SHAPE_CASES = [
    (DTYPES[i % 3], shape, full)
    for i, (shape, full) in enumerate(
        [
            ((4, 4), True),
            ((2, 5, 3), True),
            ((3, 5), True),
            ((4, 4), False),
            ((2, 5, 3), False),
            ((3, 5), False),
        ]
    )
]


def test_rank_errors():
    v = np.ones(3, np.float32)
    for fun in (linalg.lu, linalg.qr, linalg.svd):
        with pytest.raises(TypeError, match="must have rank at least 2, but got shape=\\(3,\\)"):
            fun(v)


@pytest.mark.parametrize("dtype,shape,full_matrices", SHAPE_CASES)
def test_qr(dtype, shape, full_matrices):
    a = rand(shape, dtype)
    q, r = map(np.asarray, linalg.qr(a, full_matrices=full_matrices))
    m, n = shape[-2:]
    k = m if full_matrices else min(m, n)
    assert q.shape == (*shape[:-2], m, k) and r.shape == (*shape[:-2], k, n)
    close(q @ r, a, dtype)
    close(H(q) @ q, np.broadcast_to(np.eye(k), (*shape[:-2], k, k)), dtype)
    np.testing.assert_array_equal(np.tril(r, -1), 0)


def test_householder_product_matches_scipy():
    a = rand((5, 3), np.float64)
    raw, taus = scipy.linalg.lapack.dgeqrf(a)[:2]
    q = np.asarray(linalg.householder_product(raw, taus))
    close(q, np.linalg.qr(a)[0], np.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_eigh(dtype, shape):
    a = hermitian(shape, dtype)
    v, w = map(np.asarray, linalg.eigh(a))
    assert w.dtype == np.finfo(dtype).dtype
    close(w, np.linalg.eigvalsh(a), dtype)
    close(a @ v, v * w[..., None, :], dtype)


def test_eigh_reads_the_upper_triangle():
    a = hermitian((4, 4), np.float64)
    garbage = np.triu(a) + np.tril(rand((4, 4), np.float64), -1)
    _, w = linalg.eigh(garbage, lower=False, symmetrize_input=False)
    close(w, np.linalg.eigvalsh(a), np.float64)


@pytest.mark.parametrize("dtype,shape,full_matrices", SHAPE_CASES)
def test_svd(dtype, shape, full_matrices):
    a = rand(shape, dtype)
    u, s, vh = map(np.asarray, linalg.svd(a, full_matrices=full_matrices))
    k = min(shape[-2:])
    close(s, np.linalg.svd(a, compute_uv=False), dtype)
    close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype)
    s_only = np.asarray(linalg.svd(a, compute_uv=False))
    close(s_only, s, dtype)


# --- derivatives --------------------------------------------------------------------


def test_cholesky_grads():
    a = spd((3, 3), np.float64)
    check_grads(linalg.cholesky, (a,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
def test_triangular_solve_grads(left_side, transpose_a):
    a = rand((3, 3), np.float64) + 3 * np.eye(3)
    b = rand((3, 2) if left_side else (2, 3), np.float64)

    def f(a, b):
        return linalg.triangular_solve(a, b, left_side=left_side, lower=True,
                                       transpose_a=transpose_a)  # fmt: skip

    check_grads(f, (a, b), order=2, modes=("fwd", "rev"))


def test_lu_grads():
    a = rand((4, 4), np.float64)
    check_grads(lambda x: linalg.lu(x)[0], (a,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("shape", [(3, 3), (4, 3)])
def test_qr_grads(shape):
    a = rand(shape, np.float64)
    check_grads(lambda x: linalg.qr(x, full_matrices=False), (a,), order=1,
                modes=("fwd", "rev"))  # fmt: skip


def test_eigh_grads():
    a = np.diag([1.0, 2.0, 4.0]) + 0.1 * hermitian((3, 3), np.float64)

    def f(x):
        v, w = linalg.eigh(x)
        # eigenvectors are defined up to sign: compare v·diag(w)·vᵀ and |v|
        return w, v * v

    check_grads(f, (a,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4)])
def test_svd_grads(shape):
    a = rand(shape, np.float64)

    def f(x):
        u, s, vh = linalg.svd(x, full_matrices=False)
        # singular vectors are defined up to sign: compare u·diag(s)·vh and u², vh²
        k = min(shape)
        scaled = lax.mul(u, lax.broadcast_in_dim(s, (shape[0], k), (1,)))
        return s, lax.dot(scaled, vh), lax.mul(u, u), lax.mul(vh, vh)

    check_grads(f, (a,), order=1, modes=("fwd", "rev"))
    check_grads(lambda x: linalg.svd(x, compute_uv=False), (a,), order=1, modes=("fwd", "rev"))


# --- vmap and jit ---------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_matches_loop(axis):
    batch = np.stack([spd((3, 3), np.float32) for _ in range(2)], axis=axis)
    examples = [np.take(batch, i, axis=axis) for i in range(2)]

    def all_of(x):
        q, r = linalg.qr(x)
        lu, piv, perm = linalg.lu(x)
        v, w = linalg.eigh(x)
        u, s, vh = linalg.svd(x)
        t = linalg.triangular_solve(linalg.cholesky(x), x, left_side=True, lower=True)
        return linalg.cholesky(x), q, r, lu, piv, perm, v, w, u, s, vh, t

    got = vmap(all_of, in_axes=axis)(batch)
    for i, x in enumerate(examples):
        for g, w in zip(got, all_of(x), strict=True):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(w), rtol=1e-4, atol=1e-5)


def test_vmap_triangular_solve_unbatched_matrix():
    a = np.tril(rand((3, 3), np.float32)) + 3 * np.eye(3, dtype=np.float32)
    bs = rand((4, 3, 2), np.float32)
    got = vmap(lambda b: linalg.triangular_solve(a, b, left_side=True, lower=True))(bs)
    close(a @ np.asarray(got), bs, np.float32)


def test_jit_composes():
    a = spd((3, 3), np.float32)
    f = jit(lambda x: linalg.triangular_solve(linalg.cholesky(x), x, left_side=True, lower=True))
    c = np.linalg.cholesky(a)
    close(np.asarray(f(a)), np.linalg.solve(c, a), np.float32)


# --- the other factorizations and solves ------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig(dtype):
    a = rand((2, 4, 4), dtype)
    w, vl, vr = map(np.asarray, linalg.eig(a))
    assert w.dtype == (np.complex128 if dtype == np.float64 else np.complex64)
    close(a @ vr, vr * w[..., None, :], dtype)
    close(H(vl) @ a, w[..., :, None] * H(vl), dtype)
    got = np.sort_complex(w[0])
    close(got, np.sort_complex(np.linalg.eigvals(a[0])), dtype)
    only_w, only_vr = linalg.eig(a, compute_left_eigenvectors=False)
    close(np.asarray(only_w), w, dtype)
    close(np.asarray(only_vr), vr, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_schur(dtype):
    a = rand((2, 4, 4), dtype)
    t, z = map(np.asarray, linalg.schur(a))
    close(z @ t @ H(z), a, dtype)
    close(H(z) @ z, np.broadcast_to(np.eye(4), (2, 4, 4)), dtype)
    below = np.tril(t, -2) if np.dtype(dtype).kind == "f" else np.tril(t, -1)
    np.testing.assert_array_equal(below, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessenberg_and_tridiagonal(dtype):
    a = rand((2, 4, 4), dtype)
    h, taus = map(np.asarray, linalg.hessenberg(a))
    assert taus.shape == (2, 3)
    for i in range(2):
        want = scipy.linalg.hessenberg(a[i])
        close(np.abs(np.triu(h[i], -1)), np.abs(want), dtype)
    s = a + H(a)
    _, d, e, taus = map(np.asarray, linalg.tridiagonal(s))
    assert d.dtype == np.finfo(dtype).dtype and e.shape == (2, 3) and taus.shape == (2, 3)
    for i in range(2):
        t = np.diag(d[i]) + np.diag(e[i], 1) + np.diag(e[i], -1)
        close(np.linalg.eigvalsh(t), np.linalg.eigvalsh(s[i]), dtype)


def _tridiagonal_case(dtype, batch=(2,), n=5, cols=3):
    dl, d, du = (rand((*batch, n), dtype) for _ in range(3))
    d = d + 4
    b = rand((*batch, n, cols), dtype)
    return dl, d, du, b


def _dense(dl, d, du):
    return np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tridiagonal_solve(dtype):
    dl, d, du, b = _tridiagonal_case(dtype)
    x = np.asarray(linalg.tridiagonal_solve(dl, d, du, b))
    for i in range(2):
        close(_dense(dl[i], d[i], du[i]) @ x[i], b[i], dtype)


def test_tridiagonal_solve_errors():
    v = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="Input 3 to tridiagonal_solve must have rank at least 2"):
        linalg.tridiagonal_solve(v, v, v, v)
    with pytest.raises(TypeError, match="leading ndim-1 dimensions of b equal"):
        linalg.tridiagonal_solve(v, v, v, np.ones((4, 2), np.float32))


def test_tridiagonal_solve_perturb_singular():
    # a singular matrix gives a large finite solution: recorded from JAX 0.10.2
    dl, d, du = (np.array(v, np.float32) for v in ([0, 1, 0], [1, 1, 1], [1, 0, 0]))
    b = np.array([[1], [2], [3]], np.float32)
    x = linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)
    np.testing.assert_allclose(x, [[-8.388607e6], [8.388608e6], [3.0]])
    dl, d, du = (np.array(v, np.float32) for v in ([0, 1, 2], [4, 5, 6], [1, 3, 0]))
    x = linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)
    np.testing.assert_allclose(_dense(dl, d, du) @ x, b, rtol=1e-6)


def test_tridiagonal_solve_grads():
    args = _tridiagonal_case(np.float64, batch=(), n=4, cols=2)
    check_grads(linalg.tridiagonal_solve, args, order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr(left, transpose):
    a = rand((5, 3), np.float64)
    raw, taus = scipy.linalg.lapack.dgeqrf(a)[:2]
    q = np.linalg.qr(a, mode="complete")[0]
    q = q.T if transpose else q
    c = rand((5, 2) if left else (2, 5), np.float64)
    got = np.asarray(linalg.ormqr(raw, taus, c, left=left, transpose=transpose))
    close(got, q @ c if left else c @ q, np.float64)


def test_cholesky_update():
    m = rand((4, 4), np.float64)
    s = m @ m.T + 4 * np.eye(4)
    r = np.linalg.cholesky(s).T
    w = rand((4,), np.float64)
    got = np.asarray(linalg.cholesky_update(r, w))
    close(got, np.linalg.cholesky(s + np.outer(w, w)).T, np.float64)
    with pytest.raises(TypeError, match="cholesky_update does not accept dtype int32"):
        linalg.cholesky_update(np.eye(2, dtype=np.int32), np.ones(2, np.int32))


def test_symmetric_product():
    a, c = rand((2, 4, 3), np.float64), rand((2, 4, 4), np.float64)
    got = np.asarray(linalg.symmetric_product(a, c, alpha=2.0, beta=0.5))
    close(got, 2 * a @ np.swapaxes(a, -1, -2) + 0.5 * c, np.float64)
    sym = np.asarray(linalg.symmetric_product(a, c, beta=0.5, symmetrize_output=True))
    np.testing.assert_array_equal(sym, np.swapaxes(sym, -1, -2))
    check_grads(lambda a, c: linalg.symmetric_product(a, c, alpha=2.0, beta=0.5),
                (a[0], c[0]), order=1, modes=("fwd", "rev"))  # fmt: skip


def test_vmap_of_the_rest():
    batch = rand((3, 4, 4), np.float32)
    got = vmap(lambda x: linalg.hessenberg(x)[0], in_axes=2)(np.moveaxis(batch, 0, 2))
    for i in range(3):
        close(np.asarray(got)[i], np.asarray(linalg.hessenberg(batch[i])[0]), np.float32)
    dl, d, du, b = _tridiagonal_case(np.float32, batch=(3,))
    got = vmap(linalg.tridiagonal_solve, in_axes=(0, 0, 0, 2))(dl, d, du, np.moveaxis(b, 0, 2))
    close(np.asarray(got), np.asarray(linalg.tridiagonal_solve(dl, d, du, b)), np.float32)


# --- the public surface -------------------------------------------------------------------


def _top_level_params(entry):
    """The parameter texts of a recorded signature (commas inside brackets kept)."""
    text = entry["signature"].split(" -> ")[0].strip()[1:-1]
    params, depth, current = [], 0, ""
    for ch in text:
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and depth == 0:
            params.append(current)
            current = ""
        else:
            current += ch
    return [*params, current] if current.strip() else params


def test_names_and_signatures_match_jax():

    recorded = json.loads(
        (pathlib.Path(__file__).parent / "data" / "jax_lax_linalg_api.json").read_text()
    )

    assert lax_module.linalg is linalg
    missing = sorted(set(recorded) - set(dir(linalg)))
    assert missing == []
    for name, entry in recorded.items():
        if entry["kind"] not in ("function", "PjitFunction"):
            continue
        want = [p.split(":")[0].split("=")[0].strip() for p in _top_level_params(entry)]
        got = []
        for p in inspect.signature(getattr(linalg, name)).parameters.values():
            if p.kind is p.KEYWORD_ONLY and "*" not in got:
                got.append("*")
            got.append(p.name)
        assert got == want, name


def test_eig_eigenvalue_derivative():

    a, t = rand((4, 4), np.float64), rand((4, 4), np.float64)
    eps = 1e-6

    def eigenvalues(x):
        return linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)

    (w,), (dw,) = jvp(eigenvalues, (a,), (t,))
    w = np.asarray(w)

    def matched(ws):  # the perturbed eigenvalues in the order of the unperturbed ones
        return np.array([ws[np.argmin(np.abs(ws - x))] for x in w])

    numeric = matched(np.linalg.eigvals(a + eps * t)) - matched(np.linalg.eigvals(a - eps * t))
    np.testing.assert_allclose(np.asarray(dw), numeric / (2 * eps), atol=1e-6)
    with pytest.raises(NotImplementedError, match="derivatives of eigenvectors"):
        jvp(linalg.eig, (a,), (t,))


@pytest.mark.parametrize("dtype,shape", [(np.float32, (2, 5, 3)), (np.complex64, (3, 4))])
def test_qr_with_column_pivoting(dtype, shape):
    a = rand(shape, dtype)
    q, r, p = map(np.asarray, linalg.qr(a, pivoting=True, full_matrices=False))
    assert p.dtype == np.int32 and p.shape == (*shape[:-2], shape[-1])
    close(q @ r, np.take_along_axis(a, p[..., None, :], axis=-1), dtype)
    diag = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    assert (np.diff(diag, axis=-1) <= 1e-5).all()  # geqp3 orders |r_ii| decreasingly
    for idx in np.ndindex(shape[:-2]):
        _, _, want = scipy.linalg.qr(
            a[idx].astype(np.complex128 if dtype == np.complex64 else np.float64),
            pivoting=True,
            mode="economic",
        )
        np.testing.assert_array_equal(p[idx], want)
