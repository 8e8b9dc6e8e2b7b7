"""The whole benchmark table: every figure of the benchmark scripts, lamina beside JAX.

    uv run python benchmarks/table.py [--jax-python PATH] [--repeats N] [--only TEXT]

Runs the probes of runtime.py, ad.py, lax.py, numpy_api.py, random_nn.py, scaling.py
and memory.py, each in a fresh subprocess; with ``--jax-python`` (a Python with JAX
0.10.2) every probe runs against JAX right after lamina, so that load on the machine
hits both, ``--repeats`` times (default 2), and the best of each figure is shown with
the lamina / JAX ratio, the target, and the geometric mean of the time ratios. The
targets: at most 0.5× JAX where the time is lamina's own Python (tracing, lowering,
dispatch), at most 0.95× for the other times, at most 1.0× for peak memory. ``--only``
keeps the probes whose ``script:probe`` name contains TEXT. The load average is
printed before and after.

Every probe runs with the persistent compilation cache off, so that compile and
first-call figures are XLA compiling for both libraries. lamina's cache is on by
default, so the first-call figures also get a "warm cache" row: lamina with its cache
on, filled by one earlier run of the same probe, against JAX with its default settings
(no persistent cache), the same JAX figure as the cold row's. Those rows stay out of
the geometric mean.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile

import ad
import harness
import lax as lax_bench
import memory
import numpy_api
import random_nn
import runtime
import scaling

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = (runtime, ad, lax_bench, numpy_api, random_nn, scaling, memory)
# Figures that time lamina's own Python: the target there is half of JAX's time.
OWN_CODE = {
    "jit dispatch",
    "eager op",
    "make_jaxpr 2000 ops",
    "grad: trace",
    "grad: lower",
    "rnn: trace",
    "rnn: lower",
    "transformer: trace",
    "transformer: lower",
    "pytree dispatch (1000 leaves)",
}
# First-call figures, also measured with lamina's persistent compilation cache warm.
FIRST_CALLS = (
    "MLP first result",
    "grad: first call",
    "per-example: first",
    "rnn: trace+lower+compile",
    "transformer: first call",
    "vmap while: first call",
)
WARM = " (lamina warm cache)"
# Figures with no ratio target (their JAX value is 0, or they are counts).
UNTARGETED = {
    "donation: reused (MiB)",
    "donation: live growth (MiB)",
    "eager 100k: RSS growth (MiB)",
    "eager 100k: live arrays growth",
}


def target(name: str) -> float | None:
    name = name.removesuffix(WARM)
    if name in UNTARGETED:
        return None
    if "MiB" in name:
        return 1.0
    return 0.5 if name in OWN_CODE else 0.95


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="a Python interpreter with JAX 0.10.2")
    parser.add_argument("--repeats", type=int, default=2, help="runs per probe (best shown)")
    parser.add_argument("--only", help="run only probes whose script:probe contains this")
    args = parser.parse_args()
    print(_load(), flush=True)
    ours, theirs, order = {}, {}, []
    cache_dir = tempfile.TemporaryDirectory(prefix="lamina-table-cache-")
    warm_env = harness.warm_cache_env(cache_dir.name)
    for script in SCRIPTS:
        path = os.path.join(HERE, os.path.basename(script.__file__))
        name = os.path.splitext(os.path.basename(path))[0]
        for probe in script.PROBES:
            if args.only and args.only not in f"{name}:{probe}":
                continue
            figures = script.PROBES[probe]
            firsts = [f for f in figures if f in FIRST_CALLS]
            for f in figures:
                order += [f] if f not in order else []
                order += [f + WARM] if f in firsts else []
            if firsts:  # fills the cache
                harness.run(path, sys.executable, probe, "lamina", warm_env)
            for _ in range(args.repeats):
                harness.keep_best(ours, harness.run(path, sys.executable, probe, "lamina"))
                if args.jax_python:
                    harness.keep_best(theirs, harness.run(path, args.jax_python, probe, "jax"))
                if firsts:
                    warm = harness.run(path, sys.executable, probe, "lamina", warm_env)
                    harness.keep_best(ours, {f + WARM: warm[f] for f in firsts})
    cache_dir.cleanup()
    for f in FIRST_CALLS:
        if f in theirs:
            theirs[f + WARM] = theirs[f]
    print(f"{'figure':<42}{'lamina':>14}{'JAX':>14}{'ratio':>8}{'target':>8}")
    ratios = []
    for name in order:
        if name not in ours:
            continue
        row = f"{name:<42}{harness.fmt(ours[name], name):>14}"
        if args.jax_python:
            goal = target(name)
            row += f"{harness.fmt(theirs[name], name):>14}"
            row += f"{harness.ratio(ours[name], theirs[name]):>8}"
            row += f"{'≤ ' + str(goal) if goal else '':>8}"
            if goal and "MiB" not in name and theirs[name] and WARM not in name:
                ratios.append(ours[name] / theirs[name])
        print(row)
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"{'geomean of time ratios':<42}{'':>28}{geomean:>8.2f}{'≤ 0.6':>8}")
    if any(WARM in name for name in ours):
        print(f"{WARM.strip()}: lamina's persistent compilation cache on (its default), filled")
        print("by an earlier run; JAX with its defaults (no persistent cache), as in the cold row")
    print(_load())


if __name__ == "__main__":
    main()
