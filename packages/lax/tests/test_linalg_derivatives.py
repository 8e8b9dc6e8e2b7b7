"""Forward-mode derivatives of the factorizations in their less common forms, against
central differences in float64: eigenvectors of eig (``enable_eigvec_derivs``), QR
of wide matrices, with column pivoting and with full Q, and LU of rectangular
matrices."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import enable_x64, jvp

RNG = np.random.default_rng(0)
EPS = 1e-7


def central_difference(f, a, da):
    plus, minus = f(a + EPS * da), f(a - EPS * da)
    return [(np.asarray(p) - np.asarray(m)) / (2 * EPS) for p, m in zip(plus, minus, strict=True)]


@pytest.mark.parametrize(
    "shape, full_matrices, pivoting",
    [
        ((5, 3), False, False),
        ((3, 5), False, False),
        ((5, 3), True, False),
        ((4, 4), True, True),
        ((5, 3), False, True),
        ((3, 5), False, True),
        ((2, 5, 3), True, True),
    ],
)
def test_qr_jvp(shape, full_matrices, pivoting):
    with enable_x64(True):
        a, da = RNG.standard_normal(shape), RNG.standard_normal(shape)

        def f(x):
            return lax.linalg.qr(x, full_matrices=full_matrices, pivoting=pivoting)

        outs, tangents = jvp(f, (a,), (da,))
        q, r, q_dot, r_dot = (np.asarray(v) for v in (*outs[:2], *tangents[:2]))
        numeric_q, numeric_r = central_difference(f, a, da)[:2]
        np.testing.assert_allclose(q_dot, numeric_q, atol=1e-6)
        np.testing.assert_allclose(r_dot, numeric_r, atol=1e-6)
        columns = np.asarray(outs[2]) if pivoting else np.arange(shape[-1])
        permuted = np.take_along_axis(da, np.broadcast_to(columns[..., None, :], da.shape), -1)
        np.testing.assert_allclose(q_dot @ r + q @ r_dot, permuted, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 5, 3)])
def test_lu_jvp_of_rectangular_matrices(shape):
    with enable_x64(True):
        a, da = RNG.standard_normal(shape), RNG.standard_normal(shape)
        factors_dot = jvp(lambda x: lax.linalg.lu(x)[0], (a,), (da,))[1]
        numeric = central_difference(lambda x: [lax.linalg.lu(x)[0]], a, da)[0]
        np.testing.assert_allclose(np.asarray(factors_dot), numeric, atol=1e-6)


def test_eig_eigenvector_jvp():
    rng = np.random.default_rng(7)
    with enable_x64(True):
        basis = rng.standard_normal((4, 4))
        a = basis @ np.diag([1.0, 2.0, 3.0, 5.0]) @ np.linalg.inv(basis)  # real spectrum
        da = rng.standard_normal((4, 4))

        def f(x):
            return lax.linalg.eig(x, compute_left_eigenvectors=False, enable_eigvec_derivs=True)

        (w, v), (w_dot, v_dot) = jvp(f, (a,), (da,))
        w, v, w_dot, v_dot = map(np.asarray, (w, v, w_dot, v_dot))
        # the differentiated eigen-equation, whatever the eigenvectors' normalisation
        np.testing.assert_allclose(a @ v_dot + da @ v, v_dot * w + v * w_dot, atol=1e-12)
        np.testing.assert_allclose(np.real(np.sum(np.conj(v) * v_dot, 0)), 0, atol=1e-12)

        def matched(x):  # eigenpairs in v's order, each vector with v's sign
            w2, v2 = (np.asarray(y) for y in f(x))
            order = [int(np.argmin(np.abs(w2 - value))) for value in w]
            w2, v2 = w2[order], v2[:, order]
            return w2, v2 * np.sign(np.real(np.sum(np.conj(v) * v2, 0)))

        (w_plus, v_plus), (w_minus, v_minus) = matched(a + EPS * da), matched(a - EPS * da)
        np.testing.assert_allclose((w_plus - w_minus) / (2 * EPS), w_dot, atol=1e-6)
        np.testing.assert_allclose((v_plus - v_minus) / (2 * EPS), v_dot, atol=1e-6)
        with pytest.raises(NotImplementedError, match="derivatives of eigenvectors"):
            jvp(lambda x: lax.linalg.eig(x, compute_left_eigenvectors=False), (a,), (da,))
