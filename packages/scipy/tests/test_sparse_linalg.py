"""lamina.scipy.sparse.linalg: cg, gmres and bicgstab against numpy.linalg.solve, with
preconditioners, pytree vectors, jit and vmap, gradients, and JAX 0.10.2's errors."""

import numpy as np
import pytest

import lamina.numpy as jnp
import lamina.scipy.sparse as sparse
import lamina.scipy.sparse.linalg as sl
from lamina.interpreters import enable_x64, grad, jit, vmap
from lamina.interpreters.test_util import check_grads

N = 6
_rng = np.random.default_rng(0)
_M = _rng.standard_normal((N, N))
SPD = _M @ _M.T + N * np.eye(N)
GENERAL = _M + N * np.eye(N)
RHS = _rng.standard_normal(N)


def test_public_names_are_jax():
    assert dir(sl) == ["bicgstab", "cg", "gmres"]
    assert dir(sparse) == ["linalg"]


def test_solvers_match_numpy_float32_with_and_without_preconditioner():
    spd, general, b = (np.asarray(v, np.float32) for v in (SPD, GENERAL, RHS))
    jacobi_spd = np.diag(1 / np.diag(spd))

    @jit
    def solve_all(spd, general, b):
        return {
            "cg": sl.cg(spd, b)[0],
            "cg M": sl.cg(lambda x: spd @ x, b, M=jacobi_spd)[0],
            "bicgstab": sl.bicgstab(general, b)[0],
            "bicgstab M": sl.bicgstab(general, b, M=lambda x: x / jnp.diag(general))[0],
            "batched": sl.gmres(general, b, restart=3)[0],
            "incremental": sl.gmres(general, b, solve_method="incremental", restart=3)[0],
            "gmres M": sl.gmres(general, b, M=jnp.diag(1 / jnp.diag(general)))[0],
            "info": sl.gmres(general, b)[1],
        }

    found = solve_all(spd, general, b)
    for name, x in found.items():
        if name == "info":
            assert int(x) == 0 and x.dtype == np.int32
            continue
        want = np.linalg.solve(SPD if name.startswith("cg") else GENERAL, RHS)
        assert x.dtype == np.float32, name
        np.testing.assert_allclose(x, want, atol=2e-5, err_msg=name)


def test_maxiter_and_x0_recorded_from_jax():
    rng = np.random.default_rng(1)
    m = rng.standard_normal((5, 5)).astype(np.float32)
    spd = m @ m.T + np.eye(5, dtype=np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    # recorded from JAX 0.10.2
    np.testing.assert_allclose(
        sl.cg(spd, b, maxiter=2)[0],
        [-0.6609692, -0.11197249, -0.19591048, 0.16405745, -0.19913568],
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        sl.bicgstab(m, b, maxiter=2)[0],
        [-4.6798124, -4.046088, -0.35745522, -3.088511, -0.76622635],
        rtol=1e-5,
    )
    gmres_once = [-1.5595295, -0.5508292, -0.21485268, -0.5484168, -0.3589254]
    for method in ("batched", "incremental"):
        x, _ = sl.gmres(m, b, restart=2, maxiter=1, solve_method=method)
        np.testing.assert_allclose(x, gmres_once, rtol=1e-5)
    exact = np.linalg.solve(spd, b)
    x, info = sl.cg(spd, b, x0=exact, maxiter=0)
    np.testing.assert_array_equal(x, exact)
    assert info is None


def test_pytree_vectors_and_linear_functions():
    b = {"a": np.float32([1.0, -2.0]), "b": (np.float32([3.0, 0.5, -1.0]),)}
    scales = {"a": np.float32([2.0, 3.0]), "b": (np.float32([4.0, 5.0, 6.0]),)}

    def A(x):  # diagonal, and coupling the two parts
        total = jnp.sum(x["a"]) + jnp.sum(x["b"][0])
        return {"a": scales["a"] * x["a"] + total, "b": (scales["b"][0] * x["b"][0] + total,)}

    dense = np.diag(np.concatenate([scales["a"], scales["b"][0]])) + np.ones((5, 5))
    want = np.linalg.solve(dense, np.concatenate([b["a"], b["b"][0]]))
    for solver in (sl.cg, sl.bicgstab, sl.gmres):
        x, _ = solver(A, b, x0={"a": np.ones(2, np.float32), "b": (np.zeros(3, np.float32),)})
        np.testing.assert_allclose(x["a"], want[:2], atol=1e-5, err_msg=solver.__name__)
        np.testing.assert_allclose(x["b"][0], want[2:], atol=1e-5, err_msg=solver.__name__)


def test_float64_complex_and_vmap():
    with enable_x64():
        x, _ = sl.cg(SPD, RHS, tol=1e-12)
        np.testing.assert_allclose(x, np.linalg.solve(SPD, RHS), rtol=1e-10)
        assert x.dtype == np.float64
        c = GENERAL + 1j * np.eye(N)
        for method in ("batched", "incremental"):
            x, _ = sl.gmres(c, RHS + 0j, tol=1e-12, solve_method=method)
            np.testing.assert_allclose(x, np.linalg.solve(c, RHS), rtol=1e-9)
            assert x.dtype == np.complex128
        x, _ = sl.bicgstab(c, RHS + 0j, tol=1e-12)
        np.testing.assert_allclose(x, np.linalg.solve(c, RHS), rtol=1e-9)
    bs = np.stack([RHS, 2 * RHS, -RHS]).astype(np.float32)
    xs = vmap(lambda b: sl.cg(SPD.astype(np.float32), b)[0])(bs)
    np.testing.assert_allclose(xs, np.linalg.solve(SPD, bs.T).T, atol=2e-5)


def test_gradients_solve_again():
    with enable_x64():
        spd = jnp.asarray(SPD)

        def through_cg(b, scale):
            return sl.cg(lambda x: spd @ x + scale * x, b, tol=1e-12)[0]

        check_grads(through_cg, (jnp.asarray(RHS), 0.5), order=1, modes=("fwd", "rev"))

        def through_gmres(b):
            return sl.gmres(jnp.asarray(GENERAL), b, tol=1e-12)[0]

        check_grads(through_gmres, (jnp.asarray(RHS),), order=1, modes=("rev",))
        # d/db sum(A^-1 b) = A^-T 1
        g = grad(lambda b: jnp.sum(sl.bicgstab(GENERAL, b, tol=1e-12)[0]))(RHS)
        np.testing.assert_allclose(g, np.linalg.solve(GENERAL.T, np.ones(N)), rtol=1e-8)


def test_bad_input_raises_jax_errors():
    b = np.ones(3, np.float32)
    # messages recorded from JAX 0.10.2
    with pytest.raises(ValueError, match=r"must be a square matrix, but has shape: \(2, 3\)"):
        sl.cg(np.ones((2, 3)), b)
    with pytest.raises(TypeError, match="linear operator must be either a function or ndarray: a"):
        sl.bicgstab("a", b)
    with pytest.raises(
        ValueError, match=r"arrays in x0 and b must have matching shapes: \[\(2,\)\] vs \[\(3,\)\]"
    ):
        sl.cg(np.eye(3), b, x0=b[:2])
    with pytest.raises(
        ValueError,
        match=r"x0 and b must have matching tree structure: "
        r"PyTreeDef\(\(\*,\)\) vs PyTreeDef\(\*\)",
    ):
        sl.gmres(np.eye(3), b, x0=(b,))
    with pytest.raises(
        ValueError, match="invalid solve_method x, must be either 'incremental' or 'batched'"
    ):
        sl.gmres(np.eye(3), b, solve_method="x")
