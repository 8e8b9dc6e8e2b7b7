"""The programs in examples/, each run at its small size (``--small``) in a process of its
own, all started at once. Each example checks its own results (it fails otherwise);
the tests also compare the figures it prints with the same run on JAX 0.10.2 (the
example with ``import jax`` in place of ``import lamina as jax``), recorded below."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# The line each example ends with, at --small, recorded from JAX 0.10.2 (CPU).
RECORDED = {
    "transformer_lm": "ok: loss 3.486 -> 1.327",
    "mlp_classifier": "ok: loss 0.7398 -> 0.0005, test accuracy 1.000",
    "gaussian_process": "likelihood 36.022 -> -5.846; posterior mean max error 0.115",
    "physics_ode": "large swing: energy 1.801144, largest drift 5.25e-06",
    "per_example_gradients": "loss 0.6931 -> 0.1561, accuracy 0.977",
    "data_parallel": "ok: loss 0.8377 -> 0.3939",
    "pallas_kernel": "row sums 1.000000..1.000000",
    "export_model": "trained: loss 1.8489 -> 0.4682",
}

_runs: dict[str, subprocess.Popen] = {}


def _start_all():
    env = {k: v for k, v in os.environ.items() if not k.startswith("XLA_FLAGS")}
    for name in [*RECORDED, "demo"]:
        args = [] if name == "demo" else ["--small"]
        _runs[name] = subprocess.Popen(
            [sys.executable, str(EXAMPLES / f"{name}.py"), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )


def _output(name):
    if not _runs:
        _start_all()
    process = _runs[name]
    out, _ = process.communicate(timeout=300)
    assert process.returncode == 0, out[-3000:]
    return out


NUMBER = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_example_gives_jaxs_figures(name):
    out = _output(name)
    want = RECORDED[name]
    (line,) = [x for x in out.splitlines() if NUMBER.sub("#", x) == NUMBER.sub("#", want)]
    got = [float(x) for x in NUMBER.findall(line)]
    expected = [float(x) for x in NUMBER.findall(want)]
    assert got == pytest.approx(expected, rel=2e-2, abs=2e-3), (line, want)
    assert out.splitlines()[-1].startswith("ok:")


def test_transformer_reports_progress():
    out = _output("transformer_lm")
    steps = re.findall(r"^step +(\d+) +loss ([\d.]+)(?:.*?([\d,]+) tokens/s)?", out, re.M)
    assert [int(s) for s, _, _ in steps] == [1, 15, 30, 45, 60, 75, 90, 105, 120, 135, 150]
    assert all(float(rate.replace(",", "")) > 0 for _, _, rate in steps[1:])
    assert "(compiled in" in out.splitlines()[1]


def test_demo():
    out = _output("demo")
    assert "parsed back, equal to the original: True" in out
    assert "matches NumPy, eagerly and under jit" in out
