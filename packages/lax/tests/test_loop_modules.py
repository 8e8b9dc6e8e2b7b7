"""The while loops lamina emits for scans and batched while loops are built as JAX's:
the same number of carried values, the same reduction of a batched predicate."""

import re

import numpy as np

import lamina.lax as lax
from lamina.interpreters import grad, jit, vmap


def _rnn_loss(params, xs):
    w, u, b = params
    h0 = lax.full((xs.shape[1], w.shape[0]), 0.0, w.dtype)

    def step(h, x):
        pre = lax.add(lax.dot(h, w), lax.dot(x, u))
        h = lax.tanh(lax.add(pre, lax.broadcast_in_dim(b, pre.shape, (1,))))
        return h, h

    _, hs = lax.scan(step, h0, xs)
    return lax.reduce_sum(lax.mul(hs, hs), (0, 1, 2))


def _carried(text: str) -> list[int]:
    return [m.count("%iterArg") for m in re.findall(r"stablehlo\.while\(([^)]*)\)", text)]


def test_scan_gradient_loops_carry_what_jax_carries():
    # The bias's broadcast is hoisted out of the forward loop; the bias itself is then
    # read by nothing in it and is not carried. Recorded from JAX 0.10.2: [10, 11].
    params = (np.ones((4, 4), np.float32), np.ones((3, 4), np.float32), np.zeros(4, np.float32))
    xs = np.ones((5, 2, 3), np.float32)
    step = jit(grad(_rnn_loss))
    assert _carried(step.lower(params, xs).as_text()) == [10, 11]
    # recorded from JAX 0.10.2
    sums = [np.asarray(g).sum() for g in step(params, xs)]
    np.testing.assert_allclose(sums, [0.0008839591, 0.47190097, 0.15730031], rtol=1e-5)


def _collatz_steps(n):
    def body(carry):
        value, count = carry
        odd = lax.rem(value, 2) == 1
        return lax.select(odd, 3 * value + 1, value // 2), count + 1

    return lax.while_loop(lambda c: c[0] > 1, body, (n, 0))[1]


def test_batched_while_predicate_is_an_or_reduction():
    starts = np.arange(1, 9, dtype=np.int32)
    batched = jit(vmap(_collatz_steps))
    cond = batched.lower(starts).as_text().split("cond {")[1].split("} do {")[0]
    assert "stablehlo.or" in cond  # as JAX 0.10.2's module
    assert "stablehlo.maximum" not in cond and "stablehlo.convert" not in cond
    # recorded from JAX 0.10.2
    np.testing.assert_array_equal(batched(starts), [0, 1, 7, 2, 5, 8, 16, 3])
