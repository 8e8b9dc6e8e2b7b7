"""lax benchmarks of issue 5: a scan RNN, a small CNN, Cholesky + triangular solve.

    uv run python benchmarks/lax.py [--jax-python PATH] [--repeats N] [--ops]

Each program is written once against the JAX API with ``lax`` operations only (inputs
are made with NumPy) and runs with ``import lamina as jax`` and, given
``--jax-python`` (a Python with JAX 0.10.2, kept outside this repository), with
``import jax``. Figures:

- ``jit(grad(loss))`` of an RNN ``h' = tanh(W h + U x_t + b)`` run by ``lax.scan`` over
  200 steps (hidden 128, batch 16, inputs 64; loss: sum of squares of every hidden
  state): the stages ``trace``, ``lower`` and ``compile`` (after a small program went
  through them, so that they count this program's work, not loading the library), their
  sum, and the steady-state step;
- a CNN on a batch of 32 28×28×1 images (conv 3×3×32, relu, conv 3×3×64, relu, spatial
  sum, dense 10, softmax cross-entropy): the ``jit`` forward step, the ``jit(grad)``
  step, and the backward's trace + lower + compile;
- ``lax.linalg.cholesky`` then ``lax.linalg.triangular_solve(L, b, left_side=True,
  lower=True)`` at 512×512 float32 under ``jit``: the steady-state call.

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown. ``--ops`` also counts the
operations of the StableHLO modules by kind, side by side.
"""

from __future__ import annotations

import importlib
import time

import harness

STEPS, BATCH, FEATURES, HIDDEN = 200, 16, 64, 128
IMAGES, SIDE, CLASSES = 32, 28, 10
MATRIX = 512
# Figures of each probe, with the lamina / JAX ratio issue 5 asks for (None: no target).
PROBES = {
    "rnn": {
        "rnn: trace": None,
        "rnn: lower": None,
        "rnn: compile": None,
        "rnn: trace+lower+compile": 1.0,
        "rnn: step": 1.0,
    },
    "cnn": {"cnn: forward step": 1.0, "cnn: grad step": 1.0, "cnn: grad compile": 1.0},
    "linalg": {"cholesky+solve: step": 1.0},
}


# --------------------------------------------------------------------------- programs


def rnn_loss(lax, params, xs):
    """Sum of squares of every hidden state of a tanh RNN over ``xs`` (T, B, F)."""
    w, u, b = params
    h0 = lax.full((xs.shape[1], w.shape[0]), 0.0, w.dtype)

    def step(h, x):
        pre = lax.add(lax.dot(h, w), lax.dot(x, u))
        h = lax.tanh(lax.add(pre, lax.broadcast_in_dim(b, pre.shape, (1,))))
        return h, h

    _, hs = lax.scan(step, h0, xs)
    return lax.reduce_sum(lax.mul(hs, hs), (0, 1, 2))


def rnn_inputs(jax, steps=STEPS, batch=BATCH, features=FEATURES, hidden=HIDDEN):
    import numpy as np

    rng = np.random.default_rng(0)
    params = (
        rng.standard_normal((hidden, hidden), np.float32) / np.sqrt(hidden),
        rng.standard_normal((features, hidden), np.float32) / np.sqrt(features),
        np.zeros(hidden, np.float32),
    )
    xs = rng.standard_normal((steps, batch, features), np.float32)
    return jax.device_put(params), jax.device_put(xs)


def cnn_loss(lax, params, images, labels):
    """Softmax cross-entropy of a two-convolution network on NHWC ``images``."""
    k1, k2, w, b = params
    dims = ("NHWC", "HWIO", "NHWC")
    h = images
    for kernel in (k1, k2):
        h = lax.conv_general_dilated(h, kernel, (1, 1), "SAME", dimension_numbers=dims)
        h = lax.max(h, 0.0)
    pooled = lax.reduce_sum(h, (1, 2))
    logits = lax.add(lax.dot(pooled, w), lax.broadcast_in_dim(b, (h.shape[0], w.shape[1]), (1,)))
    top = lax.broadcast_in_dim(lax.reduce_max(logits, (1,)), logits.shape, (0,))
    shifted = lax.sub(logits, top)
    log_sum = lax.log(lax.reduce_sum(lax.exp(shifted), (1,)))
    log_probs = lax.sub(shifted, lax.broadcast_in_dim(log_sum, logits.shape, (0,)))
    return lax.neg(lax.reduce_sum(lax.mul(log_probs, labels), (0, 1)))


