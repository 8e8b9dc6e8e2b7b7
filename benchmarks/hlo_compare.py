"""Side-by-side operation counts of the modules lamina and JAX build for one program.

    uv run python benchmarks/hlo_compare.py [PROGRAM ...] [--jax-python PATH]
        [--optimized] [--dump DIR] [--list]

For each named benchmark program (default: all; ``--list`` names them) the StableHLO
module of ``jitted.trace(*args).lower()`` is counted by operation kind, split by where
the operation runs: the top level, a ``while`` condition or a ``while`` body (nested
loops are shown as ``while body/while body``). Functions reached through ``func.call``
count where they are called, once per call, as if inlined. ``--optimized`` also counts
the HLO that XLA's passes leave (``.compile().as_text()``): the instructions of each
computation that runs, with fusions as one instruction each (``fusion:kLoop`` ...), by
the same places. ``--dump DIR`` writes both sides' texts there, to diff them.

With ``--jax-python`` (a Python with JAX 0.10.2) the same program is built by JAX in a
subprocess and its counts are shown beside lamina's; rows that differ are marked ``*``.
The programs are those of the other benchmark scripts, which this one imports.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys

import ad
import lax as lax_bench
import random_nn
import scaling

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> (jax -> (jitted function, arguments))
PROGRAMS = {
    "mlp-grad": lambda jax: (ad.programs(jax)[0], ad.inputs(jax)),
    "per-example": lambda jax: (ad.programs(jax)[1], ad.inputs(jax, batch=ad.PER_EXAMPLE_BATCH)),
    "rnn-grad": lambda jax: (lax_bench.programs(jax)["rnn"], lax_bench.rnn_inputs(jax)),
    "cnn-forward": lambda jax: (lax_bench.programs(jax)["cnn forward"], lax_bench.cnn_inputs(jax)),
    "cnn-grad": lambda jax: (lax_bench.programs(jax)["cnn grad"], lax_bench.cnn_inputs(jax)),
    "cholesky-solve": lambda jax: (
        lax_bench.programs(jax)["cholesky+solve"],
        lax_bench.linalg_inputs(jax),
    ),
    "attention-forward": lambda jax: random_nn.attention(jax)[0:3:2],
    "attention-grad": lambda jax: random_nn.attention(jax)[1:3],
    "normal": lambda jax: random_nn.normal(jax),
    "transformer-step": lambda jax: scaling.transformer(jax),
    "fori-loop": lambda jax: scaling.fori(jax),
    "vmap-while": lambda jax: scaling.vmap_while(jax),
}

# --------------------------------------------------------------------------- StableHLO

_MLIR_OP = re.compile(r'^\s*(?:%[^=]*= )?"?([a-z_]+\.[a-z_]+)')
_CALLEE = re.compile(r"func\.call @([\w.$-]+)")
_FUNC = re.compile(r"func\.func (?:public |private )?@([\w.$-]+)")
_NOT_COUNTED = {"func.return", "stablehlo.return", "func.func"}
CARRIED = "(values carried by whiles)"  # a row of its own, left out of the totals


def _regions(line: str, stack: list[str]) -> None:
    """Updates ``stack`` (the labels of the open regions) for the braces of ``line``:
    a region opened after ``cond`` is a while condition, after ``do`` a while body."""
    for match in re.finditer(r"[{}]", line):
        if match.group() == "}":
            stack.pop()
            continue
        before = line[: match.start()].rstrip()
        if before.endswith("cond"):
            stack.append("while cond")
        elif before.endswith("do"):
            stack.append("while body")
        else:
            stack.append("")


def stablehlo_functions(text: str) -> dict[str, list[tuple[str, str, str | None]]]:
    """Each function of an MLIR module: its operations as (place in the function, op
    name, callee of a ``func.call``)."""
    functions: dict[str, list] = {}
    current, stack = None, []
    for line in text.splitlines():
        func = _FUNC.search(line)
        if func and not stack[1:]:
            current, stack = func.group(1), stack[:1]
            functions[current] = []
        elif current is not None:
            match = _MLIR_OP.match(line)
            if match and match.group(1) not in _NOT_COUNTED:
                place = "/".join(label for label in stack[2:] if label)
                callee = _CALLEE.search(line)
                functions[current].append(
                    (place, match.group(1), callee.group(1) if callee else None)
                )
                if match.group(1) == "stablehlo.while":  # what each trip carries
                    carried = [(place, CARRIED, None)] * line.count("%iterArg")
                    functions[current].extend(carried)
        _regions(line, stack)
    return functions


def count_stablehlo(text: str) -> dict[str, dict[str, int]]:
    """Operations by place ("" for the top level) and kind, called functions inlined."""
    functions = stablehlo_functions(text)
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)

    def visit(name: str, outer: str, depth: int) -> None:
        for place, op, callee in functions.get(name, ()):
            where = "/".join(p for p in (outer, place) if p)
            counts[where][op] += 1
            if callee is not None and depth < 50:
                visit(callee, where, depth + 1)

    visit("main", "", 0)
    return {place: dict(ops) for place, ops in counts.items()}


# --------------------------------------------------------------------------- optimized HLO

_COMPUTATION = re.compile(r"^(ENTRY )?%?([\w.-]+) \(.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%?[\w.-]+ = (.*)$")
_CALLED = re.compile(
    r"\b(condition|body|calls|to_apply|true_computation|false_computation)=%?([\w.-]+)"
)
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")


def _opcode(rest: str) -> str:
    """The opcode of an HLO instruction, given the text after ``name = ``."""
    if rest.startswith("("):  # a tuple type: skip to its closing parenthesis
        depth = 0
        for i, ch in enumerate(rest):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                rest = rest[i + 1 :]
                break
    else:
        rest = rest.split(" ", 1)[1] if " " in rest else rest
    return rest.strip().split("(", 1)[0]


def count_hlo(text: str) -> dict[str, dict[str, int]]:
    """Instructions of the computations that run (the entry, while conditions and
    bodies, conditional branches and what they call, not fused computations' insides)
    by place and opcode; a fusion counts as ``fusion:<kind>``."""
    computations: dict[str, list[tuple[str, list[tuple[str, str]]]]] = {}
    entry, current = None, None
    for line in text.splitlines():
        head = _COMPUTATION.match(line)
        if head:
            current = head.group(2)
            computations[current] = []
            if head.group(1):
                entry = current
            continue
        instruction = _INSTRUCTION.match(line) if current else None
        if instruction is None:
            continue
        rest = instruction.group(1)
        opcode = _opcode(rest)
        if opcode == "fusion":
            kind = re.search(r"kind=(\w+)", rest)
            opcode += ":" + (kind.group(1) if kind else "?")
        called = [(role, name) for role, name in _CALLED.findall(rest)]
        for branches in _BRANCHES.findall(rest):
            called += [("branch", b.strip().lstrip("%")) for b in branches.split(",")]
        computations[current].append((opcode, called))
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)

    def visit(name: str, place: str, depth: int) -> None:
        for opcode, called in computations.get(name, ()):
            counts[place][opcode] += 1
            for role, callee in called:
                if role == "calls" and opcode.startswith("fusion"):
                    continue  # a fused computation: inside one instruction
                if role == "to_apply" and opcode != "call":
                    continue  # a reducer or comparator: inside one instruction
                label = {"condition": "while cond", "body": "while body"}.get(role, "")
                if depth < 50:
                    visit(callee, "/".join(p for p in (place, label) if p), depth + 1)

    if entry is not None:
        visit(entry, "", 0)
    return {place: dict(ops) for place, ops in counts.items()}


# --------------------------------------------------------------------------- driving


def emit(program: str, module_name: str, optimized: bool) -> dict[str, str]:
    """The texts of ``program`` built by ``module_name`` (``lamina`` or ``jax``)."""
    jax = __import__(module_name)
    jitted, args = PROGRAMS[program](jax)
    lowered = jitted.trace(*args).lower()
    texts = {"stablehlo": lowered.as_text()}
    if optimized:
        texts["hlo"] = lowered.compile().as_text()
    return texts


def _texts(python: str, module_name: str, programs: list[str], optimized: bool) -> dict:
    command = [python, __file__, "--emit", module_name, *programs]
    if optimized:
        command.append("--optimized")
    out = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _total(counts: dict[str, int]) -> int:
    return sum(n for op, n in counts.items() if op != CARRIED)


def _table(title: str, ours: dict, theirs: dict | None) -> None:
    print(f"\n{title}")
    places = sorted(set(ours) | set(theirs or {}), key=lambda p: (p.count("/"), p))
    for place in places:
        mine, other = ours.get(place, {}), (theirs or {}).get(place, {})
        print(f"  [{place or 'top level'}]")
        for op in sorted(set(mine) | set(other)):
            a, b = mine.get(op, 0), other.get(op, 0)
            row = f"    {op:<34}{a:>7}"
            if theirs is not None:
                row += f"{b:>7}" + ("  *" if a != b else "")
            print(row)
        row = f"    {'total':<34}{_total(mine):>7}"
        if theirs is not None:
            row += f"{_total(other):>7}"
        print(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", help="program names (default: all)")
    parser.add_argument("--jax-python", help="a Python interpreter with JAX 0.10.2")
    parser.add_argument("--optimized", action="store_true", help="also XLA's optimized HLO")
    parser.add_argument("--dump", help="a folder to write both sides' module texts to")
    parser.add_argument("--list", action="store_true", help="name the programs and stop")
    parser.add_argument("--emit", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.list:
        print("\n".join(PROGRAMS))
        return
    programs = args.programs or list(PROGRAMS)
    unknown = [p for p in programs if p not in PROGRAMS]
    if unknown:
        parser.error(f"unknown programs {unknown}; --list names them")
    if args.emit:
        texts = {p: emit(p, args.emit, args.optimized) for p in programs}
        print(json.dumps(texts))
        return
    ours = _texts(sys.executable, "lamina", programs, args.optimized)
    theirs = _texts(args.jax_python, "jax", programs, args.optimized) if args.jax_python else None
    header = f"    {'':<34}{'lamina':>7}" + (f"{'JAX':>7}" if theirs else "")
    for program in programs:
        print(f"\n=== {program}\n{header}")
        for kind, count in (("stablehlo", count_stablehlo), ("hlo", count_hlo)):
            if kind not in ours[program]:
                continue
            other = count(theirs[program][kind]) if theirs else None
            title = "StableHLO" if kind == "stablehlo" else "optimized HLO (after XLA passes)"
            _table(title, count(ours[program][kind]), other)
            if args.dump:
                os.makedirs(args.dump, exist_ok=True)
                ext = "mlir" if kind == "stablehlo" else "hlo"
                sides = [("lamina", ours)] + ([("jax", theirs)] if theirs else [])
                for side, texts in sides:
                    with open(os.path.join(args.dump, f"{program}.{side}.{ext}"), "w") as f:
                        f.write(texts[program][kind])


if __name__ == "__main__":
    main()
