"""Residuals of a differentiated lax.scan: known consts (closed-over values included)
enter the backward scan as constants and slices of known xs are read from those xs, as
in JAX, instead of being stacked once per iteration; the gradients stay right (against
numerical differences and a hand-derived backward loop)."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import grad, jit, vjp
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(11)
LENGTH, BATCH, FEATURES, HIDDEN = 7, 3, 4, 5


def rnn_loss(w, u, xs, reverse=False):
    def step(h, x):
        h = lax.tanh(lax.add(lax.dot(h, w), lax.dot(x, u)))
        return h, h

    h0 = lax.full((BATCH, HIDDEN), 0.5, np.float32)
    _, hs = lax.scan(step, h0, xs, reverse=reverse)
    return lax.reduce_sum(lax.mul(hs, hs), (0, 1, 2))


def inputs():
    w = (rng.standard_normal((HIDDEN, HIDDEN)) / 2).astype(np.float32)
    u = (rng.standard_normal((FEATURES, HIDDEN)) / 2).astype(np.float32)
    xs = rng.standard_normal((LENGTH, BATCH, FEATURES)).astype(np.float32)
    return w, u, xs


def numpy_rnn_grads(w, u, xs):
    hs, h = [], np.full((BATCH, HIDDEN), 0.5, np.float64)
    for x in xs:
        hs.append(h)
        h = np.tanh(h @ w + x @ u)
    hs.append(h)
    dw, du, dh = np.zeros_like(w, np.float64), np.zeros_like(u, np.float64), 0.0
    for t in reversed(range(LENGTH)):
        dh = dh + 2 * hs[t + 1]
        dpre = dh * (1 - hs[t + 1] ** 2)
        dw += hs[t].T @ dpre
        du += xs[t].T @ dpre
        dh = dpre @ w.T
    return dw, du


def test_rnn_gradients_match_hand_derived_backward_loop():
    w, u, xs = inputs()
    dw, du = jit(grad(rnn_loss, argnums=(0, 1)))(w, u, xs)
    want_w, want_u = numpy_rnn_grads(w.astype(np.float64), u.astype(np.float64), xs)
    np.testing.assert_allclose(np.asarray(dw), want_w, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(np.asarray(du), want_u, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("reverse", [False, True])
def test_rnn_check_grads(reverse):
    w, u, xs = inputs()
    check_grads(lambda *a: rnn_loss(*a, reverse=reverse), (w, u, xs), order=1, eps=1e-3)


def test_invariant_and_xs_residuals_are_not_stacked():
    w, u, xs = inputs()
    text = jit(grad(rnn_loss, argnums=(0, 1))).trace(w, u, xs).lower().as_text()
    assert f"tensor<{LENGTH}x{HIDDEN}x{HIDDEN}xf32>" not in text  # w once per step
    assert f"tensor<{LENGTH}x{FEATURES}x{HIDDEN}xf32>" not in text  # u once per step
    # xs is read by the backward loop, not copied into a fresh stack of zeros
    assert f"-> tensor<{LENGTH}x{BATCH}x{FEATURES}xf32>" not in text
    # ys, h, and the tanh and 1 - tanh residuals of JAX's tanh JVP
    assert text.count("call @dynamic_update_index_in_dim") == 4


def test_closed_over_constant_residual():
    scale = rng.uniform(0.5, 1.5, (BATCH,)).astype(np.float32)

    def loss(c0, xs):
        def step(c, x):
            c = lax.sin(lax.mul(c, scale)) + x
            return c, c

        return lax.reduce_sum(lax.scan(step, c0, xs)[1], (0, 1))

    c0 = rng.standard_normal(BATCH).astype(np.float32)
    xs = rng.standard_normal((LENGTH, BATCH)).astype(np.float32)
    check_grads(loss, (c0, xs), order=1)
    eager = grad(loss)(c0, xs)
    np.testing.assert_allclose(np.asarray(jit(grad(loss))(c0, xs)), eager, rtol=1e-6)
    _, pullback = vjp(loss, c0, xs)
    np.testing.assert_allclose(np.asarray(pullback(np.float32(1.0))[0]), eager, rtol=1e-6)
