"""Tracebacks that show the user's code, not lamina's: JAX's traceback filtering.

An exception leaving lamina through an API boundary (a function wrapped by
:func:`api_boundary`, ``Primitive.bind``, an array operator) loses the frames of
lamina's own files from its traceback, all but the innermost one (the line that
raised). Only the outermost boundary on the stack acts, so boundaries may nest freely,
and nothing is done unless an exception passes: a wrapper costs one Python call,
``bind`` and the operators nothing. An exception that passed a boundary JAX has too
(transformations, ``jit``, eager primitives, operators) gets the note or cause below;
one that passed only the plain functions of ``lamina.numpy``, ``.nn`` and ``.random``
(which JAX does not filter) just loses frames, so that messages and notes are JAX's.

``jax_traceback_filtering`` (``JAX_TRACEBACK_FILTERING``) picks how, as in JAX:

- ``"off"``: tracebacks as they are;
- ``"quiet_remove_frames"``: frames removed, and a note saying so and how to see them;
- ``"remove_frames"``: frames removed; the unfiltered traceback is the exception's
  ``__cause__`` (an ``UnfilteredStackTrace``);
- ``"tracebackhide"``: frames kept but marked ``__tracebackhide__`` (IPython and pytest
  hide them);
- ``"auto"`` (the default): ``"tracebackhide"`` under IPython, else
  ``"quiet_remove_frames"``.

A file is lamina's if it lies under a directory of the ``lamina`` package's path (every
installed layer's ``src/lamina``); tests and user code are not.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import os
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "UnfilteredStackTrace",
    "api_boundary",
    "excluded_paths",
    "filter_traceback",
    "include_frame",
    "is_lamina_file",
    "register_boundary",
    "register_exclusion",
    "set_traceback_filtering_source",
    "transformation_boundary",
    "wrap_api_functions",
]

F = TypeVar("F", bound=Callable[..., Any])

SIMPLIFIED_NOTE = (
    "--------------------\n"
    "For simplicity, JAX has removed its internal frames from the traceback of the "
    "following exception. Set JAX_TRACEBACK_FILTERING=off to include these."
)
_UNFILTERED_NOTE = (
    "The stack trace below excludes JAX-internal frames.\n"
    "The preceding is the original exception that occurred, unmodified.\n"
    "\n--------------------"
)


class UnfilteredStackTrace(Exception):
    """The cause given to a filtered exception in ``remove_frames`` mode: the original
    message over the whole traceback."""


def _mode_from_environment() -> str:
    return os.environ.get("JAX_TRACEBACK_FILTERING", "auto")


_mode_source: Callable[[], str] = _mode_from_environment


def set_traceback_filtering_source(source: Callable[[], str]) -> None:
    """Installed by lamina.interpreters: ``source()`` is the ``jax_traceback_filtering``
    option's value."""
    global _mode_source
    _mode_source = source


def _mode() -> str:
    mode = _mode_source()
    if mode in (None, "auto"):
        ipython = sys.modules.get("IPython")
        under_ipython = hasattr(builtins, "get_ipython") and ipython is not None
        if under_ipython and tuple(getattr(ipython, "version_info", ())[:2]) >= (7, 17):
            return "tracebackhide"
        return "quiet_remove_frames"
    return mode


# ------------------------------------------------------------------ which frames are ours

_is_ours: dict[str, bool] = {}  # by code file name


def is_lamina_file(filename: str) -> bool:
    """Whether ``filename`` is a source file of lamina (of any of its layers)."""
    ours = _is_ours.get(filename)
    if ours is None:
        paths = getattr(sys.modules.get("lamina"), "__path__", ())
        roots = tuple(os.path.join(os.path.abspath(p), "") for p in paths)
        ours = _is_ours[filename] = bool(roots) and os.path.abspath(filename).startswith(roots)
    return ours


# Files whose frames are removed as lamina's are: libraries built on the JAX API hide
# theirs this way (JAX's ``register_exclusion``; flax edits the list itself).
excluded_paths: list[str] = []


def register_exclusion(path: str) -> None:
    """Remove the frames of files under ``path`` from filtered tracebacks too."""
    excluded_paths.append(path)


def include_frame(frame: types.FrameType) -> bool:
    """Whether a filtered traceback keeps ``frame``."""
    filename = frame.f_code.co_filename
    return not is_lamina_file(filename) and not filename.startswith(tuple(excluded_paths))


