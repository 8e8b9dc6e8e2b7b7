"""lamina.random and lamina.nn benchmarks of issue 7: sampling a million normals and
dot-product attention forward and backward.

    uv run python benchmarks/random_nn.py [--jax-python PATH] [--repeats N]

Each program is written once against the JAX API and runs with ``import lamina as jax``
and, given ``--jax-python`` (a Python with JAX 0.10.2, kept outside this repository),
with ``import jax``. Figures:

- ``normal``: ``jit(lambda key: random.normal(key, (1_000_000,)))``: the steady-state
  call (a fresh key each call would not change the program, so one key is reused);
- ``attention``: ``nn.dot_product_attention`` on query, key and value of shape
  (batch 4, length 512, heads 8, head dim 64) float32 under ``jit``: the forward step,
  and ``jit(grad)`` of the sum of its output with respect to query, key and value.

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown.
"""

from __future__ import annotations

import importlib

import harness
import numpy as np

SAMPLES = 1_000_000
BATCH, LENGTH, HEADS, HEAD_DIM = 4, 512, 8, 64
PROBES = {
    "normal": {"normal 1e6: step": 1.0},
    "attention": {"attention: forward step": 1.0, "attention: grad step": 1.0},
}


def normal(jax):
    """``jit`` of sampling a million normals, and its argument (a key)."""
    random = importlib.import_module(f"{jax.__name__}.random")
    return jax.jit(lambda key: random.normal(key, (SAMPLES,))), (random.PRNGKey(0),)


def attention(jax):
    """``jit`` of attention's forward and of its gradient, and their arguments."""
    nn = importlib.import_module(f"{jax.__name__}.nn")
    rng = np.random.default_rng(0)
    shape = (BATCH, LENGTH, HEADS, HEAD_DIM)
    args = tuple(jax.device_put(rng.standard_normal(shape).astype(np.float32)) for _ in range(3))

    def loss(q, k, v):
        return nn.dot_product_attention(q, k, v).sum()

    forward = jax.jit(nn.dot_product_attention)
    return forward, jax.jit(jax.grad(loss, argnums=(0, 1, 2))), args


def probe_normal(jax) -> dict[str, float]:
    sample, (key,) = normal(jax)
    jax.block_until_ready(sample(key))
    return {"normal 1e6: step": harness.best_per_call(jax, lambda: sample(key), 30)}


def probe_attention(jax) -> dict[str, float]:
    forward, backward, (q, k, v) = attention(jax)
    jax.block_until_ready(forward(q, k, v))
    jax.block_until_ready(backward(q, k, v))
    return {
        "attention: forward step": harness.best_per_call(jax, lambda: forward(q, k, v), 10),
        "attention: grad step": harness.best_per_call(jax, lambda: backward(q, k, v), 10),
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=26)
