"""Jacobians, Hessians, linear_transpose, holomorphic derivatives and stop_gradient over
the lax primitives: against hand-derived values and central differences, composed with
jit and vmap, and the printed Jaxprs."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import (
    grad,
    hessian,
    jacfwd,
    jacrev,
    jit,
    jvp,
    linear_transpose,
    make_jaxpr,
    value_and_grad,
    vjp,
    vmap,
)
from lamina.interpreters.test_util import numerical_jvp
from lamina.ir import tree_util

rng = np.random.default_rng(5)
A = rng.standard_normal((4, 3)).astype(np.float32)
X = rng.uniform(-1, 1, 3).astype(np.float32)


def close(a, b, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def net(x):
    """R^3 -> R^4: tanh(A @ exp(x))."""
    return lax.tanh(lax.dot(A, lax.exp(x)))


def net_jacobian(x):
    u = np.tanh(A @ np.exp(x))
    return (1 - u * u)[:, None] * A * np.exp(x)[None, :]


def energy(x):
    """R^3 -> R: sum(tanh(A @ x))."""
    return lax.reduce_sum(lax.tanh(lax.dot(A, x)), (0,))


def energy_hessian(x):
    u = np.tanh(A @ x)
    return A.T @ np.diag(-2 * u * (1 - u * u)) @ A


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_against_hand_derivation_and_central_differences(jac):
    J = np.asarray(jac(net)(X))
    close(J, net_jacobian(X))
    for k in range(3):
        e = np.zeros(3, np.float32)
        e[k] = 1
        column = numerical_jvp(lambda x: np.asarray(net(x), np.float64), (X,), (e,), 1e-3)
        close(J[:, k], column, rtol=2e-2, atol=2e-3)


def test_jacfwd_and_jacrev_agree_on_pytrees_with_argnums():
    W = rng.standard_normal((2, 3)).astype(np.float32)

    def f(w, p, scale):
        h = lax.dot(w, lax.sin(p["x"]))
        return {"h": lax.mul(h, scale), "e": lax.exp(p["y"])}

    p = {"x": X, "y": np.float32(0.5)}
    fwd = jacfwd(f, argnums=(0, 1))(W, p, np.float32(2))
    rev = jacrev(f, argnums=(0, 1))(W, p, np.float32(2))
    assert tree_util.tree_structure(fwd) == tree_util.tree_structure(rev)
    for a, b in zip(tree_util.tree_leaves(fwd), tree_util.tree_leaves(rev), strict=True):
        close(a, b)
    d_h_dw, d_h_dp = fwd["h"]
    assert np.shape(d_h_dw) == (2, 2, 3) and np.shape(d_h_dp["x"]) == (2, 3)
    want_w = np.zeros((2, 2, 3), np.float32)
    for i in range(2):
        want_w[i, i] = 2 * np.sin(X)
    close(d_h_dw, want_w)
    close(d_h_dp["x"], 2 * W * np.cos(X)[None, :])
    close(d_h_dp["y"], np.zeros(2))
    close(fwd["e"][1]["y"], np.exp(0.5))


def test_hessian_against_hand_and_jacfwd_of_jacrev():
    H = hessian(energy)(X)
    close(H, energy_hessian(X), rtol=1e-4)
    close(jacfwd(jacrev(energy))(X), H, rtol=1e-5)
    close(jacrev(jacrev(energy))(X), H, rtol=1e-4)
    M = rng.standard_normal((3, 3)).astype(np.float32)

    def quad(x):  # x.M.x: Hessian M + M^T
        return lax.reduce_sum(lax.mul(x, lax.dot(M, x)), (0,))

    close(hessian(quad)(X), M + M.T, rtol=1e-5)


def test_jit_and_vmap_compositions():
    close(jit(jacrev(net))(X), net_jacobian(X))
    close(jit(jacfwd(net))(X), net_jacobian(X))
    close(jacrev(jit(net))(X), net_jacobian(X))
    close(jit(hessian(energy))(X), energy_hessian(X), rtol=1e-4)
    xs = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    want = np.stack([net_jacobian(x) for x in xs])
    close(vmap(jacfwd(net))(xs), want)
    close(vmap(jacrev(net))(xs), want)
    close(jit(vmap(jacfwd(net)))(xs), want)


def test_printed_jaxpr_of_jacrev_runs_the_primal_once():
    text = str(make_jaxpr(jacrev(net))(X))
    assert text.count("tanh") == 1 and text.count("exp") == 1, text


# ---------------------------------------------------------------- linear_transpose

LINEAR_MAPS = [
    ("dot", lambda v: lax.dot(A, v), (3,)),
    ("reshape", lambda m: lax.reshape(m, (3, 2)), (2, 3)),
    ("transpose", lambda m: lax.transpose(m, (2, 0, 1)), (2, 3, 4)),
    ("broadcast", lambda v: lax.broadcast_in_dim(v, (2, 3, 4), (1,)), (3,)),
    ("reduce_sum", lambda m: lax.reduce_sum(m, (0, 2)), (2, 3, 4)),
    ("mixed", lambda m: lax.sub(lax.dot(lax.transpose(m, (1, 0)), A),
                                lax.broadcast_in_dim(lax.reduce_sum(m, (0,)), (3, 3), (0,))),
     (4, 3)),
]  # fmt: skip


def _matrix(fun, shape):
    """The matrix of the linear ``fun`` on arrays of ``shape``, one column per input."""
    size = int(np.prod(shape))
    cols = [np.asarray(fun(e.reshape(shape))).ravel() for e in np.eye(size, dtype=np.float32)]
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("name,fun,shape", LINEAR_MAPS, ids=[c[0] for c in LINEAR_MAPS])
def test_linear_transpose_is_the_matrix_transpose(name, fun, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    out_shape = np.shape(fun(x))
    ct = rng.standard_normal(out_shape).astype(np.float32)
    (got,) = linear_transpose(fun, x)(ct)
    assert np.shape(got) == shape
    close(np.asarray(got).ravel(), _matrix(fun, shape).T @ ct.ravel(), rtol=1e-4)
    (jitted,) = jit(linear_transpose(fun, x))(ct)  # a pytree: passes through jit
    close(jitted, got, rtol=1e-5)


def test_linear_transpose_of_a_nonlinear_function_fails():
    with pytest.raises(NotImplementedError, match="mul is not linear"):
        linear_transpose(lambda x: lax.mul(x, x), X)(X)
    with pytest.raises(NotImplementedError, match=r"Transpose rule .* for 'exp'"):
        linear_transpose(lax.exp, X)(X)


# ---------------------------------------------------------------- complex numbers

Z = np.array([0.3 - 1.1j, -0.7 + 0.4j, 1.2 + 0.1j], np.complex64)
HOLOMORPHIC = [
    ("z*z", lambda z: lax.mul(z, z), lambda z: 2 * z),
    ("sin", lax.sin, np.cos),
    ("exp", lax.exp, np.exp),
    ("tanh", lax.tanh, lambda z: 1 - np.tanh(z) ** 2),
    ("z*sin(z)-z", lambda z: lax.sub(lax.mul(z, lax.sin(z)), z),
     lambda z: np.sin(z) + z * np.cos(z) - 1),
]  # fmt: skip


@pytest.mark.parametrize("name,f,df", HOLOMORPHIC, ids=[c[0] for c in HOLOMORPHIC])
def test_holomorphic_derivatives(name, f, df):
    for z in Z:
        g = grad(f, holomorphic=True)(z)
        assert np.asarray(g).dtype == np.complex64
        close(g, df(z), rtol=1e-4)
    for jac in (jacfwd, jacrev):
        close(jac(f, holomorphic=True)(Z), np.diag(df(Z)), rtol=1e-4)


def test_complex_dot_is_not_conjugated():
    B = (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(np.complex64)
    ct = np.array([1 - 2j, 0.5j], np.complex64)
    _, pullback = vjp(lambda z: lax.dot(B, z), Z)
    close(pullback(ct)[0], B.T @ ct, rtol=1e-5)  # JAX's convention: no conjugation
    close(jacrev(lambda z: lax.dot(B, z), holomorphic=True)(Z), B, rtol=1e-5)
    loss = lambda z: lax.reduce_sum(lax.mul(lax.dot(B, z), lax.dot(B, z)), (0,))  # noqa: E731
    v, g = value_and_grad(loss, holomorphic=True)(Z)
    close(v, np.sum((B @ Z) ** 2), rtol=1e-5)
    close(g, 2 * B.T @ (B @ Z), rtol=1e-4)
    with pytest.raises(TypeError, match=r"grad requires real-valued outputs .* got complex64"):
        grad(loss)(Z)


# ---------------------------------------------------------------- stop_gradient


def test_stop_gradient_under_transformations():
    x = np.float32(1.5)
    f = lambda x: lax.mul(lax.stop_gradient(lax.sin(x)), x)  # noqa: E731
    close(grad(f)(x), np.sin(1.5))
    close(jit(grad(f))(x), np.sin(1.5))
    close(grad(jit(f))(x), np.sin(1.5))
    _, t = jvp(f, (x,), (np.float32(2),))
    close(t, 2 * np.sin(1.5))
    xs = rng.standard_normal(4).astype(np.float32)
    close(vmap(grad(f))(xs), np.sin(xs))
    close(jacfwd(lambda v: lax.mul(lax.stop_gradient(v), v))(xs), np.diag(xs))
    close(hessian(lambda v: lax.reduce_sum(lax.mul(lax.stop_gradient(v), lax.mul(v, v)), (0,)))(xs),
          np.diag(2 * xs))  # fmt: skip


def test_stop_gradient_jaxprs():
    x = np.float32(1.5)
    assert str(make_jaxpr(lambda x: lax.mul(lax.stop_gradient(x), x))(x)) == (
        "{ lambda ; a:f32[]. let b:f32[] = stop_gradient a; c:f32[] = mul b a in (c,) }"
    )
    text = str(make_jaxpr(grad(lambda x: lax.mul(lax.stop_gradient(x), x)))(x))
    assert "stop_gradient a" in text, text
    assert str(make_jaxpr(lax.stop_gradient)(np.int32(1))) == "{ lambda ; a:i32[]. let  in (a,) }"
    out = lax.stop_gradient({"w": X, "n": np.int32(3)})
    close(out["w"], X)
    assert out["n"] == 3
    assert "stop_gradient" in lax.__all__
