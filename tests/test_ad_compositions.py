"""Reverse mode composes with jit, vmap, forward mode and itself through the public API,
and custom rules and checkpoints hold under every transformation (issue 4)."""

import numpy as np
import pytest

import lamina as jax
from lamina import lax

rng = np.random.default_rng(3)


def f(x):
    return lax.reduce_sum(lax.mul(lax.sin(x), lax.tanh(x)), (0,))


def grad_f(x):
    return np.cos(x) * np.tanh(x) + np.sin(x) * (1 - np.tanh(x) ** 2)


def hessian_f(x):
    t = np.tanh(x)
    sech2 = 1 - t**2
    diag = -np.sin(x) * t + 2 * np.cos(x) * sech2 - 2 * np.sin(x) * t * sech2
    return np.diag(diag)


x = rng.uniform(-1.5, 1.5, 4).astype(np.float32)
xs = rng.uniform(-1.5, 1.5, (3, 4)).astype(np.float32)


@pytest.mark.parametrize(
    "composed",
    [
        jax.grad(f),
        jax.jit(jax.grad(f)),
        jax.grad(jax.jit(f)),
        jax.jit(jax.grad(jax.jit(f))),
        lambda x: jax.vjp(f, x)[1](np.float32(1))[0],
        lambda x: jax.value_and_grad(f)(x)[1],
    ],
    ids=["grad", "jit(grad)", "grad(jit)", "jit(grad(jit))", "vjp", "value_and_grad"],
)
def test_gradient_in_every_order(composed):
    np.testing.assert_allclose(np.asarray(composed(x)), grad_f(x), rtol=1e-5, atol=1e-6)


def test_per_example_gradients_and_gradient_of_a_vmap():
    want = np.stack([grad_f(row) for row in xs])
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(xs)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(jax.grad(f)))(xs)), want, rtol=1e-5)

    def summed(batch):
        return lax.reduce_sum(jax.vmap(f)(batch), (0,))

    np.testing.assert_allclose(np.asarray(jax.grad(summed)(xs)), want, rtol=1e-5)


def test_hessians_agree():
    want = hessian_f(x)
    for h in (jax.hessian(f), jax.jacfwd(jax.jacrev(f)), jax.jacrev(jax.jacfwd(f))):
        np.testing.assert_allclose(np.asarray(h(x)), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.hessian(f))(x)), want, rtol=1e-4, atol=1e-5)


def test_jvp_of_grad_is_a_hessian_vector_product():
    v = rng.standard_normal(4).astype(np.float32)
    _, hvp = jax.jvp(jax.grad(f), (x,), (v,))
    np.testing.assert_allclose(np.asarray(hvp), hessian_f(x) @ v, rtol=1e-4, atol=1e-5)
    jax.test_util.check_grads(f, (x,), order=2, modes=("fwd", "rev"))


@jax.custom_jvp
def scaled_sin(x):
    return lax.sin(x)


@scaled_sin.defjvp
def _scaled_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return scaled_sin(x), lax.mul(lax.mul(lax.cos(x), 2.0), t)  # twice the true derivative


@jax.custom_vjp
def clipped(x):
    return lax.mul(x, 3.0)


clipped.defvjp(lambda x: (clipped(x), None), lambda _, g: (lax.max(lax.min(g, 0.5), -0.5),))


def vmap_of_one(g):
    """``g`` run under vmap on a batch holding just its argument."""
    return lambda v: lax.reshape(jax.vmap(g)(lax.reshape(v, (1, *v.shape))), v.shape)


def total(fun):
    return lambda x: lax.reduce_sum(fun(x), (0,))


@pytest.mark.parametrize(
    "transform",
    [
        lambda g: g,
        jax.jit,
        lambda g: lambda x: jax.jit(g)(x),
        vmap_of_one,
    ],
    ids=["plain", "jit", "jit-inside", "vmap"],
)
def test_custom_rules_under_every_transformation(transform):
    got = transform(jax.grad(total(scaled_sin)))(x)
    np.testing.assert_allclose(np.asarray(got), 2 * np.cos(x), rtol=1e-5)
    got = transform(jax.grad(total(clipped)))(x)
    np.testing.assert_allclose(np.asarray(got), np.full(4, 0.5), rtol=1e-6)
    got = jax.grad(total(lambda v: transform(scaled_sin)(v)))(x)
    np.testing.assert_allclose(np.asarray(got), 2 * np.cos(x), rtol=1e-5)


def test_custom_jvp_under_forward_and_second_order():
    _, t = jax.jvp(scaled_sin, (x,), (np.ones(4, np.float32),))
    np.testing.assert_allclose(np.asarray(t), 2 * np.cos(x), rtol=1e-5)
    second = jax.grad(lambda v: lax.reduce_sum(jax.grad(total(scaled_sin))(v), (0,)))(x)
    np.testing.assert_allclose(np.asarray(second), -2 * np.sin(x), rtol=1e-5)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jvp(clipped, (x,), (np.ones(4, np.float32),))


def test_checkpoint_under_every_transformation():
    policy = jax.checkpoint_policies.nothing_saveable
    remat_f = jax.checkpoint(f, policy=policy)
    for composed in (
        jax.grad(remat_f),
        jax.jit(jax.grad(remat_f)),
        jax.grad(jax.jit(remat_f)),
        vmap_of_one(jax.grad(remat_f)),
    ):
        np.testing.assert_allclose(np.asarray(composed(x)), grad_f(x), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.hessian(remat_f)(x)), hessian_f(x), rtol=1e-4)
    backward = str(jax.make_jaxpr(jax.grad(remat_f))(x))
    assert backward.count("sin") >= 2, backward  # recomputed in the backward checkpoint


def test_grad_errors_through_the_public_api():
    with pytest.raises(TypeError, match="allow_int"):
        jax.grad(lambda n: lax.convert_element_type(n, np.float32))(np.int32(3))
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
        jax.grad(lax.sin)(x)
    with pytest.raises(TypeError, match="holomorphic=True"):
        jax.grad(lambda z: lax.mul(z, z))(np.complex64(1 + 2j))
    g = jax.grad(lambda n: lax.convert_element_type(n, np.float32), allow_int=True)(np.int32(3))
    assert g.dtype == jax.dtypes.float0
