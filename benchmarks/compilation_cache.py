"""The persistent compilation cache: time from a fresh process's start to its first
training step, lamina with a warm cache against JAX 0.10.2 with its cache off.

    uv run python benchmarks/compilation_cache.py --jax-python PATH [--repeats N]

The training script is examples/transformer_lm.py at full size (with ``import jax`` for
JAX): a process starts, imports the library, builds the corpus and the parameters, and
runs one jitted training step, reading its loss. Each run is a fresh process; the
figure is the wall time from starting it to that loss. lamina runs once with an empty
cache directory (cold: it compiles and writes every program), then ``--repeats`` times
with that directory (warm: it loads them); JAX runs with
``JAX_ENABLE_COMPILATION_CACHE=false``. Target: lamina warm ≤ 0.3 × JAX cold. The
best of the repeats is shown.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "transformer_lm.py"


def child(module: str) -> None:
    """Run the training script's set-up and first step; print the time it ended."""
    source = SCRIPT.read_text()
    if module == "jax":
        source = re.sub(r"\blamina\b", "jax", source)
    namespace = {"__name__": "transformer_lm"}
    exec(compile(source, str(SCRIPT), "exec"), namespace)
    (_, _, batch_size), corpus, params, opt_state, train_step = namespace["setup"]()
    _, _, loss = train_step(params, opt_state, corpus[:batch_size])
    float(loss)
    print(f"first-step-at {time.time()!r} loss {float(loss)!r}")


def first_step_seconds(python: str, module: str, env: dict) -> tuple[float, str]:
    start = time.time()
    out = subprocess.run(
        [python, __file__, "--child", module],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=ROOT,
    ).stdout
    match = re.search(r"first-step-at (\S+) loss (\S+)", out)
    return float(match.group(1)) - start, match.group(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="a Python interpreter with JAX 0.10.2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    base = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_FLAGS"))}
    base["JAX_PLATFORMS"] = "cpu"
    with tempfile.TemporaryDirectory() as directory:
        on = {**base, "JAX_COMPILATION_CACHE_DIR": directory}
        off = {**base, "JAX_ENABLE_COMPILATION_CACHE": "false"}
        cold, loss = first_step_seconds(sys.executable, "lamina", on)
        entries = len(list(Path(directory).glob("*-cache")))
        warm, uncached, theirs = [], [], []
        for _ in range(args.repeats):  # alternate, so that load on the machine hits all
            seconds, warm_loss = first_step_seconds(sys.executable, "lamina", on)
            warm.append(seconds)
            assert warm_loss == loss, (warm_loss, loss)
            uncached.append(first_step_seconds(sys.executable, "lamina", off)[0])
            if args.jax_python:
                seconds, jax_loss = first_step_seconds(args.jax_python, "jax", off)
                theirs.append(seconds)
                assert jax_loss == loss, (jax_loss, loss)
    print(f"time to the first training step of {SCRIPT.name} (fresh process, best of runs)")
    print(f"  lamina, cache off                 {min(uncached):7.2f} s")
    print(f"  lamina, empty cache (writes {entries:3d})  {cold:7.2f} s")
    print(f"  lamina, warm cache                {min(warm):7.2f} s")
    if theirs:
        ratio = min(warm) / min(theirs)
        print(f"  JAX 0.10.2, cache off             {min(theirs):7.2f} s")
        print(f"  lamina warm / JAX cold            {ratio:7.2f}   (target ≤ 0.3)")
    print(f"  first loss {loss} (lamina, warm and cold{', JAX' if theirs else ''} agree)")


if __name__ == "__main__":
    main()
