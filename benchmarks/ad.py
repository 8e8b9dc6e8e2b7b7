"""Automatic-differentiation benchmarks of issue 4: jit(grad) of an MLP, per-example grads.

    uv run python benchmarks/ad.py [--jax-python PATH] [--repeats N] [--ops]

The program is a 784-512-512-10 ReLU MLP with a softmax cross-entropy loss, written once
against the JAX API with ``lax`` operations only (inputs are made with NumPy), and run
with ``import lamina as jax`` and, given ``--jax-python`` (a Python with JAX 0.10.2, kept
outside this repository), with ``import jax``. Figures:

- ``jit(grad(loss))`` for a batch of 256: the stages ``jitted.trace(...)``,
  ``.lower()`` and ``.compile()``, timed after a small program went through the same
  transformations (so they count this program's work, not loading and initialising the
  library); the whole first call ``jitted(...)`` in a process that has run nothing yet;
  and the steady-state step (best of several calls, each waited for);
- ``jit(vmap(grad(loss), in_axes=(None, 0, 0)))``, per-example gradients for a batch of
  128: the first result in a fresh process, and the steady-state step;
- ``grad(jit(loss))`` called eagerly: the steady-state step (the known and the
  transposed part of the jitted call each run as one executable).

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown. ``--ops`` also counts the
operations of the two StableHLO modules by kind, side by side.
"""

from __future__ import annotations

import itertools
import time

import harness

SIZES = (784, 512, 512, 10)
BATCH = 256
PER_EXAMPLE_BATCH = 128
# Figures of each probe, with the lamina / JAX ratio issue 4 asks for (None: no target).
PROBES = {
    "stages": {
        "grad: trace": 0.7,
        "grad: lower": 0.7,
        "grad: compile": 1.0,
        "grad: step": 1.0,
    },
    "first": {"grad: first call": None},
    "per_example": {"per-example: first": 1.0, "per-example: step": 1.0},
    "grad_of_jit": {"grad(jit): step": None},
}


# --------------------------------------------------------------------------- the program


def loss(lax, params, x, y):
    """Softmax cross-entropy of the MLP's logits against one-hot ``y``; ``x`` is one
    example (784,) or a batch (B, 784)."""
    h = x
    last = h.ndim - 1
    lead = tuple(range(last))
    for i, (w, b) in enumerate(params):
        h = lax.dot_general(h, w, (((last,), (0,)), ((), ())))
        h = lax.add(h, lax.broadcast_in_dim(b, h.shape, (last,)))
        if i < len(params) - 1:
            h = lax.max(h, 0.0)
    shifted = lax.sub(h, lax.broadcast_in_dim(lax.reduce_max(h, (last,)), h.shape, lead))
    log_sum = lax.log(lax.reduce_sum(lax.exp(shifted), (last,)))
    log_probs = lax.sub(shifted, lax.broadcast_in_dim(log_sum, h.shape, lead))
    return lax.neg(lax.reduce_sum(lax.mul(log_probs, y), tuple(range(h.ndim))))


def inputs(jax, sizes=SIZES, batch=BATCH):
    import numpy as np

    rng = np.random.default_rng(0)
    params = [
        (
            jax.device_put(rng.standard_normal((m, n), np.float32) * 0.05),
            jax.device_put(np.zeros(n, np.float32)),
        )
        for m, n in itertools.pairwise(sizes)
    ]
    x = jax.device_put(rng.standard_normal((batch, sizes[0]), np.float32))
    labels = rng.integers(0, sizes[-1], batch)
    y = jax.device_put(np.eye(sizes[-1], dtype=np.float32)[labels])
    return params, x, y


def programs(jax):
    """``jit(grad(loss))`` and ``jit(vmap(grad(loss), in_axes=(None, 0, 0)))``."""

    def mlp_loss(params, x, y):
        return loss(jax.lax, params, x, y)

    grad_loss = jax.grad(mlp_loss)
    return jax.jit(grad_loss), jax.jit(jax.vmap(grad_loss, in_axes=(None, 0, 0)))


# --------------------------------------------------------------------------- probes


def probe_stages(jax) -> dict[str, float]:
    grad_step, _ = programs(jax)
    small = inputs(jax, sizes=(6, 5, 4), batch=3)  # warm-up: every stage, once
    jax.block_until_ready(grad_step.trace(*small).lower().compile()(*small))
    args = inputs(jax)
    start = time.perf_counter()
    traced = grad_step.trace(*args)
    traced_at = time.perf_counter()
    lowered = traced.lower()
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    compiled_at = time.perf_counter()
    return {
        "grad: trace": traced_at - start,
        "grad: lower": lowered_at - traced_at,
        "grad: compile": compiled_at - lowered_at,
        "grad: step": harness.best_per_call(jax, lambda: compiled(*args), 50),
    }


def probe_first(jax) -> dict[str, float]:
    grad_step, _ = programs(jax)
    args = inputs(jax)
    start = time.perf_counter()
    jax.block_until_ready(grad_step(*args))
    return {"grad: first call": time.perf_counter() - start}


def probe_per_example(jax) -> dict[str, float]:
    _, per_example = programs(jax)
    args = inputs(jax, batch=PER_EXAMPLE_BATCH)
    start = time.perf_counter()
    jax.block_until_ready(per_example(*args))
    first = time.perf_counter() - start
    return {
        "per-example: first": first,
        "per-example: step": harness.best_per_call(jax, lambda: per_example(*args), 8),
    }


def probe_grad_of_jit(jax) -> dict[str, float]:
    grad_step = jax.grad(jax.jit(lambda params, x, y: loss(jax.lax, params, x, y)))
    args = inputs(jax)
    jax.block_until_ready(grad_step(*args))
    return {"grad(jit): step": harness.best_per_call(jax, lambda: grad_step(*args), 20)}


def probe_ops(jax) -> dict[str, dict[str, int]]:
    grad_step, per_example = programs(jax)
    return {
        "jit(grad(loss))": harness.count_ops(grad_step.trace(*inputs(jax)).lower().as_text()),
        "per-example": harness.count_ops(
            per_example.trace(*inputs(jax, batch=PER_EXAMPLE_BATCH)).lower().as_text()
        ),
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=22)
