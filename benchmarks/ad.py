"""Automatic-differentiation benchmarks of issue 4: jit(grad) of an MLP, per-example grads.

    uv run python benchmarks/ad.py [--jax-python PATH] [--repeats N] [--ops]

The program is a 784-512-512-10 ReLU MLP with a softmax cross-entropy loss, written once
against the JAX API with ``lax`` operations only (inputs are made with NumPy), and run
with ``import lamina as jax`` and, given ``--jax-python`` (a Python with JAX 0.10.2, kept
outside this repository), with ``import jax``. Figures:

- ``jit(grad(loss))`` for a batch of 256: the stages ``jitted.trace(...)``,
  ``.lower()`` and ``.compile()``, timed after a small program went through the same
  transformations (so they count this program's work, not loading and initialising the
  library); the whole first call ``jitted(...)`` in a process that has run nothing yet;
  and the steady-state step (best of several calls, each waited for);
- ``jit(vmap(grad(loss), in_axes=(None, 0, 0)))``, per-example gradients for a batch of
  128: the first result in a fresh process, and the steady-state step;
- ``grad(jit(loss))`` called eagerly: the steady-state step (the known and the
  transposed part of the jitted call each run as one executable).

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown. ``--ops`` also counts the
operations of the two StableHLO modules by kind, side by side.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = (784, 512, 512, 10)
BATCH = 256
PER_EXAMPLE_BATCH = 128
# Figures of each probe, with the lamina / JAX ratio issue 4 asks for (None: no target).
PROBES = {
    "stages": {
        "grad: trace": 0.7,
        "grad: lower": 0.7,
        "grad: compile": 1.0,
        "grad: step": 1.0,
    },
    "first": {"grad: first call": None},
    "per_example": {"per-example: first": 1.0, "per-example: step": 1.0},
    "grad_of_jit": {"grad(jit): step": None},
}


# --------------------------------------------------------------------------- the program


def loss(lax, params, x, y):
    """Softmax cross-entropy of the MLP's logits against one-hot ``y``; ``x`` is one
    example (784,) or a batch (B, 784)."""
    h = x
    last = h.ndim - 1
    lead = tuple(range(last))
    for i, (w, b) in enumerate(params):
        h = lax.dot_general(h, w, (((last,), (0,)), ((), ())))
        h = lax.add(h, lax.broadcast_in_dim(b, h.shape, (last,)))
        if i < len(params) - 1:
            h = lax.max(h, 0.0)
    shifted = lax.sub(h, lax.broadcast_in_dim(lax.reduce_max(h, (last,)), h.shape, lead))
    log_sum = lax.log(lax.reduce_sum(lax.exp(shifted), (last,)))
    log_probs = lax.sub(shifted, lax.broadcast_in_dim(log_sum, h.shape, lead))
    return lax.neg(lax.reduce_sum(lax.mul(log_probs, y), tuple(range(h.ndim))))


def inputs(jax, sizes=SIZES, batch=BATCH):
    import numpy as np

    rng = np.random.default_rng(0)
    params = [
        (
            jax.device_put(rng.standard_normal((m, n), np.float32) * 0.05),
            jax.device_put(np.zeros(n, np.float32)),
        )
        for m, n in itertools.pairwise(sizes)
    ]
    x = jax.device_put(rng.standard_normal((batch, sizes[0]), np.float32))
    labels = rng.integers(0, sizes[-1], batch)
    y = jax.device_put(np.eye(sizes[-1], dtype=np.float32)[labels])
    return params, x, y


def _best_per_call(jax, fn, calls: int) -> float:
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best


def _programs(jax):
    """``jit(grad(loss))`` and ``jit(vmap(grad(loss), in_axes=(None, 0, 0)))``."""

    def mlp_loss(params, x, y):
        return loss(jax.lax, params, x, y)

    grad_loss = jax.grad(mlp_loss)
    return jax.jit(grad_loss), jax.jit(jax.vmap(grad_loss, in_axes=(None, 0, 0)))


# --------------------------------------------------------------------------- probes


def probe_stages(jax) -> dict[str, float]:
    grad_step, _ = _programs(jax)
    small = inputs(jax, sizes=(6, 5, 4), batch=3)  # warm-up: every stage, once
    jax.block_until_ready(grad_step.trace(*small).lower().compile()(*small))
    args = inputs(jax)
    start = time.perf_counter()
    traced = grad_step.trace(*args)
    traced_at = time.perf_counter()
    lowered = traced.lower()
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    compiled_at = time.perf_counter()
    return {
        "grad: trace": traced_at - start,
        "grad: lower": lowered_at - traced_at,
        "grad: compile": compiled_at - lowered_at,
        "grad: step": _best_per_call(jax, lambda: compiled(*args), 50),
    }


def probe_first(jax) -> dict[str, float]:
    grad_step, _ = _programs(jax)
    args = inputs(jax)
    start = time.perf_counter()
    jax.block_until_ready(grad_step(*args))
    return {"grad: first call": time.perf_counter() - start}


def probe_per_example(jax) -> dict[str, float]:
    _, per_example = _programs(jax)
    args = inputs(jax, batch=PER_EXAMPLE_BATCH)
    start = time.perf_counter()
    jax.block_until_ready(per_example(*args))
    first = time.perf_counter() - start
    return {
        "per-example: first": first,
        "per-example: step": _best_per_call(jax, lambda: per_example(*args), 8),
    }


def probe_grad_of_jit(jax) -> dict[str, float]:
    grad_step = jax.grad(jax.jit(lambda params, x, y: loss(jax.lax, params, x, y)))
    args = inputs(jax)
    jax.block_until_ready(grad_step(*args))
    return {"grad(jit): step": _best_per_call(jax, lambda: grad_step(*args), 20)}


_OP = re.compile(r"^\s*(?:%[^=]*= )?\"?([a-z_]+\.[a-z_]+)")
_NOT_COUNTED = {"func.return", "stablehlo.return"}


def count_ops(text: str) -> dict[str, int]:
    """Operations of an MLIR module by name (one per line; returns not counted)."""
    counts = collections.Counter()
    for line in text.splitlines():
        match = _OP.match(line)
        if match and match.group(1) not in _NOT_COUNTED:
            counts[match.group(1)] += 1
    return dict(counts)


def probe_ops(jax) -> dict[str, dict[str, int]]:
    grad_step, per_example = _programs(jax)
    return {
        "jit(grad(loss))": count_ops(grad_step.trace(*inputs(jax)).lower().as_text()),
        "per-example": count_ops(
            per_example.trace(*inputs(jax, batch=PER_EXAMPLE_BATCH)).lower().as_text()
        ),
    }


def measure(probe: str, module_name: str):
    jax = __import__(module_name)
    return globals()[f"probe_{probe}"](jax)


# --------------------------------------------------------------------------- driver


def _run(python: str, probe: str, module_name: str):
    out = subprocess.run(
        [python, __file__, "--measure", probe, module_name],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:9.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:9.1f} ms"


def _keep_best(best: dict, figures: dict) -> None:
    for name, value in figures.items():
        best[name] = min(best.get(name, value), value)


def _print_ops(jax_python):
    ours = _run(sys.executable, "ops", "lamina")
    theirs = _run(jax_python, "ops", "jax") if jax_python else None
    for program, counts in ours.items():
        other = theirs[program] if theirs else {}
        print(f"\nStableHLO operations of {program}:")
        print(f"  {'op':<30}{'lamina':>8}{'JAX':>8}" if theirs else f"  {'op':<30}{'lamina':>8}")
        for op in sorted(set(counts) | set(other)):
            row = f"  {op:<30}{counts.get(op, 0):>8}"
            if theirs:
                row += f"{other.get(op, 0):>8}"
            print(row)
        total = f"  {'total':<30}{sum(counts.values()):>8}"
        print(total + (f"{sum(other.values()):>8}" if theirs else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="a Python interpreter with JAX 0.10.2")
    parser.add_argument("--repeats", type=int, default=1, help="runs per probe (best shown)")
    parser.add_argument("--ops", action="store_true", help="also compare the modules' ops")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure)))
        return
    ours, theirs = {}, {}
    for probe in PROBES:
        for _ in range(args.repeats):  # alternate, so that load on the machine hits both
            _keep_best(ours, _run(sys.executable, probe, "lamina"))
            if args.jax_python:
                _keep_best(theirs, _run(args.jax_python, probe, "jax"))
    print(f"{'benchmark':<22}{'lamina':>13}{'JAX':>13}{'ratio':>8}{'target':>8}")
    targets = {name: t for figures in PROBES.values() for name, t in figures.items()}
    for name, value in ours.items():
        row = f"{name:<22}{_fmt(value):>13}"
        if theirs:
            target = targets[name]
            row += f"{_fmt(theirs[name]):>13}{value / theirs[name]:>8.2f}"
            row += f"{'≤ ' + str(target) if target else '':>8}"
        print(row)
    if args.ops:
        _print_ops(args.jax_python)


if __name__ == "__main__":
    main()
