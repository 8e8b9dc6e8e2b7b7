"""lamina.pallas benchmarks of issue 19: Pallas kernels in interpret mode, a blocked
matmul and flash-attention forward.

    uv run python benchmarks/pallas.py [--jax-python PATH] [--repeats N]

Each kernel is written once against the JAX API (``jax.experimental.pallas``) and
runs with ``import lamina as jax`` and, given ``--jax-python`` (a Python with JAX
0.10.2, kept outside this repository), with ``import jax``, both with
``interpret=True`` on the CPU. Figures:

- ``matmul``: (512, 512) @ (512, 512) float32 in (128, 128) blocks, accumulating into
  the output block over the K grid axis (grid 4 × 4 × 4) under ``jit``: the first call
  (tracing and compiling) and the steady-state call;
- ``flash attention``: forward over (batch·heads 8, length 512, head dim 64) float32,
  query blocks of 64 and key/value blocks of 64 walked by a ``fori_loop`` in the
  kernel (grid 8 × 8), under ``jit``: the first call and the steady-state call.

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown.
"""

from __future__ import annotations

import functools
import importlib
import time

import harness
import numpy as np

M = N = K = 512
BLOCK = 128
BH, SEQ, HEAD_DIM, BLOCK_Q, BLOCK_K = 8, 512, 64, 64, 64
PROBES = {
    "matmul": {"matmul: first call": 1.0, "matmul: step": 1.0},
    "flash": {"flash attention: first call": 1.0, "flash attention: step": 1.0},
}


def _timed_first(jax, fn) -> float:
    start = time.perf_counter()
    jax.block_until_ready(fn())
    return time.perf_counter() - start


def probe_matmul(jax) -> dict[str, float]:
    pl = importlib.import_module(f"{jax.__name__}.experimental.pallas")
    jnp = jax.numpy

    def kernel(x_ref, y_ref, o_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref)

        o_ref[...] += x_ref[...] @ y_ref[...]

    matmul = jax.jit(
        pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct((M, N), jnp.float32),
            grid=(M // BLOCK, N // BLOCK, K // BLOCK),
            in_specs=[
                pl.BlockSpec((BLOCK, BLOCK), lambda i, j, k: (i, k)),
                pl.BlockSpec((BLOCK, BLOCK), lambda i, j, k: (k, j)),
            ],
            out_specs=pl.BlockSpec((BLOCK, BLOCK), lambda i, j, k: (i, j)),
            interpret=True,
        )
    )
    rng = np.random.default_rng(0)
    x = jax.device_put(rng.standard_normal((M, K)).astype(np.float32))
    y = jax.device_put(rng.standard_normal((K, N)).astype(np.float32))
    first = _timed_first(jax, lambda: matmul(x, y))
    return {
        "matmul: first call": first,
        "matmul: step": harness.best_per_call(jax, lambda: matmul(x, y), 10),
    }


def probe_flash(jax) -> dict[str, float]:
    pl = importlib.import_module(f"{jax.__name__}.experimental.pallas")
    jnp, lax = jax.numpy, jax.lax

    def kernel(q_ref, k_ref, v_ref, o_ref):
        q = q_ref[...]
        scale = np.float32(1 / np.sqrt(HEAD_DIM))

        def body(t, carry):
            m, l, acc = carry
            k = k_ref[pl.ds(t * BLOCK_K, BLOCK_K), :]
            v = v_ref[pl.ds(t * BLOCK_K, BLOCK_K), :]
            s = (q @ k.T) * scale
            m_new = jnp.maximum(m, s.max(axis=-1))
            p = jnp.exp(s - m_new[:, None])
            corr = jnp.exp(m - m_new)
            return m_new, l * corr + p.sum(axis=-1), acc * corr[:, None] + p @ v

        init = (
            jnp.full((BLOCK_Q,), -jnp.inf, jnp.float32),
            jnp.zeros((BLOCK_Q,), jnp.float32),
            jnp.zeros((BLOCK_Q, HEAD_DIM), jnp.float32),
        )
        _, l, acc = lax.fori_loop(0, SEQ // BLOCK_K, body, init)
        o_ref[...] = acc / l[:, None]

    shape = (BH, SEQ, HEAD_DIM)
    attention = jax.jit(
        pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct(shape, jnp.float32),
            grid=(BH, SEQ // BLOCK_Q),
            in_specs=[
                pl.BlockSpec((None, BLOCK_Q, HEAD_DIM), lambda b, i: (b, i, 0)),
                pl.BlockSpec((None, SEQ, HEAD_DIM), lambda b, i: (b, 0, 0)),
                pl.BlockSpec((None, SEQ, HEAD_DIM), lambda b, i: (b, 0, 0)),
            ],
            out_specs=pl.BlockSpec((None, BLOCK_Q, HEAD_DIM), lambda b, i: (b, i, 0)),
            interpret=True,
        )
    )
    rng = np.random.default_rng(0)
    q, k, v = (jax.device_put(rng.standard_normal(shape).astype(np.float32)) for _ in range(3))
    first = _timed_first(jax, functools.partial(attention, q, k, v))
    return {
        "flash attention: first call": first,
        "flash attention: step": harness.best_per_call(jax, lambda: attention(q, k, v), 10),
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=30)
