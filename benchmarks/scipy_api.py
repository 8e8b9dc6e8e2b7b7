"""lamina.scipy benchmarks of issue 16: ``expm`` and ``minimize(method="BFGS")``.

    uv run python benchmarks/scipy_api.py [--jax-python PATH] [--repeats N] [--ops]

Each program is written once against the JAX API and runs with ``import lamina as jax``
and, given ``--jax-python`` (a Python with JAX 0.10.2, kept outside this repository),
with ``import jax``. Figures:

- ``jit(scipy.linalg.expm)`` of a 256×256 float32 matrix (norm about 20, so the
  squarings run);
- ``jit(minimize(rosenbrock, x0, method="BFGS"))`` in 100 dimensions (float32, up to 200
  iterations, from x0 = 1 + 0.1·N(0, 1) with seed 0, where both libraries take the same
  28 iterations; from 0 the float32 line search fails after 2).

For each: the steady-state call, and trace + lower + compile (after a small input went
through them, so that they count this program's work, not loading the library).

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown. ``--ops`` also counts the
operations of the StableHLO modules by kind, side by side.
"""

from __future__ import annotations

import importlib
import time

import harness
import numpy as np

EXPM_SIZE = 256
DIMENSION = 100
MAXITER = 200
# Figures of each probe, with the lamina / JAX ratio issue 16 asks for (None: no target).
PROBES = {
    "expm": {"expm: step": 1.0, "expm: trace+lower+compile": 1.0},
    "bfgs": {"bfgs rosenbrock: step": 1.0, "bfgs rosenbrock: trace+lower+compile": 1.0},
}


# --------------------------------------------------------------------------- programs


def expm_input(jax, n=EXPM_SIZE):
    rng = np.random.default_rng(0)
    return jax.device_put(rng.standard_normal((n, n), np.float32) / np.sqrt(n) * 2.0)


def bfgs_input(jax, n=DIMENSION):
    noise = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    return jax.device_put(np.float32(1.0) + np.float32(0.1) * noise)


def rosenbrock(jnp, x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _programs(jax):
    linalg = importlib.import_module(f"{jax.__name__}.scipy.linalg")
    optimize = importlib.import_module(f"{jax.__name__}.scipy.optimize")

    def bfgs(x0):
        found = optimize.minimize(
            lambda x: rosenbrock(jax.numpy, x), x0, method="BFGS", options={"maxiter": MAXITER}
        )
        return found.x, found.fun, found.nit

    return {"expm": (jax.jit(linalg.expm), expm_input), "bfgs": (jax.jit(bfgs), bfgs_input)}


# --------------------------------------------------------------------------- probes


def _stages_and_step(jax, name: str, label: str, calls: int) -> dict[str, float]:
    program, make_input = _programs(jax)[name]
    small = make_input(jax, 3)  # warm-up
    jax.block_until_ready(program.trace(small).lower().compile()(small))
    x = make_input(jax)
    start = time.perf_counter()
    compiled = program.trace(x).lower().compile()
    compile_time = time.perf_counter() - start
    return {
        f"{label}: step": harness.best_per_call(jax, lambda: compiled(x), calls),
        f"{label}: trace+lower+compile": compile_time,
    }


def probe_expm(jax) -> dict[str, float]:
    return _stages_and_step(jax, "expm", "expm", 30)


def probe_bfgs(jax) -> dict[str, float]:
    return _stages_and_step(jax, "bfgs", "bfgs rosenbrock", 10)


def probe_ops(jax) -> dict[str, dict[str, int]]:
    return {
        name: harness.count_ops(program.trace(make_input(jax)).lower().as_text())
        for name, (program, make_input) in _programs(jax).items()
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=38)
