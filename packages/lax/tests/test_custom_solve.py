"""lax.custom_linear_solve and lax.custom_root: solutions against NumPy, gradients
against the hand-derived implicit derivatives (through b, through values matvec / f
close over), the solver's iterations never differentiated (a while_loop solver), and
JAX's error without a transpose_solve."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import jit
from lamina.interpreters.reverse import grad

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
