"""Profiler traces: one jaxlib ``ProfilerSession`` at a time, which records the host's
annotated spans, Python calls and XLA's work (compilation, each executed kernel), and
on stop writes the TensorBoard layout under ``log_dir``:
``plugins/profile/<run>/<host>.xplane.pb`` (what XProf reads; :class:`ProfileData`
reads it in Python) and ``<host>.trace.json.gz``, plus, when asked,
``perfetto_trace.json.gz``."""

from __future__ import annotations

import contextlib
import os
import pathlib
import threading

from jaxlib import _profiler

from lamina.interpreters import JaxRuntimeError, backends
from lamina.profiler.perfetto import serve_perfetto_trace, write_perfetto_trace

__all__ = ["ProfileOptions", "start_trace", "stop_trace", "trace"]


class ProfileOptions(_profiler.ProfileOptions):
    """What a trace collects: ``host_tracer_level``, ``python_tracer_level``,
    ``duration_ms``, ``enable_hlo_proto``, ..."""


class _TraceState:
    """The running trace, if any, and what to do when it stops."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.session = None
        self.log_dir: str | None = None
        self.runs_before: set[str] = set()
        self.perfetto_trace = False
        self.perfetto_link = False


_state = _TraceState()


def _runs(log_dir: str) -> set[str]:
    root = pathlib.Path(log_dir, "plugins", "profile")
    return {p.name for p in root.iterdir()} if root.is_dir() else set()


def _check_log_dir(log_dir: str) -> None:
    """Fail now, before anything is written, if ``log_dir`` cannot be created or
    written to."""
    existing = os.path.abspath(log_dir)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        problem = f"{existing} is not a directory"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = f"{existing} is not writable"
    else:
        return
    raise JaxRuntimeError(f"FAILED_PRECONDITION: cannot write a profile to {log_dir}: {problem}")


def start_trace(
    log_dir: os.PathLike | str,
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
) -> None:
    """Start tracing this process (host and devices) until :func:`stop_trace`, which
    writes the trace under ``log_dir``. ``create_perfetto_trace`` adds a
    ``perfetto_trace.json.gz``; ``create_perfetto_link`` also serves it to Perfetto's UI
    (``stop_trace`` then waits until the link is opened). One trace at a time."""
    with _state.lock:
        if _state.session is not None:
            raise RuntimeError(
                "Profile has already been started. Only one profile may be run at a time."
            )
        log_dir = os.fspath(log_dir)
        _check_log_dir(log_dir)
        _profiler.clear_metadata()
        # Devices are traced only if their backend exists when the session starts.
        for client in backends().values():
            _profiler.set_metadata(f"{client.platform}_version", client.platform_version)
        _state.session = _profiler.ProfilerSession(profiler_options or ProfileOptions())
        _state.log_dir = log_dir
        _state.runs_before = _runs(log_dir)
        _state.perfetto_link = create_perfetto_link
        _state.perfetto_trace = create_perfetto_trace or create_perfetto_link


def stop_trace() -> None:
    """Stop the running trace and write it under the ``log_dir`` it was started with.
    The trace is over even if writing fails."""
    with _state.lock:
        session = _state.session
        if session is None:
            raise RuntimeError("No profile started")
        log_dir, before = _state.log_dir, _state.runs_before
        perfetto_trace, perfetto_link = _state.perfetto_trace, _state.perfetto_link
        try:
            session.stop_and_export(log_dir)
            if perfetto_trace:
                path = write_perfetto_trace(_new_run(log_dir, before))
        finally:
            _state.reset()
            _profiler.clear_metadata()
    if perfetto_trace and perfetto_link:
        serve_perfetto_trace(path)


def _new_run(log_dir: str, before: set[str]) -> pathlib.Path:
    """The run folder the session just wrote (the newest one if it reused a name)."""
    root = pathlib.Path(log_dir, "plugins", "profile")
    new = [root / name for name in _runs(log_dir) - before]
    return max(new or root.iterdir(), key=os.path.getmtime)


@contextlib.contextmanager
def trace(
    log_dir: os.PathLike | str,
    create_perfetto_link=False,
    create_perfetto_trace=False,
    profiler_options: ProfileOptions | None = None,
):
    """Trace the ``with`` block (or each call of the decorated function) into
    ``log_dir``, as :func:`start_trace` and :func:`stop_trace` do."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()