def cnn_inputs(jax, images=IMAGES, side=SIDE):
    import numpy as np

    rng = np.random.default_rng(0)
    params = (
        rng.standard_normal((3, 3, 1, 32), np.float32) / 3.0,
        rng.standard_normal((3, 3, 32, 64), np.float32) / np.sqrt(9 * 32),
        rng.standard_normal((64, CLASSES), np.float32) / (8.0 * side * side),
        np.zeros(CLASSES, np.float32),
    )
    x = rng.standard_normal((images, side, side, 1), np.float32)
    labels = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, images)]
    return jax.device_put(params), jax.device_put(x), jax.device_put(labels)


def cholesky_solve(lax, a, b):
    factor = lax.linalg.cholesky(a)
    return lax.linalg.triangular_solve(factor, b, left_side=True, lower=True)


def linalg_inputs(jax, n=MATRIX):
    import numpy as np

    rng = np.random.default_rng(0)
    m = rng.standard_normal((n, n), np.float32)
    a = m @ m.T / n + np.eye(n, dtype=np.float32)
    return jax.device_put(a), jax.device_put(rng.standard_normal((n, 16), np.float32))


def programs(jax):
    importlib.import_module(f"{jax.__name__}.lax.linalg")  # a submodule: load it
    lax = jax.lax
    return {
        "rnn": jax.jit(jax.grad(lambda p, xs: rnn_loss(lax, p, xs))),
        "cnn forward": jax.jit(lambda p, x, y: cnn_loss(lax, p, x, y)),
        "cnn grad": jax.jit(jax.grad(lambda p, x, y: cnn_loss(lax, p, x, y))),
        "cholesky+solve": jax.jit(lambda a, b: cholesky_solve(lax, a, b)),
    }


# --------------------------------------------------------------------------- probes


def probe_rnn(jax) -> dict[str, float]:
    step = programs(jax)["rnn"]
    small = rnn_inputs(jax, steps=3, batch=2, features=3, hidden=4)  # warm-up
    jax.block_until_ready(step.trace(*small).lower().compile()(*small))
    args = rnn_inputs(jax)
    start = time.perf_counter()
    traced = step.trace(*args)
    traced_at = time.perf_counter()
    lowered = traced.lower()
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    compiled_at = time.perf_counter()
    return {
        "rnn: trace": traced_at - start,
        "rnn: lower": lowered_at - traced_at,
        "rnn: compile": compiled_at - lowered_at,
        "rnn: trace+lower+compile": compiled_at - start,
        "rnn: step": harness.best_per_call(jax, lambda: compiled(*args), 20),
    }


def probe_cnn(jax) -> dict[str, float]:
    built = programs(jax)
    forward, grad_step = built["cnn forward"], built["cnn grad"]
    small = cnn_inputs(jax, images=2, side=5)  # warm-up
    jax.block_until_ready(grad_step.trace(*small).lower().compile()(*small))
    args = cnn_inputs(jax)
    start = time.perf_counter()
    compiled = grad_step.trace(*args).lower().compile()
    compile_time = time.perf_counter() - start
    jax.block_until_ready(forward(*args))
    return {
        "cnn: forward step": harness.best_per_call(jax, lambda: forward(*args), 20),
        "cnn: grad step": harness.best_per_call(jax, lambda: compiled(*args), 20),
        "cnn: grad compile": compile_time,
    }


def probe_linalg(jax) -> dict[str, float]:
    solve = programs(jax)["cholesky+solve"]
    args = linalg_inputs(jax)
    jax.block_until_ready(solve(*args))
    return {"cholesky+solve: step": harness.best_per_call(jax, lambda: solve(*args), 30)}


def probe_ops(jax) -> dict[str, dict[str, int]]:
    built = programs(jax)
    args = {
        "rnn": rnn_inputs(jax),
        "cnn forward": cnn_inputs(jax),
        "cnn grad": cnn_inputs(jax),
        "cholesky+solve": linalg_inputs(jax),
    }
    return {
        name: harness.count_ops(program.trace(*args[name]).lower().as_text())
        for name, program in built.items()
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=26)
