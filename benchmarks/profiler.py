"""Profiler benchmarks of issue 20: what annotations cost when no trace runs.

    uv run python benchmarks/profiler.py [--jax-python PATH]

Per call, best of several runs: entering and leaving a ``TraceAnnotation``, a
``StepTraceAnnotation`` with a step number, and calling an ``annotate_function``-wrapped
function (less the bare call). Each side runs in a fresh subprocess; with
``--jax-python`` (a Python with JAX 0.10.2) JAX's figures are shown beside lamina's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_S = 1e-6  # per call, with no trace running
CALLS = 50_000


def _best(fn, repeats: int = 15) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, (time.perf_counter() - start) / CALLS)
    return best


def measure(module_name: str) -> dict[str, float]:
    profiler = __import__(module_name + ".profiler", fromlist=["profiler"])
    annotation, step_annotation = profiler.TraceAnnotation, profiler.StepTraceAnnotation
    calls = range(CALLS)

    def plain():
        return None

    annotated = profiler.annotate_function(plain)

    def loop_annotation():
        for _ in calls:
            with annotation("span"):
                pass

    def loop_step():
        for i in calls:
            with step_annotation("train", step_num=i):
                pass

    def loop_plain():
        for _ in calls:
            plain()

    def loop_annotated():
        for _ in calls:
            annotated()

    bare = _best(loop_plain)
    return {
        "TraceAnnotation enter/exit": _best(loop_annotation),
        "StepTraceAnnotation(step_num)": _best(loop_step),
        "annotate_function call": _best(loop_annotated) - bare,
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
    print(f"{'per call, no trace running':<32}{'lamina':>10}{'JAX':>10}{'ratio':>8}{'target':>9}")
    for name, value in ours.items():
        row = f"{name:<32}{value * 1e9:>7.0f} ns"
        row += f"{theirs[name] * 1e9:>7.0f} ns{value / theirs[name]:>8.2f}" if theirs else ""
        row += f"{'≤ 1 µs':>9}" + ("" if value <= TARGET_S else "  (over)")
        print(row)


if __name__ == "__main__":
    main()
