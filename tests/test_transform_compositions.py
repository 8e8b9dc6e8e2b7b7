"""jit, jvp and vmap compose in any order (issue 4's forward-mode and vmap parts)."""

import numpy as np

import lamina as jax
from lamina import lax

rng = np.random.default_rng(1)


def f(x):
    return lax.reduce_sum(lax.tanh(x) * lax.sin(x), (0,))


def df(x):
    return np.sum((1 - np.tanh(x) ** 2) * np.sin(x) + np.tanh(x) * np.cos(x), axis=0)


def test_per_example_directional_derivatives_in_every_order():
    xs = rng.standard_normal((5, 3)).astype(np.float32)
    ones = np.ones_like(xs)

    def tangent(x, t):
        return jax.jvp(f, (x,), (t,))[1]

    expected = df(xs.T)
    for composed in (
        jax.vmap(tangent),
        jax.jit(jax.vmap(tangent)),
        jax.vmap(jax.jit(tangent)),
        jax.vmap(lambda x, t: jax.jvp(jax.jit(f), (x,), (t,))[1]),
    ):
        np.testing.assert_allclose(np.asarray(composed(xs, ones)), expected, rtol=1e-5)


def test_second_order_forward_mode_matches_numerical_differences():
    jax.test_util.check_grads(f, (rng.standard_normal(4).astype(np.float32),), 2, modes=("fwd",))
