"""lamina.numpy benchmarks of issue 6: an eager chain of jnp operations and a jitted
4-operand einsum.

    uv run python benchmarks/numpy_api.py [--jax-python PATH] [--repeats N]

Each program is written once against the JAX API and runs with ``import lamina as jax``
and, given ``--jax-python`` (a Python with JAX 0.10.2, kept outside this repository),
with ``import jax``. Figures:

- ``eager chain``: 50 jnp operations (elementwise arithmetic and transcendental
  functions, comparisons and ``where``, reductions with ``keepdims``, a transpose and a
  matmul) on (128, 128) float32 arrays, dispatched one by one outside ``jit``: the time
  of one whole chain, waited for at its end;
- ``einsum``: ``jnp.einsum('bij,bjk,kl,lm->bim', ...)`` on (8, 64, 96), (8, 96, 128),
  (128, 64), (64, 32) float32 under ``jit``: the steady-state call; and the same
  einsum called eagerly (contraction planning included).

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown.
"""

from __future__ import annotations

import importlib

import harness
import numpy as np

SIDE = 128
PROBES = {
    "chain": {"eager chain (50 ops)": 1.0},
    "einsum": {"einsum: jit step": 1.0, "einsum: eager call": None},
}
EINSUM = "bij,bjk,kl,lm->bim"
EINSUM_SHAPES = [(8, 64, 96), (8, 96, 128), (128, 64), (64, 32)]


def chain(jnp, x, y):
    """50 operations, each a separate dispatch when run eagerly."""
    for _ in range(4):  # 4 × 11 = 44
        x = jnp.sin(x) * 0.5 + jnp.cos(y)
        y = jnp.exp(-jnp.abs(x)) - jnp.tanh(y) * 0.25
        x = jnp.where(x > y, x, y)
        x = x / (1.0 + jnp.sqrt(jnp.abs(y)))
    x = x - jnp.mean(x, axis=0, keepdims=True)  # 2
    x = jnp.maximum(x, 0.0)  # 1
    x = jnp.matmul(x, jnp.transpose(y))  # 2
    return jnp.sum(x)  # 1


def _inputs(seed, shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def probe_chain(jax) -> dict[str, float]:
    jnp = importlib.import_module(f"{jax.__name__}.numpy")
    x, y = (jax.device_put(a) for a in _inputs(0, [(SIDE, SIDE)] * 2))
    for _ in range(3):  # every operation compiled once
        jax.block_until_ready(chain(jnp, x, y))
    return {"eager chain (50 ops)": harness.best_per_call(jax, lambda: chain(jnp, x, y), 100)}


def probe_einsum(jax) -> dict[str, float]:
    jnp = importlib.import_module(f"{jax.__name__}.numpy")
    args = [jax.device_put(a) for a in _inputs(1, EINSUM_SHAPES)]
    jitted = jax.jit(lambda *ops: jnp.einsum(EINSUM, *ops))
    jax.block_until_ready(jitted(*args))
    jax.block_until_ready(jnp.einsum(EINSUM, *args))
    return {
        "einsum: jit step": harness.best_per_call(jax, lambda: jitted(*args), 200),
        "einsum: eager call": harness.best_per_call(jax, lambda: jnp.einsum(EINSUM, *args), 20),
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=26)
