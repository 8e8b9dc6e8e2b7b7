"""lax.custom_linear_solve and lax.custom_root: solutions against NumPy, gradients
against the hand-derived implicit derivatives (through b, through values matvec / f
close over), the solver's iterations never differentiated (a while_loop solver), and
JAX's error without a transpose_solve; the custom_linear_solve primitive's JVP, vmap
and jit against np.linalg.solve and the hand-derived d(M^{-1} b)."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import grad, jit, jvp, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

A = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
A_INV = np.linalg.inv(A).astype(np.float32)
B = np.array([1.0, 2.0], np.float32)


def jacobi_solve(matvec, b):
    """Jacobi iterations in a while_loop: not reverse-differentiable by itself."""
    diag = np.diag(A).astype(np.float32)

    def body(state):
        k, x = state
        return k + 1, x + (b - matvec(x)) / diag

    return lax.while_loop(lambda s: s[0] < 60, body, (0, b * 0.0))[1]


def sum_of(x):
    return lax.reduce_sum(x, (0,))


def test_linear_solve_value_and_grad_through_b():
    mv = lambda x: lax.dot(A, x)  # noqa: E731
    x = lax.custom_linear_solve(mv, B, jacobi_solve, symmetric=True)
    np.testing.assert_allclose(x, np.linalg.solve(A, B), rtol=1e-5)
    loss = lambda b: sum_of(lax.custom_linear_solve(mv, b, jacobi_solve, symmetric=True))  # noqa: E731
    want = np.linalg.solve(A.T, np.ones(2))
    np.testing.assert_allclose(grad(loss)(B), want, rtol=1e-4)
    np.testing.assert_allclose(jit(grad(loss))(B), want, rtol=1e-4)


def test_linear_solve_grad_through_closed_over_matrix_scale():
    def loss(s):
        mv = lambda x: lax.dot(A, x) * s  # noqa: E731
        solve = lambda matvec, b: lax.dot(A_INV, b) / s  # noqa: E731
        return sum_of(lax.custom_linear_solve(mv, B, solve, transpose_solve=solve))

    # x = A^{-1} b / s, so d(sum x)/ds = -sum(A^{-1} b) / s**2.
    s = np.float32(2.0)
    np.testing.assert_allclose(grad(loss)(s), -np.linalg.solve(A, B).sum() / s**2, rtol=1e-5)


def test_linear_solve_needs_transpose_solve_for_grad():
    mv = lambda x: lax.dot(A, x)  # noqa: E731
    loss = lambda b: sum_of(lax.custom_linear_solve(mv, b, jacobi_solve))  # noqa: E731
    with pytest.raises(TypeError, match="transpose_solve required for backpropagation"):
        grad(loss)(B)


def newton_sqrt(a):
    f = lambda x: x * x - a  # noqa: E731

    def solve(f, x0):
        return lax.while_loop(
            lambda s: s[0] < 30, lambda s: (s[0] + 1, s[1] - f(s[1]) / (2 * s[1])), (0, x0)
        )[1]

    return lax.custom_root(f, 1.0, solve, lambda g, y: y / g(1.0))


@pytest.mark.parametrize("a", [2.0, 9.0])
def test_custom_root_value_and_implicit_gradient(a):
    np.testing.assert_allclose(newton_sqrt(a), np.sqrt(a), rtol=1e-6)
    np.testing.assert_allclose(grad(newton_sqrt)(a), 0.5 / np.sqrt(a), rtol=1e-5)
    np.testing.assert_allclose(jit(grad(newton_sqrt))(a), 0.5 / np.sqrt(a), rtol=1e-5)


def test_custom_root_has_aux():
    def solve(f, x0):
        return x0 - f(x0) / 2.0, np.int32(1)

    root, aux = lax.custom_root(lambda x: 2.0 * x - 3.0, 0.0, solve, lambda g, y: y / g(1.0),
                                has_aux=True)  # fmt: skip
    assert float(root) == pytest.approx(1.5)
    assert int(aux) == 1


# ---------------------------------------------------------------- the primitive: jvp, vmap, jit

M = np.array([[4.0, 1.0, 0.0], [0.5, 3.0, 0.2], [0.1, 0.3, 5.0]], np.float32)
C = np.array([1.0, -2.0, 0.5], np.float32)


def richardson_solve(matvec, b):
    """x += (b - matvec(x)) / 5 in a while_loop (converges for M's spectrum in (0, 10));
    a while_loop has no reverse-mode rule, so only the primitive's rules can be used."""

    def body(state):
        k, x = state
        return k + 1, x + (b - matvec(x)) * 0.2

    return lax.while_loop(lambda s: s[0] < 80, body, (0, b * 0.0))[1]


def solve_with(m, b):
    mv = lambda x: lax.dot(m, x)  # noqa: E731
    return lax.custom_linear_solve(mv, b, richardson_solve, transpose_solve=richardson_solve)


def test_linear_solve_is_a_primitive_printed_as_jax_prints_it():
    jaxpr = make_jaxpr(lambda b: lax.custom_linear_solve(lambda x: 2 * x, b, lambda mv, b: b / 2))(
        np.ones(2, np.float32)
    )
    assert str(jaxpr) == (
        "{ lambda ; a:f32[2]. let\n"
        "    b:f32[2] = custom_linear_solve[\n"
        "      const_lengths=_LinearSolveTuple(matvec=0, vecmat=0, solve=0, transpose_solve=0)\n"
        "      jaxprs=_LinearSolveTuple(matvec={ lambda ; a:f32[2]. let b:f32[2] = mul 2.0:f32[] a"
        " in (b,) }, vecmat=None, solve={ lambda ; a:f32[2]. let b:f32[2] = div a 2.0:f32[] in"
        " (b,) }, transpose_solve=None)\n"
        "    ] a\n"
        "  in (b,) }"
    )
    assert lax.linear_solve_p.name == "custom_linear_solve"


def test_linear_solve_values_eager_and_jit():
    want = np.linalg.solve(M.astype(np.float64), C)
    np.testing.assert_allclose(solve_with(M, C), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jit(solve_with)(M, C), want, rtol=1e-5, atol=1e-6)


def test_linear_solve_jvp_through_b_and_matrix():
    m_dot = np.array([[0.1, -0.2, 0.3], [0.0, 0.5, -0.1], [0.2, 0.1, 0.0]], np.float32)
    b_dot = np.array([0.3, 0.1, -0.4], np.float32)
    x, x_dot = jvp(solve_with, (M, C), (m_dot, b_dot))
    m64 = M.astype(np.float64)
    x_want = np.linalg.solve(m64, C)
    # d(M^{-1} b) = M^{-1} (db - dM x)
    np.testing.assert_allclose(x, x_want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        x_dot, np.linalg.solve(m64, b_dot - m_dot @ x_want), rtol=1e-4, atol=1e-6
    )
    _, x_dot_jit = jit(lambda m, b: jvp(solve_with, (m, b), (m_dot, b_dot)))(M, C)
    np.testing.assert_allclose(x_dot_jit, x_dot, rtol=1e-5, atol=1e-6)
    # only b's tangent
    _, only_b = jvp(lambda b: solve_with(M, b), (C,), (b_dot,))
    np.testing.assert_allclose(only_b, np.linalg.solve(m64, b_dot), rtol=1e-4, atol=1e-6)


def test_linear_solve_grads_checked_numerically():
    check_grads(solve_with, (M, C), 2, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)
    check_grads(lambda b: solve_with(M, b), (C,), 2, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)


def test_linear_solve_grad_through_matrix_matches_formula():
    # d(w.x)/dM = -(M^{-T} w) x^T, d(w.x)/db = M^{-T} w
    w = np.array([1.0, 2.0, -1.0], np.float32)
    loss = lambda m, b: lax.reduce_sum(solve_with(m, b) * w, (0,))  # noqa: E731
    g_m, g_b = grad(loss, argnums=(0, 1))(M, C)
    m64 = M.astype(np.float64)
    lam = np.linalg.solve(m64.T, w)
    x = np.linalg.solve(m64, C)
    np.testing.assert_allclose(g_b, lam, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(g_m, -np.outer(lam, x), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("axis", [0, 1])
def test_linear_solve_vmap_over_b(axis):
    bs = np.stack([C, 2 * C + 1, -C], axis=axis)
    out = vmap(lambda b: solve_with(M, b), in_axes=axis)(bs)
    want = [np.linalg.solve(M.astype(np.float64), np.take(bs, i, axis)) for i in range(3)]
    np.testing.assert_allclose(out, np.stack(want), rtol=1e-5, atol=1e-6)


def test_linear_solve_vmap_over_matrix_and_b_and_of_grad():
    ms = np.stack([M, M.T, M + np.eye(3, dtype=np.float32)])
    bs = np.stack([C, C[::-1].copy(), C * 2])
    out = vmap(solve_with, in_axes=(0, 1))(ms, bs.T.copy())
    want = np.stack([np.linalg.solve(m.astype(np.float64), b) for m, b in zip(ms, bs, strict=True)])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    out = vmap(solve_with, in_axes=(0, None))(ms, C)
    want = np.stack([np.linalg.solve(m.astype(np.float64), C) for m in ms])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    loss = lambda m, b: lax.reduce_sum(solve_with(m, b), (0,))  # noqa: E731
    g_ms, g_bs = vmap(grad(loss, argnums=(0, 1)), (0, 0))(ms, bs)
    for g_m, g_b, m, b in zip(np.asarray(g_ms), np.asarray(g_bs), ms, bs, strict=True):
        lam = np.linalg.solve(m.astype(np.float64).T, np.ones(3))
        x = np.linalg.solve(m.astype(np.float64), b)
        np.testing.assert_allclose(g_b, lam, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(g_m, -np.outer(lam, x), rtol=1e-4, atol=1e-5)


def test_linear_solve_pytree_b_and_has_aux():
    def mv(xs):
        return lax.dot(M, xs[0]), xs[1] * 2.0

    def solve(matvec, bs):
        return (richardson_solve(lambda v: lax.dot(M, v), bs[0]), bs[1] / 2.0), np.int32(7)

    bs = (C, np.array([4.0, 6.0], np.float32))
    (x0, x1), aux = lax.custom_linear_solve(mv, bs, solve, symmetric=True, has_aux=True)
    np.testing.assert_allclose(x0, np.linalg.solve(M.astype(np.float64), C), rtol=1e-5)
    np.testing.assert_allclose(x1, [2.0, 3.0])
    assert int(aux) == 7
    f = lambda b1: lax.custom_linear_solve(mv, (C, b1), solve, symmetric=True, has_aux=True)[0][1]  # noqa: E731
    _, t = jvp(f, (bs[1],), (np.ones(2, np.float32),))
    np.testing.assert_allclose(t, [0.5, 0.5])


def test_linear_solve_shape_mismatch_errors():
    with pytest.raises(ValueError, match=r"matvec\(\) output shapes must match b"):
        lax.custom_linear_solve(lambda x: (x, x), C, lambda mv, b: b)
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b"):
        lax.custom_linear_solve(lambda x: x, C, lambda mv, b: (b, b))


def test_custom_root_forward_mode_and_second_derivatives():

    def sqrt_by_root(x):
        return lax.custom_root(
            lambda y: y * y - x,
            1.0,
            lambda g, y0: lax.sqrt(x),
            lambda g, y: y / g(1.0),  # g is f linearized at the root: 2·root
        )

    value, tangent = jvp(sqrt_by_root, (4.0,), (1.0,))
    assert float(value) == 2.0 and float(tangent) == 0.25
    assert float(grad(grad(sqrt_by_root))(4.0)) == -0.03125  # -x^(-3/2) / 4
    np.testing.assert_allclose(vmap(grad(sqrt_by_root))(np.array([4.0, 9.0])), [0.25, 1 / 6])
