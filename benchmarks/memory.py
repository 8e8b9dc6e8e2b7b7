"""Memory benchmarks: the peak of an MLP training step with and without ``checkpoint``,
donation, and steady memory over many eager dispatches.

    uv run python benchmarks/memory.py [--jax-python PATH] [--repeats N]

The programs are those of ``ad.py`` (the 784-512-512-10 MLP and its loss), written once
against the JAX API, run with ``import lamina as jax`` and, given ``--jax-python`` (a
Python with JAX 0.10.2), with ``import jax``. Figures, in MiB:

- ``MLP step peak``: device memory at the peak of ``jit`` of an SGD step on a batch of
  1,024, from the device's memory statistics (``peak_bytes_in_use``, GPU) or, where the
  client keeps none (CPU), from the compiled program's memory analysis (arguments +
  outputs + temporaries - aliased); ``... checkpoint``: the same with the loss under
  ``checkpoint`` (its activations recomputed in the backward pass);
- ``donation``: the same step with the parameters donated: the bytes of the outputs
  that reuse the donated buffers (higher is better), and the growth of the bytes of
  live arrays over 50 steps (0 when every step reuses the last one's buffers);
- ``eager``: the growth of the process's resident memory, and of the number of live
  arrays, over 100,000 eager dispatches of a small operation, after 10,000 to warm up.
"""

from __future__ import annotations

import ad
import harness

MIB = 1 << 20
BATCH = 1024
EAGER_DISPATCHES, EAGER_WARMUP = 100_000, 10_000
PROBES = {
    "peak": {"MLP step peak (MiB)": 1.0, "MLP step peak, checkpoint (MiB)": 1.0},
    "donation": {"donation: reused (MiB)": None, "donation: live growth (MiB)": None},
    "eager": {"eager 100k: RSS growth (MiB)": None, "eager 100k: live arrays growth": None},
}


def _step(jax, checkpointed: bool, **jit_options):
    def mlp_loss(params, x, y):
        return ad.loss(jax.lax, params, x, y)

    loss = jax.checkpoint(mlp_loss) if checkpointed else mlp_loss

    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

    return jax.jit(step, **jit_options)


def _peak(jax, step, args) -> float:
    device = jax.devices()[0]
    stats = device.memory_stats()
    compiled = step.trace(*args).lower().compile()
    if stats is None or "peak_bytes_in_use" not in stats:
        m = compiled.memory_analysis()
        used = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
        return (used - m.alias_size_in_bytes) / MIB
    jax.block_until_ready(compiled(*args))
    return device.memory_stats()["peak_bytes_in_use"] / MIB


def probe_peak(jax) -> dict[str, float]:
    args = ad.inputs(jax, batch=BATCH)
    return {
        "MLP step peak (MiB)": _peak(jax, _step(jax, False), args),
        "MLP step peak, checkpoint (MiB)": _peak(jax, _step(jax, True), args),
    }


def _live_bytes(jax) -> int:
    return sum(a.nbytes for a in jax.live_arrays())


def probe_donation(jax) -> dict[str, float]:
    step = _step(jax, False, donate_argnums=0)
    params, x, y = ad.inputs(jax, batch=BATCH)
    reused = step.trace(params, x, y).lower().compile().memory_analysis().alias_size_in_bytes
    params = jax.block_until_ready(step(params, x, y))
    before = _live_bytes(jax)
    for _ in range(50):
        params = step(params, x, y)
    jax.block_until_ready(params)
    return {
        "donation: reused (MiB)": reused / MIB,
        "donation: live growth (MiB)": (_live_bytes(jax) - before) / MIB,
    }


def _resident_bytes() -> int:
    import os

    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def probe_eager(jax) -> dict[str, float]:
    import numpy as np

    x = jax.device_put(np.ones(8, np.float32))
    for _ in range(EAGER_WARMUP):
        y = x * 2
    jax.block_until_ready(y)
    rss, live = _resident_bytes(), len(jax.live_arrays())
    for _ in range(EAGER_DISPATCHES):
        y = x * 2
    jax.block_until_ready(y)
    return {
        "eager 100k: RSS growth (MiB)": (_resident_bytes() - rss) / MIB,
        "eager 100k: live arrays growth": float(len(jax.live_arrays()) - live),
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=34)
