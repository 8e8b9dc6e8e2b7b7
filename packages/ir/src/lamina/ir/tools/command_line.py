"""``python -m lamina.ir COMMAND FILE...``: tools over Jaxpr text files, as JAX prints
Jaxprs (``str(jax.make_jaxpr(f)(*args))``).

- ``fmt FILE...``: reads each file and prints it back (as JAX prints it);
- ``check FILE...``: well-formedness; the first problem as ``FILE:LINE:COLUMN: message``;
- ``stats FILE...``: equations per primitive, nesting depth, estimated FLOPs and bytes;
- ``dot FILE``: the dataflow as a Graphviz graph, nested Jaxprs as clusters;
- ``diff A B``: the structural difference of two Jaxprs, ignoring variable names.

Primitives neither defined by a loaded layer nor known to JAX 0.10.2 are read anyway
(``unknown_primitives="create"``). The exit status is 0 on success, 1 when a file is
ill-formed or the Jaxprs differ, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import sys

from lamina.ir.checker import JaxprTypeError, check_jaxpr
from lamina.ir.core.jaxpr import Jaxpr
from lamina.ir.parsing.lexer import JaxprSyntaxError
from lamina.ir.parsing.parser import parse_jaxpr
from lamina.ir.tools.diff import jaxpr_diff
from lamina.ir.tools.dot import jaxpr_dot
from lamina.ir.tools.stats import jaxpr_stats

__all__ = ["main"]


class _Failure(Exception):
    """A file that cannot be read as a Jaxpr: the message is ``FILE:LINE:COLUMN: ...``."""


def _read(path: str, positions: dict | None = None) -> Jaxpr:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise _Failure(f"{path}: {e.strerror}") from None
    try:
        return parse_jaxpr(text.strip(), unknown_primitives="create", positions=positions)
    except JaxprSyntaxError as e:
        # Line and column of the stripped text, shifted by the leading blank lines.
        lead = text[: len(text) - len(text.lstrip())]
        line = e.lineno + lead.count("\n")
        column = e.colno + (len(lead) - lead.rfind("\n") - 1 if e.lineno == 1 else 0)
        raise _Failure(f"{path}:{line}:{column}: {e.msg}") from None


def _fmt(args) -> int:
    for path in args.files:
        sys.stdout.write(f"{_read(path)}\n")
    return 0


def _check(args) -> int:
    for path in args.files:
        positions = {}
        jaxpr = _read(path, positions)
        try:
            check_jaxpr(jaxpr)
        except JaxprTypeError as e:
            line, column = positions.get(e.eqn, (1, 1))
            raise _Failure(f"{path}:{line}:{column}: {e}") from None
        print(f"{path}: ok")
    return 0


def _stats(args) -> int:
    for i, path in enumerate(args.files):
        if len(args.files) > 1:
            print(f"{'' if i == 0 else chr(10)}{path}:")
        print(jaxpr_stats(_read(path)))
    return 0


def _dot(args) -> int:
    sys.stdout.write(jaxpr_dot(_read(args.file)))
    return 0


def _diff(args) -> int:
    lines = jaxpr_diff(_read(args.a), _read(args.b))
    for line in lines:
        print(line)
    return 1 if lines else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m lamina.ir", description="Tools over Jaxprs printed by JAX."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, run, text in (
        ("fmt", _fmt, "print each Jaxpr back as JAX prints it"),
        ("check", _check, "check that each Jaxpr is well formed"),
        ("stats", _stats, "count equations, nesting, FLOPs and bytes"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("files", nargs="+", metavar="FILE")
        command.set_defaults(run=run)
    command = commands.add_parser("dot", help="the dataflow as a Graphviz graph")
    command.add_argument("file", metavar="FILE")
    command.set_defaults(run=_dot)
    command = commands.add_parser("diff", help="the structural difference of two Jaxprs")
    command.add_argument("a", metavar="A")
    command.add_argument("b", metavar="B")
    command.set_defaults(run=_diff)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except _Failure as e:
        print(e, file=sys.stderr)
        return 1
