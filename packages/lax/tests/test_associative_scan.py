"""lax.associative_scan against NumPy's accumulations: every length up to 9 (odd and
even splits), reversed, along other axes, on pytrees, with gradients and under vmap."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import jit, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(11)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9])
def test_cumsum_every_length(n):
    x = rng.uniform(-1, 1, n).astype(np.float32)
    np.testing.assert_allclose(lax.associative_scan(lax.add, x), np.cumsum(x), rtol=1e-5)
    np.testing.assert_allclose(
        lax.associative_scan(lax.add, x, reverse=True), np.cumsum(x[::-1])[::-1], rtol=1e-5
    )


def test_other_axes_and_functions():
    x = rng.uniform(0.5, 1.5, (3, 7)).astype(np.float32)
    np.testing.assert_allclose(lax.associative_scan(lax.mul, x, axis=1), np.cumprod(x, 1),
                               rtol=1e-5)  # fmt: skip
    np.testing.assert_allclose(
        jit(lambda x: lax.associative_scan(lax.max, x, axis=-1))(x), np.maximum.accumulate(x, 1)
    )
    np.testing.assert_allclose(lax.associative_scan(lax.add, x), np.cumsum(x, 0), rtol=1e-5)


def test_pytree_linear_recurrence():
    # h[t] = a[t] * h[t-1] + b[t] as a scan over (a, b) pairs.
    a = rng.uniform(0.5, 1.0, 6).astype(np.float32)
    b = rng.uniform(-1, 1, 6).astype(np.float32)

    def combine(left, right):
        return (left[0] * right[0], right[0] * left[1] + right[1])

    _, h = lax.associative_scan(combine, (a, b))
    want, state = [], 0.0
    for at, bt in zip(a, b, strict=True):
        state = at * state + bt
        want.append(state)
    np.testing.assert_allclose(h, want, rtol=1e-5)


def test_gradients_and_vmap():
    x = rng.uniform(0.5, 1.5, 5).astype(np.float32)
    check_grads(lambda x: lax.associative_scan(lax.mul, x), (x,), 1, modes=("fwd", "rev"),
                rtol=2e-2)  # fmt: skip
    xs = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    out = vmap(lambda x: lax.associative_scan(lax.add, x), in_axes=1)(xs)
    np.testing.assert_allclose(out, np.cumsum(xs, 0).T, rtol=1e-5)
