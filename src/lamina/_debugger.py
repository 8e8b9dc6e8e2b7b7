"""The interactive debugger behind ``lamina.debug.breakpoint``: the frames of the
caller, with their traced local variables passed through a debug callback, inspected
with pdb-like commands (JAX's ``cli`` backend)."""

from __future__ import annotations

import cmd
import dataclasses
import inspect
import pprint
import sys
import threading
import traceback
from typing import Any

from lamina.interpreters import Tracer
from lamina.ir import tree_util

__all__ = ["CliDebugger", "DebuggerFrame", "frames_of_caller", "get_debugger", "register_debugger"]


def _flattenable(value) -> bool:
    try:
        tree_util.tree_leaves(value)
    except Exception:
        return False
    return True


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """One Python frame: where it is, its source and its local variables."""

    filename: str
    locals: dict[str, Any]
    globals: dict[str, Any]
    code_context: Any
    source: list[str]
    lineno: int
    offset: int | None

    @classmethod
    def from_frameinfo(cls, info) -> DebuggerFrame:
        try:
            _, start = inspect.getsourcelines(info.frame)
            source = inspect.getsource(info.frame).split("\n")
            offset = info.lineno - max(start, 1)
            if offset >= len(source):
                source, offset = [], None
        except OSError:
            source, offset = [], None
        return cls(info.filename, dict(info.frame.f_locals), {}, info.code_context, source,
                   info.lineno, offset)  # fmt: skip


def _flatten_frame(frame: DebuggerFrame):
    names = list(frame.locals)
    values = [v if _flattenable(v) else _CANT_FLATTEN for v in frame.locals.values()]
    leaves, tree = tree_util.tree_flatten(values)
    traced = [isinstance(x, Tracer) for x in leaves]
    dynamic = [x for x, t in zip(leaves, traced, strict=True) if t]
    static = [x for x, t in zip(leaves, traced, strict=True) if not t]
    return dynamic, (frame, names, tree, traced, static)


def _unflatten_frame(aux, dynamic) -> DebuggerFrame:
    frame, names, tree, traced, static = aux
    dyn, sta = iter(dynamic), iter(static)
    leaves = [next(dyn) if t else next(sta) for t in traced]
    values = tree_util.tree_unflatten(tree, leaves)
    return dataclasses.replace(frame, locals=dict(zip(names, values, strict=True)))


class _CantFlatten:
    def __repr__(self):
        return "<cant_flatten>"


_CANT_FLATTEN = _CantFlatten()
tree_util.register_pytree_node(DebuggerFrame, _flatten_frame, _unflatten_frame)


def frames_of_caller(skip: int, filter_frames: bool, num_frames: int | None) -> list:
    """The frames above the caller's ``skip`` frames (lamina's own left out when
    ``filter_frames``), innermost first, at most ``num_frames``."""
    infos = inspect.stack()[skip + 1 :]
    if filter_frames:
        infos = [i for i in infos if not i.frame.f_globals.get("__name__", "").startswith("lamina")]
    frames = [DebuggerFrame.from_frameinfo(i) for i in infos]
    return frames if num_frames is None else frames[:num_frames]


class CliDebugger(cmd.Cmd):
    """A text debugger: ``p``/``pp`` expressions, ``u``/``d`` frames, ``l``ist,
    ``w``here, ``c``ontinue, ``q``uit; any other line is evaluated and printed."""

    prompt = "(jdb) "

    def __init__(self, frames, thread_id, stdin=None, stdout=None, completekey="tab"):
        super().__init__(completekey=completekey, stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None
        self.frames = frames
        self.frame_index = 0
        self.thread_id = thread_id
        self.intro = "Entering jdb:"

    def current_frame(self) -> DebuggerFrame:
        return self.frames[self.frame_index]

    def evaluate(self, expr):
        frame = self.current_frame()
        return eval(expr, {}, {**frame.globals, **frame.locals})

    def _error_message(self):
        kind, value = sys.exc_info()[:2]
        msg = traceback.format_exception_only(kind, value)[-1].strip()
        print("***", msg, file=self.stdout)

    def _show(self, arg, fmt):
        try:
            print(fmt(self.evaluate(arg)), file=self.stdout)
        except Exception:
            self._error_message()

    def default(self, line):
        self._show(line, repr)

    def do_p(self, arg):
        """p expression: print the value of an expression."""
        self._show(arg, repr)

    def do_pp(self, arg):
        """pp expression: pretty-print the value of an expression."""
        self._show(arg, pprint.pformat)

    def print_context(self, num_lines=2):
        frame = self.current_frame()
        lines = [f"> {frame.filename}({frame.lineno})"]
        for i, line in enumerate(frame.source):
            if (
                frame.offset is not None
                and frame.offset - 1 - num_lines <= i <= frame.offset + num_lines
            ):
                lines.append(("->  " if i == frame.offset else "    ") + line)
        print("\n".join(lines), file=self.stdout)

    def do_up(self, arg):
        """u(p): move up a stack frame."""
        if self.frame_index == len(self.frames) - 1:
            print("At topmost frame.", file=self.stdout)
        else:
            self.frame_index += 1
        self.print_context()

    do_u = do_up

    def do_down(self, arg):
        """d(own): move down a stack frame."""
        if self.frame_index == 0:
            print("At bottommost frame.", file=self.stdout)
        else:
            self.frame_index -= 1
        self.print_context()

    do_d = do_down

    def do_list(self, arg):
        """l(ist): the source around the current line."""
        self.print_context(num_lines=5)

    do_l = do_list

    def do_continue(self, arg):
        """c(ont(inue)): continue the program."""
        return True

    do_c = do_cont = do_continue

    def do_quit(self, arg):
        """q(uit), exit: leave the program."""
        sys.exit(0)

    do_q = do_EOF = do_exit = do_quit

    def do_where(self, arg):
        """w(here), bt: the stack, most recent frame last."""
        lines = ["Traceback:"]
        for frame in self.frames[::-1]:
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            if frame.offset is None:
                lines.append("    <no source>")
            else:
                lines.append("    " + frame.source[frame.offset].strip())
        print("\n".join(lines), file=self.stdout)

    do_w = do_bt = do_where

    def run(self):
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


def _run_cli(frames, thread_id, **kwargs):
    CliDebugger(frames, thread_id, **kwargs).run()


_debuggers: dict[str, tuple[int, Any]] = {"cli": (-1, _run_cli)}
debug_lock = threading.Lock()


def register_debugger(name: str, debugger, priority: int) -> None:
    if name in _debuggers:
        raise ValueError(f'Debugger with name "{name}" already registered.')
    _debuggers[name] = (priority, debugger)


def get_debugger(backend: str | None = None):
    """The debugger named ``backend``, else the one of highest priority."""
    if backend is not None and backend in _debuggers:
        return _debuggers[backend][1]
    return max(_debuggers.values(), key=lambda entry: entry[0])[1]
