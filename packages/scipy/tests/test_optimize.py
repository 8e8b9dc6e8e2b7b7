"""lamina.scipy.optimize: `minimize` by BFGS and L-BFGS against SciPy and JAX 0.10.2,
under jit and vmap, in float32 and float64, and the line search behind them."""

import numpy as np
import pytest
import scipy.optimize as sp_optimize

import lamina.numpy as jnp
import lamina.scipy.optimize as opt
from lamina.interpreters import enable_x64, grad, jit, vmap

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
A = np.array([[3.0, 1, 0], [1, 4, 1], [0, 1, 2]])
B = np.array([1.0, -2, 0.5])


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quadratic(x, a, b):
    return 0.5 * x @ a @ x - b @ x


def test_public_names_are_jax():
    assert dir(opt) == ["OptimizeResults", "minimize"]
    assert opt.OptimizeResults._fields == (
        "x", "success", "status", "fun", "jac", "hess_inv", "nfev", "njev", "nit",
    )  # fmt: skip


def test_bfgs_rosenbrock_float64_matches_scipy_under_jit_and_vmap():
    starts = np.array([np.zeros(5), np.full(5, 0.5), [-1.2, 1.0, -0.5, 0.8, 1.3]])
    with enable_x64():
        found = jit(vmap(lambda x0: opt.minimize(rosen, x0, method="BFGS")))(starts)
        assert found.x.dtype == np.float64 and found.hess_inv.shape == (3, 5, 5)
        for row in range(2):
            want = sp_optimize.minimize(
                sp_optimize.rosen, starts[row], jac=sp_optimize.rosen_der, method="BFGS"
            )
            np.testing.assert_allclose(found.x[row], want.x, atol=1e-6)
            assert found.fun[row] < 1e-12 and abs(int(found.nit[row]) - want.nit) <= 5
    # iterations, evaluations and status recorded from JAX 0.10.2 (the third start ends
    # in a failed zoom: status 3).
    np.testing.assert_array_equal(found.nit, [36, 24, 3])
    np.testing.assert_array_equal(found.nfev, [50, 35, 5])
    np.testing.assert_array_equal(found.njev, found.nfev)
    np.testing.assert_array_equal(found.status, [0, 0, 3])
    np.testing.assert_array_equal(found.success, [True, True, False])
    np.testing.assert_allclose(
        found.x[2], [0.85137512, 0.15529605, 0.08030544, 0.12477251, 0.11912018], rtol=1e-7
    )
    np.testing.assert_allclose(found.jac[0], 0.0, atol=1e-5)


def test_lbfgs_rosenbrock_float64_and_its_limits():
    with enable_x64():
        found = opt.minimize(rosen, np.array([1.3, 0.7, 0.8, 1.9, 1.2]), method=LBFGS)
        want = sp_optimize.minimize(
            sp_optimize.rosen, [1.3, 0.7, 0.8, 1.9, 1.2], jac=sp_optimize.rosen_der
        )
        np.testing.assert_allclose(found.x, want.x, atol=1e-5)
        # recorded from JAX 0.10.2: it stops on too little progress (status 4).
        assert (int(found.nit), int(found.nfev), int(found.status)) == (27, 42, 4)
        assert found.hess_inv is None and not bool(found.success)
        limited = opt.minimize(
            rosen,
            np.array([-1.2, 1.0, -0.5, 0.8, 1.3]),
            method=LBFGS,
            options=dict(maxcor=3, maxfun=20),
        )
    # recorded from JAX 0.10.2: out of function evaluations (status 2).
    assert (int(limited.nit), int(limited.nfev), int(limited.status)) == (10, 21, 2)
    np.testing.assert_allclose(
        limited.x, [0.34535978, 0.1366401, 0.00970276, 0.01697937, 0.00135717], atol=1e-7
    )


