"""The whole test suite: ``uv run python tools/run_tests.py [PYTEST OPTIONS...]``.

Steps, in order:

1. the layering check (tools/layering.py);
2. each layer's tests, lowest layer first, in an environment holding only that layer, its
   declared dependencies and pytest:
   ``uv run --package lamina-<layer> --isolated pytest packages/<layer>/tests``;
3. the root tests over the assembled library: ``uv run pytest tests``.

Options (``-x``, ``-k EXPR``, ``-v``, ...) are passed to every pytest run; with ``-x`` the
runner also stops after the first failing step. A layer whose run collects no tests fails
(every layer has tests), unless its tests were all deselected by ``-k``/``-m``.

The last line printed is ``N passed, M failed`` (``, K skipped`` when K > 0), summed over
every pytest run; M also counts one for each step that failed without a failing test of its
own (a layering violation, no tests collected, a crash). The exit status is 0 only when
every step passed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

import layering  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;]*m")
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)\b")
NO_TESTS_COLLECTED = 5  # pytest's exit status


@dataclass
class Step:
    name: str
    ok: bool
    closing: str  # pytest's closing line, or what the step found
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def failures(self) -> int:
        """Failed tests and errors; at least one when the step failed."""
        found = self.counts.get("failed", 0) + self.counts.get("errors", 0)
        return found if self.ok or found else 1


def parse_summary(output: str) -> tuple[str, dict[str, int]]:
    """pytest's closing line (``3 passed, 1 skipped in 0.12s``) and its counts."""
    for raw in reversed(ANSI.sub("", output).splitlines()):
        line = raw.strip().strip("=").strip()
        if re.search(r"\bin \d+(\.\d+)?s\b", line) and (
            COUNT.match(line) or line.startswith("no tests ran")
        ):
            counts: dict[str, int] = {}
            for number, word in COUNT.findall(line):
                word = "errors" if word == "error" else word
                counts[word] = counts.get(word, 0) + int(number)
            return line, counts
    return "", {}


def total_line(steps: list[Step]) -> str:
    """``N passed, M failed`` (``, K skipped`` when K > 0) over all steps."""
    passed = sum(step.counts.get("passed", 0) for step in steps)
    failed = sum(step.failures for step in steps)
    skipped = sum(step.counts.get("skipped", 0) for step in steps)
    line = f"{passed} passed, {failed} failed"
    return f"{line}, {skipped} skipped" if skipped else line


def layer_order(packages: list[layering.Package]) -> list[str]:
    """The layers, each after the layers it declares (table order breaks ties)."""
    deps = {pkg.layer: pkg.declared_layers for pkg in packages if pkg.layer is not None}

    def rank(layer: str) -> tuple[int, str]:
        known = layer in layering.LAYERS
        return (layering.LAYERS.index(layer) if known else len(layering.LAYERS), layer)

    order: list[str] = []

    def visit(layer: str, path: frozenset[str]) -> None:
        if layer in order or layer in path or layer not in deps:
            return  # done, a cycle (the layering check reports it), or not a package here
        for dep in sorted(deps[layer], key=rank):
            visit(dep, path | {layer})
        order.append(layer)

    for layer in sorted(deps, key=rank):
        visit(layer, frozenset())
    return order


def run_layering() -> Step:
    print("== layering check: tools/layering.py", flush=True)
    violations, stats = layering.run(REPO)
    for violation in violations:
        print(violation)
    if violations:
        return Step("layering", False, f"{len(violations)} violation(s)")
    summary = f"{stats.packages} packages, {stats.files} files, {stats.imports} imports: ok"
    print(summary, flush=True)
    return Step("layering", True, summary)


def run_pytest(name: str, command: list[str], env: dict[str, str], selecting: bool) -> Step:
    print(f"\n== {name}: {' '.join(command[1:])}", flush=True)
    try:
        proc = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
    except OSError as err:
        print(err)
        return Step(name, False, f"could not run: {err}")
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:  # show it as it comes, and keep it to read the summary
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    status = proc.wait()
    closing, counts = parse_summary("".join(lines))
    ok = status == 0
    if status == NO_TESTS_COLLECTED:
        ok = selecting and counts.get("deselected", 0) > 0  # tests exist, -k/-m left none
        if not ok:
            closing = f"{closing or 'no tests ran'} (exit 5: no tests collected)"
    elif status != 0 and not closing:
        closing = f"exit status {status}, no pytest summary"
    print(f"== {name}: {closing}", flush=True)
    return Step(name, ok, closing, counts)


def main(argv: list[str] | None = None) -> int:
    pytest_args = sys.argv[1:] if argv is None else argv
    stop_early = any(a in ("-x", "--exitfirst") or a.startswith("--maxfail") for a in pytest_args)
    selecting = any(a.startswith(("-k", "-m")) for a in pytest_args)
    uv = shutil.which("uv") or os.environ.get("UV")
    if uv is None:
        print("run_tests: `uv` is not on PATH; install it (python3 -m pip install uv)")
        return 2
    env = dict(os.environ)
    if (REPO / "uv.lock").is_file():
        env["UV_FROZEN"] = "1"  # use the committed lock as it is, without re-resolving

    start = time.monotonic()
    steps = [run_layering()]
    runs = []  # (step name, command)
    for layer in layer_order(layering.read_packages(REPO)):
        isolated = [uv, "run", "--package", f"lamina-{layer}", "--isolated"]
        runs.append((f"lamina-{layer}", [*isolated, "pytest", f"packages/{layer}/tests"]))
    runs.append(("root tests", [uv, "run", "pytest", "tests"]))
    for name, command in runs:
        if stop_early and not steps[-1].ok:
            break
        began = time.monotonic()
        steps.append(run_pytest(name, [*command, *pytest_args], env, selecting))
        steps[-1].seconds = time.monotonic() - began

    failed = [step for step in steps if not step.ok]
    width = max(len(step.name) for step in steps)
    print(f"\n== summary ({time.monotonic() - start:.1f}s)")
    for step in steps:
        took = f"{step.seconds:5.1f}s" if step.seconds else " " * 6
        print(f"{'ok  ' if step.ok else 'FAIL'}  {step.name:<{width}}  {took}  {step.closing}")
    if len(steps) < len(runs) + 1:
        print(f"(stopped after the first failing step: {len(runs) + 1 - len(steps)} not run)")
    print(total_line(steps))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