def _without_lamina_frames(tb: types.TracebackType) -> types.TracebackType:
    entries = list(traceback.walk_tb(tb))
    kept = [e for e in entries[:-1] if include_frame(e[0])]
    kept.append(entries[-1])  # the frame that raised, whoever's it is
    out = None
    for frame, lineno in reversed(kept):
        out = types.TracebackType(out, frame, frame.f_lasti, lineno)
    return out


def _with_callers(tb: types.TracebackType, frame: types.FrameType) -> types.TracebackType:
    """``tb`` below the frames that called ``frame`` (the whole stack, outermost first)."""
    for caller, lineno in traceback.walk_stack(frame.f_back):
        tb = types.TracebackType(tb, caller, caller.f_lasti, lineno)
    return tb


# ------------------------------------------------------------------ boundaries

_boundary_codes: set[types.CodeType] = set()


def _under_another_boundary(frame: types.FrameType) -> bool:
    caller = frame.f_back
    while caller is not None:
        if caller.f_code in _boundary_codes:
            return True
        caller = caller.f_back
    return False


def filter_traceback(exc: BaseException, boundary: types.FrameType, note: bool = True) -> None:
    """Filter ``exc``'s traceback as the mode says, if ``boundary`` (the frame of the
    boundary that caught it) is the outermost boundary on the stack. Without ``note``
    (here or at an inner boundary the exception passed), frames are removed with nothing
    added to the exception (no note, no cause)."""
    tb = exc.__traceback__
    if tb is None:
        return
    if _under_another_boundary(boundary):
        if note:  # the outermost boundary adds it
            with contextlib.suppress(AttributeError):
                exc._lamina_traceback_note = True
        return
    note = note or getattr(exc, "_lamina_traceback_note", False)
    mode = _mode()
    if mode == "off":
        return
    if mode == "tracebackhide":
        for frame, _ in traceback.walk_tb(tb):
            if is_lamina_file(frame.f_code.co_filename):
                frame.f_locals["__tracebackhide__"] = True
        return
    if mode not in ("quiet_remove_frames", "remove_frames"):
        raise ValueError(f"JAX_TRACEBACK_FILTERING={mode} is not a valid value.")
    exc.with_traceback(_without_lamina_frames(tb))
    if not note:
        return
    if mode == "quiet_remove_frames":
        if SIMPLIFIED_NOTE not in getattr(exc, "__notes__", ()):
            exc.add_note(SIMPLIFIED_NOTE)
        return
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    unfiltered = UnfilteredStackTrace(f"{message}\n\n{_UNFILTERED_NOTE}")
    unfiltered.with_traceback(_with_callers(tb, boundary))
    unfiltered.__cause__ = exc.__cause__
    unfiltered.__context__ = exc.__context__
    unfiltered.__suppress_context__ = exc.__suppress_context__
    exc.__cause__ = unfiltered
    exc.__context__ = None


def register_boundary(fun: Callable) -> None:
    """Make ``fun`` (which calls :func:`filter_traceback` itself) count as a boundary."""
    _boundary_codes.add(fun.__code__)


def api_boundary(fun: F, *, note: bool = True) -> F:
    """``fun`` as an API boundary: exceptions leaving it have lamina's frames removed
    (and a note saying so, unless ``note`` is False)."""

    @functools.wraps(fun)
    def boundary(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_traceback(e, sys._getframe(), note)
            raise

    return boundary  # type: ignore[return-value]


register_boundary(api_boundary(lambda: None))


def transformation_boundary(transformation: F) -> F:
    """``transformation`` (``grad``, ``vmap``, ...) as an API boundary, and so is each
    plain function it returns (the transformed function)."""

    @api_boundary
    @functools.wraps(transformation)
    def transform(*args, **kwargs):
        result = transformation(*args, **kwargs)
        return api_boundary(result) if isinstance(result, types.FunctionType) else result

    return transform  # type: ignore[return-value]


def wrap_api_functions(namespace: dict[str, Any], names) -> None:
    """Make each plain Python function among ``namespace[name]`` an API boundary that
    adds no note (JAX filters neither these nor ``bind``, so its messages have none).
    A function that is a boundary already (one layer re-exporting another's) is kept, so
    both layers export the same object."""
    for name in names:
        value = namespace.get(name)
        if isinstance(value, types.FunctionType) and value.__code__ not in _boundary_codes:
            namespace[name] = api_boundary(value, note=False)