# iterations and status recorded from JAX 0.10.2 (L-BFGS's first run ends in a failed
# line search at the solution, status 5).
@pytest.mark.parametrize(
    "method,nit,status", [("BFGS", [5, 7, 8], [0, 0, 0]), (LBFGS, [5, 5, 5], [5, 0, 0])]
)
def test_float32_quadratic_with_args_under_jit_and_vmap(method, nit, status):
    a, b = A.astype(np.float32), B.astype(np.float32)
    starts = np.array([[0, 0, 0], [5, -3, 2], [-1, 1, 10]], np.float32)
    options = {"gtol": 1e-4}
    solve = jit(
        vmap(lambda x0: opt.minimize(quadratic, x0, (a, b), method=method, options=options))
    )
    found = solve(starts)
    assert found.x.dtype == np.float32 and found.fun.dtype == np.float32
    assert found.nit.dtype == np.int32 and found.success.dtype == np.bool_
    np.testing.assert_allclose(found.x, np.tile(np.linalg.solve(A, B), (3, 1)), atol=1e-4)
    np.testing.assert_array_equal(found.nit, nit)
    np.testing.assert_array_equal(found.status, status)
    np.testing.assert_array_equal(found.success, np.array(status) == 0)


def test_bfgs_maxiter_recorded_from_jax():
    found = opt.minimize(
        lambda x: jnp.sum((x - 1.0) ** 2), jnp.zeros(3), method="bfgs", options={"maxiter": 1}
    )
    # recorded from JAX 0.10.2
    np.testing.assert_allclose(found.x, [0.5831238] * 3, rtol=1e-6)
    np.testing.assert_allclose(found.fun, 0.5213573, rtol=1e-6)
    np.testing.assert_allclose(found.hess_inv, np.full((3, 3), -0.16666664) + np.eye(3), rtol=1e-5)
    assert (int(found.status), int(found.nit), int(found.nfev)) == (1, 1, 2)
    assert not bool(found.success)


def test_gradient_free_options_norm_and_gtol():
    with enable_x64():
        found = opt.minimize(
            quadratic, np.zeros(3), (A, B), method="BFGS", options=dict(gtol=1e-8, norm=2)
        )
    np.testing.assert_allclose(found.x, np.linalg.solve(A, B), rtol=1e-9)
    assert np.linalg.norm(found.jac) < 1e-8
    assert (int(found.nit), int(found.nfev)) == (5, 8)  # recorded from JAX 0.10.2


def test_bad_input_raises_jax_errors():
    with pytest.raises(ValueError, match=r"^Method foo not recognized$"):
        opt.minimize(rosen, jnp.zeros(2), method="foo")
    with pytest.raises(
        TypeError,
        match=r"^args argument to jax.scipy.optimize.minimize must be a tuple, got \[1\]$",
    ):
        opt.minimize(quadratic, jnp.zeros(2), args=[1], method="BFGS")


def test_line_search_finds_a_strong_wolfe_step():
    a, b = A.astype(np.float32), B.astype(np.float32)

    def f(x):
        return quadratic(x, a, b) + jnp.sum(x**4)

    x = jnp.array([1.0, 1.0, -1.0])
    g = grad(f)(x)
    found = opt.line_search(f, x, -g)
    step = float(found.a_k)
    # recorded from JAX 0.10.2
    np.testing.assert_allclose(step, 0.1543654501438141, rtol=1e-6)
    assert (int(found.nfev), int(found.status), bool(found.failed)) == (5, 0, False)
    slope = float(g @ -g)
    assert float(found.f_k) <= float(f(x)) + 1e-4 * step * slope
    assert abs(float(found.g_k @ -g)) <= -0.9 * slope
    known = opt.line_search(f, x, -g, old_fval=f(x), gfk=g, old_old_fval=f(x) + 1.0)
    np.testing.assert_allclose(known.a_k, 0.011269177310168743, rtol=1e-6)
    assert int(known.nfev) == 1
