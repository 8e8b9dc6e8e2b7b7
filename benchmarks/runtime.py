"""Runtime benchmarks of issue 3: import, jit dispatch, eager op, tracing, first MLP result.

    uv run python benchmarks/runtime.py [--jax-python PATH]

Each figure is measured in a fresh subprocess running this file with ``--measure``.
With ``--jax-python`` (a Python that has JAX 0.10.2, kept outside this repository) the
same code runs against ``jax`` too, and the table shows lamina/JAX ratios. The measured
program is written once against the JAX API, which lamina provides.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = {  # lamina / JAX ratios that issue 3 asks for
    "import": 0.5,
    "jit dispatch": 1.0,
    "eager op": 1.0,
    "make_jaxpr 2000 ops": 0.7,
    "MLP first result": None,
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


def measure(module_name: str) -> dict[str, float]:
    # lamina loads its layers on first use, so "import" counts touching the runtime too.
    start = time.perf_counter()
    jax = __import__(module_name)
    jax.jit, jax.lax, jax.device_put  # noqa: B018
    import_s = time.perf_counter() - start

    import numpy as np

    lax = jax.lax
    x = jax.device_put(np.ones(8, np.float32))

    jitted = jax.jit(lambda v: v * 2 + 1)
    jitted(x).block_until_ready()
    dispatch_s = _best_per_call(lambda: jitted(x), 2000)
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
        "MLP first result": mlp_s,
    }


def _run(python: str, module_name: str) -> dict[str, float]:
    out = subprocess.run(
        [python, __file__, "--measure", module_name],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:9.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:9.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="a Python interpreter with JAX 0.10.2")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    ours = _run(sys.executable, "lamina")
    theirs = _run(args.jax_python, "jax") if args.jax_python else None
    print(f"{'benchmark':<22}{'lamina':>13}{'JAX':>13}{'ratio':>8}{'target':>8}")
    for name, value in ours.items():
        row = f"{name:<22}{_fmt(value):>13}"
        if theirs:
            target = TARGETS[name]
            row += f"{_fmt(theirs[name]):>13}{value / theirs[name]:>8.2f}"
            row += f"{'≤ ' + str(target) if target else '':>8}"
        print(row)


if __name__ == "__main__":
    main()
