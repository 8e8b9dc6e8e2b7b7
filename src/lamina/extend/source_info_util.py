"""`lamina.extend.source_info_util`: where operations come from
(`jax.extend.source_info_util`).

The *name stack* (:class:`NameStack`) holds the scopes entered with ``named_scope``
and the transformations around them; :func:`current` gives the source of the code
running now: the innermost frame outside lamina (and outside files passed to
:func:`register_exclusion`) and the current name stack.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from lamina.interpreters import errors as _errors
from lamina.interpreters import naming as _naming
from lamina.ir import SourceInfo

__all__ = [
    "NameStack",
    "SourceInfo",
    "current",
    "current_name_stack",
    "extend_name_stack",
    "new_name_stack",
    "new_source_info",
    "register_exclusion",
    "reset_name_stack",
    "set_name_stack",
    "summarize",
    "transform_name_stack",
    "user_context",
]

NameStack = _naming.NameStack
current_name_stack = _naming.current_name_stack
extend_name_stack = _naming.extend_name_stack
new_name_stack = _naming.new_name_stack
reset_name_stack = _naming.reset_name_stack
set_name_stack = _naming.set_name_stack
transform_name_stack = _naming.transform_name_stack

_exclusions: list[str] = [contextlib.__file__]
_user_traceback: list = []  # set by user_context


def register_exclusion(path: str) -> None:
    """Frames of files under ``path`` are never taken as where an operation came from."""
    _exclusions.append(os.path.abspath(path))


def _excluded(frame) -> bool:
    if frame.f_globals.get("__name__", "").startswith("lamina."):
        return True
    return any(frame.f_code.co_filename.startswith(p) for p in _exclusions)


def _user_frames() -> tuple:
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        if not _excluded(frame):
            frames.append(_errors.Frame(frame.f_code, frame.f_lineno))
        frame = frame.f_back
    return tuple(frames)


def new_source_info() -> SourceInfo:
    """A source with no traceback and an empty name stack."""
    return SourceInfo(traceback=(), name_stack=NameStack())


def current() -> SourceInfo:
    """Where the running code comes from: its user frames (innermost first) and the
    current name stack."""
    traceback = _user_traceback[-1] if _user_traceback else _user_frames()
    return SourceInfo(traceback=traceback, name_stack=current_name_stack())


def summarize(source_info: SourceInfo, num_frames: int = 1) -> str:
    """``file:line:column (function)`` of the innermost ``num_frames`` frames."""
    frames = source_info.traceback[:num_frames]
    if not frames:
        return "unknown"
    return "\n".join(
        f"{f.file_name}:{f.start_line}:{f.start_column} ({f.function_name})" for f in frames
    )


@contextlib.contextmanager
def user_context(traceback, *, name_stack: NameStack | None = None) -> Iterator[None]:
    """Within the block, :func:`current` reports ``traceback`` (and ``name_stack``)."""
    _user_traceback.append(tuple(traceback or ()))
    try:
        if name_stack is None:
            yield
        else:
            with set_name_stack(name_stack):
                yield
    finally:
        _user_traceback.pop()
