"""scipy.optimize benchmark of issue 16: ``minimize(method="BFGS")`` on Rosenbrock.

    uv run python benchmarks/scipy_optimize.py [--jax-python PATH] [--repeats N] [--ops]

The program is written once against the JAX API and runs with ``import lamina as jax``
and, given ``--jax-python`` (a Python with JAX 0.10.2, kept outside this repository),
with ``import jax``. Figures, for ``jit(minimize(rosenbrock, x0, method="BFGS"))`` in
100 dimensions (float32, up to 200 iterations, from x0 = 1 + 0.1·N(0, 1) with seed 0,
where both libraries take the same 28 iterations; from 0 the float32 line search fails
after 2):

- ``trace+lower+compile``: the three stages after a small program went through them, so
  that they count this program's work, not loading the library;
- ``step``: the steady-state call.

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown. ``--ops`` also counts the
operations of the StableHLO modules by kind, side by side.
"""

from __future__ import annotations

import importlib
import time

import harness

DIMENSION = 100
MAXITER = 200
PROBES = {
    "bfgs": {"bfgs rosenbrock: trace+lower+compile": 1.0, "bfgs rosenbrock: step": 1.0},
}


def rosenbrock(jnp, x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _program(jax):
    optimize = importlib.import_module(f"{jax.__name__}.scipy.optimize")
    jnp = jax.numpy

    def solve(x0):
        found = optimize.minimize(
            lambda x: rosenbrock(jnp, x), x0, method="BFGS", options={"maxiter": MAXITER}
        )
        return found.x, found.fun, found.nit

    return jax.jit(solve)


def _start(jax, n=DIMENSION):
    import numpy as np

    noise = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    return jax.device_put(np.float32(1.0) + np.float32(0.1) * noise)


def probe_bfgs(jax) -> dict[str, float]:
    solve = _program(jax)
    small = _start(jax, 3)  # warm-up
    jax.block_until_ready(solve.trace(small).lower().compile()(small))
    x0 = _start(jax)
    start = time.perf_counter()
    compiled = solve.trace(x0).lower().compile()
    compile_time = time.perf_counter() - start
    return {
        "bfgs rosenbrock: trace+lower+compile": compile_time,
        "bfgs rosenbrock: step": harness.best_per_call(jax, lambda: compiled(x0), 10),
    }


def probe_ops(jax) -> dict[str, dict[str, int]]:
    return {
        "bfgs rosenbrock": harness.count_ops(_program(jax).trace(_start(jax)).lower().as_text())
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=38)
