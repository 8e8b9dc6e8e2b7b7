"""The driver the probe-based benchmarks share (ad.py, lax.py): each probe runs in a
fresh subprocess of the benchmark script, against lamina and, given a Python with JAX
0.10.2, against JAX; the best of the repeats is shown beside JAX's with the ratio."""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_OP = re.compile(r"^\s*(?:%[^=]*= )?\"?([a-z_]+\.[a-z_]+)")
_NOT_COUNTED = {"func.return", "stablehlo.return"}


def best_per_call(jax, fn, calls: int) -> float:
    """The fastest of ``calls`` calls of ``fn``, each waited for."""
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best


def count_ops(text: str) -> dict[str, int]:
    """Operations of an MLIR module by name (one per line; returns not counted)."""
    counts = collections.Counter()
    for line in text.splitlines():
        match = _OP.match(line)
        if match and match.group(1) not in _NOT_COUNTED:
            counts[match.group(1)] += 1
    return dict(counts)


# Probes import from bytecode, as an installed package does, even where the
# environment asks Python not to write it (without it every import compiles lamina's
# sources, which more than doubles the import time). They also run with the persistent
# compilation cache off, which lamina turns on by default and JAX does not: compile
# times are XLA compiling, for both libraries (benchmarks/compilation_cache.py measures
# the cache).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
_ENV["JAX_ENABLE_COMPILATION_CACHE"] = "0"


def warm_cache_env(directory: str) -> dict:
    """The environment of a probe run with lamina's persistent compilation cache on, as
    users have it by default, kept in ``directory``."""
    env = {k: v for k, v in _ENV.items() if k != "JAX_ENABLE_COMPILATION_CACHE"}
    env["JAX_COMPILATION_CACHE_DIR"] = directory
    return env


def _run(script: str, python: str, probe: str, module_name: str, env: dict | None = None):
    out = subprocess.run(
        [python, script, "--measure", probe, module_name],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=_ENV if env is None else env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# Seconds the probe's process took to import the library under test (``--measure``).
import_seconds = 0.0


def fmt(value: float, name: str = "") -> str:
    """A figure for the table: MiB where the name says so, a count for growths of
    counts, else a time given in seconds."""
    if "MiB" in name:
        return f"{value:9.2f} MiB"
    if "growth" in name:
        return f"{value:9.0f}    "
    if value >= 1:
        return f"{value:9.2f} s "
    return f"{value * 1e6:9.1f} µs" if value < 1e-3 else f"{value * 1e3:9.1f} ms"


def ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}" if theirs else ("1.00" if ours == theirs else "—")


def run(script: str, python: str, probe: str, module_name: str, env: dict | None = None) -> dict:
    """The figures of ``probe`` of ``script``, measured in a fresh ``python`` process
    against ``module_name`` (``lamina`` or ``jax``), in ``env`` if given (else with the
    persistent compilation cache off)."""
    return _run(script, python, probe, module_name, env)


def keep_best(best: dict, figures: dict) -> None:
    """Keeps in ``best`` the lowest value seen of each figure."""
    _keep_best(best, figures)


def _keep_best(best: dict, figures: dict) -> None:
    for name, value in figures.items():
        best[name] = min(best.get(name, value), value)


def _print_ops(script: str, jax_python):
    ours = _run(script, sys.executable, "ops", "lamina")
    theirs = _run(script, jax_python, "ops", "jax") if jax_python else None
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


def main(script: str, doc: str, probes: dict, namespace: dict, width: int = 26) -> None:
    """Runs the benchmark ``script``: ``probes`` maps each probe to its figures and their
    targets; ``namespace`` (the script's globals) holds ``probe_<name>(jax)``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--jax-python", help="a Python interpreter with JAX 0.10.2")
    parser.add_argument("--repeats", type=int, default=1, help="runs per probe (best shown)")
    parser.add_argument("--ops", action="store_true", help="also compare the modules' ops")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        global import_seconds
        probe, module_name = args.measure
        start = time.perf_counter()
        module = __import__(module_name)
        import_seconds = time.perf_counter() - start
        print(json.dumps(namespace[f"probe_{probe}"](module)))
        return
    ours, theirs = {}, {}
    for probe in probes:
        for _ in range(args.repeats):  # alternate, so that load on the machine hits both
            _keep_best(ours, _run(script, sys.executable, probe, "lamina"))
            if args.jax_python:
                _keep_best(theirs, _run(script, args.jax_python, probe, "jax"))
    print(f"{'benchmark':<{width}}{'lamina':>13}{'JAX':>13}{'ratio':>8}{'target':>8}")
    targets = {name: t for figures in probes.values() for name, t in figures.items()}
    for name, value in ours.items():
        row = f"{name:<{width}}{fmt(value, name):>13}"
        if theirs:
            target = targets[name]
            row += f"{fmt(theirs[name], name):>13}{ratio(value, theirs[name]):>8}"
            row += f"{'≤ ' + str(target) if target else '':>8}"
        print(row)
    if args.ops:
        _print_ops(script, args.jax_python)
