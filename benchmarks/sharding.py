"""Sharding benchmarks of issue 17, on 8 CPU devices.

    uv run python benchmarks/sharding.py [--jax-python PATH] [--repeats N] [--ops]

Each program is written once against the JAX API and runs with ``import lamina as jax``
and, given ``--jax-python`` (a Python with JAX 0.10.2, kept outside this repository),
with ``import jax``; each probe sets ``jax_num_cpu_devices`` to 8 first. Figures:

- a data-parallel training step of a 256-512-512-10 ReLU MLP (softmax cross-entropy,
  SGD): ``jit`` with the batch of 512 sharded over a 1-D mesh of the 8 devices and the
  parameters replicated, ``out_shardings`` keeping them so; the steady-state step and
  trace + lower + compile;
- ``pjit``-style dispatch: a jitted elementwise function of a (8, 128) array sharded
  over the 8 devices, called again and again (the per-call cost of a partitioned call).

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown.
"""

from __future__ import annotations

import itertools
import time

import harness
import numpy as np

DEVICES = 8
SIZES = (256, 512, 512, 10)
BATCH = 512
PROBES = {
    "data_parallel": {"dp mlp: step": 1.0, "dp mlp: trace+lower+compile": None},
    "dispatch": {"sharded jit dispatch": 1.0},
}


def _setup(jax):
    jax.config.update("jax_num_cpu_devices", DEVICES)
    mesh = jax.make_mesh((DEVICES,), ("data",))
    named = jax.sharding.NamedSharding
    return named(mesh, jax.sharding.PartitionSpec("data")), named(
        mesh, jax.sharding.PartitionSpec()
    )


def _mlp_step(jax):
    jnp = jax.numpy

    def loss(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = jnp.maximum(h, 0.0)
        logp = jax.nn.log_softmax(h)
        return -jnp.mean(jnp.sum(logp * y, axis=-1))

    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

    return step


def _inputs(jax, batch_sharding, replicated):
    rng = np.random.default_rng(0)
    params = [
        (
            rng.standard_normal((m, n), np.float32) / np.sqrt(m),
            np.zeros(n, np.float32),
        )
        for m, n in itertools.pairwise(SIZES)
    ]
    x = rng.standard_normal((BATCH, SIZES[0]), np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)]
    params = jax.device_put(params, replicated)
    return params, jax.device_put(x, batch_sharding), jax.device_put(y, batch_sharding)


def probe_data_parallel(jax) -> dict[str, float]:
    batch_sharding, replicated = _setup(jax)
    step = jax.jit(
        _mlp_step(jax),
        in_shardings=(replicated, batch_sharding, batch_sharding),
        out_shardings=replicated,
    )
    args = _inputs(jax, batch_sharding, replicated)
    start = time.perf_counter()
    compiled = step.trace(*args).lower().compile()
    compile_time = time.perf_counter() - start
    return {
        "dp mlp: step": harness.best_per_call(jax, lambda: compiled(*args), 30),
        "dp mlp: trace+lower+compile": compile_time,
    }


def probe_dispatch(jax) -> dict[str, float]:
    batch_sharding, _ = _setup(jax)
    f = jax.jit(lambda a: a * 2.0 + 1.0)
    x = jax.device_put(np.ones((DEVICES, 128), np.float32), batch_sharding)
    jax.block_until_ready(f(x))
    calls = 2000
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            out = f(x)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - start) / calls)
    return {"sharded jit dispatch": best}


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=30)
