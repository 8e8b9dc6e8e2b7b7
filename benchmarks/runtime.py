"""Runtime benchmarks of issue 3: import, jit dispatch, eager op, tracing, retracing,
first MLP result.

    uv run python benchmarks/runtime.py [--jax-python PATH] [--repeats N]

Each figure is measured in a fresh subprocess running this file with ``--measure``.
With ``--jax-python`` (a Python that has JAX 0.10.2, kept outside this repository) the
same code runs against ``jax`` too, and the table shows lamina/JAX ratios. The measured
program is written once against the JAX API, which lamina provides. ``retrace`` is the
first call of an already-called jitted function with a new argument shape (a cache
miss: trace, lower, compile, run).
"""

from __future__ import annotations

import itertools
import time

import harness

PROBES = {  # lamina / JAX ratios that issue 3 asks for
    "runtime": {
        "import": 0.5,
        "jit dispatch": 1.0,
        "eager op": 1.0,
        "make_jaxpr 2000 ops": 0.7,
        "retrace (new shape)": None,
        "MLP first result": None,
    }
}


def _best_per_call(fn, calls: int, repeats: int = 15) -> float:
    """Dispatch time per call: the best of several runs, each starting with the
    device queue drained so that earlier runs' work does not compete."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            result = fn()
        best = min(best, (time.perf_counter() - start) / calls)
        result.block_until_ready()
    return best


def probe_runtime(jax) -> dict[str, float]:
    # lamina loads its layers on first use, so "import" counts touching the runtime too.
    start = time.perf_counter()
    jax.jit, jax.lax, jax.device_put  # noqa: B018
    import_s = harness.import_seconds + time.perf_counter() - start

    import numpy as np

    lax = jax.lax
    x = jax.device_put(np.ones(8, np.float32))

    jitted = jax.jit(lambda v: v * 2 + 1)
    jitted(x).block_until_ready()
    dispatch_s = _best_per_call(lambda: jitted(x), 2000)
    start = time.perf_counter()
    jitted(jax.device_put(np.ones(9, np.float32))).block_until_ready()
    retrace_s = time.perf_counter() - start
    (x * 2).block_until_ready()
    eager_s = _best_per_call(lambda: x * 2, 2000)

    def long_chain(v):
        for _ in range(1000):
            v = lax.sin(v) * 1.5
        return v

    start = time.perf_counter()
    jax.make_jaxpr(long_chain)(x)
    trace_s = time.perf_counter() - start

    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = [
        (
            jax.device_put(rng.standard_normal((m, n), np.float32) * 0.05),
            jax.device_put(np.zeros(n, np.float32)),
        )
        for m, n in itertools.pairwise(sizes)
    ]
    batch = jax.device_put(rng.standard_normal((256, 784), np.float32))

    def mlp(layers, h):
        for i, (w, b) in enumerate(layers):
            h = lax.dot_general(h, w, (((1,), (0,)), ((), ()))) + b
            if i < len(layers) - 1:
                h = lax.max(h, 0.0)
        return h

    start = time.perf_counter()
    jax.jit(mlp)(params, batch).block_until_ready()
    mlp_s = time.perf_counter() - start
    return {
        "import": import_s,
        "jit dispatch": dispatch_s,
        "eager op": eager_s,
        "make_jaxpr 2000 ops": trace_s,
        "retrace (new shape)": retrace_s,
        "MLP first result": mlp_s,
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=22)
