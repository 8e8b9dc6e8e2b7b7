"""lamina.scipy benchmarks of issue 16.

    uv run python benchmarks/scipy_api.py [--jax-python PATH] [--repeats N] [--ops]

Each program is written once against the JAX API and runs with ``import lamina as jax``
and, given ``--jax-python`` (a Python with JAX 0.10.2, kept outside this repository),
with ``import jax``. Figures:

- ``jit(scipy.linalg.expm)`` of a 256×256 float32 matrix (norm about 20, so the
  squarings run): the steady-state call, and trace + lower + compile (after a small
  matrix went through them, so that they count this program's work, not loading the
  library).

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown. ``--ops`` also counts the
operations of the StableHLO modules by kind, side by side.
"""

from __future__ import annotations

import importlib
import time

import harness

EXPM_SIZE = 256
# Figures of each probe, with the lamina / JAX ratio issue 16 asks for (None: no target).
PROBES = {
    "expm": {"expm: step": 1.0, "expm: trace+lower+compile": 1.0},
}


# --------------------------------------------------------------------------- programs


def expm_inputs(jax, n=EXPM_SIZE):
    import numpy as np

    rng = np.random.default_rng(0)
    return jax.device_put(rng.standard_normal((n, n), np.float32) / np.sqrt(n) * 2.0)


def _programs(jax):
    linalg = importlib.import_module(f"{jax.__name__}.scipy.linalg")
    return {"expm": jax.jit(linalg.expm)}


def _program_inputs(jax):
    return {"expm": (expm_inputs(jax),)}


# --------------------------------------------------------------------------- probes


def probe_expm(jax) -> dict[str, float]:
    expm = _programs(jax)["expm"]
    small = expm_inputs(jax, n=3)  # warm-up
    jax.block_until_ready(expm.trace(small).lower().compile()(small))
    a = expm_inputs(jax)
    start = time.perf_counter()
    compiled = expm.trace(a).lower().compile()
    compile_time = time.perf_counter() - start
    return {
        "expm: step": harness.best_per_call(jax, lambda: compiled(a), 30),
        "expm: trace+lower+compile": compile_time,
    }


def probe_ops(jax) -> dict[str, dict[str, int]]:
    programs, inputs = _programs(jax), _program_inputs(jax)
    return {
        name: harness.count_ops(program.trace(*inputs[name]).lower().as_text())
        for name, program in programs.items()
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=28)
