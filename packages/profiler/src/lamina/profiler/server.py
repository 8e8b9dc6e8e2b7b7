"""The profiler server: a port that TensorBoard's profile plugin (or XProf) connects
to and asks for a trace of this process, on demand."""

from __future__ import annotations

from collections.abc import Callable

from jaxlib import _profiler

from lamina.interpreters import get_backend

__all__ = ["register_subprocess", "start_server", "stop_server"]

_server: _profiler.ProfilerServer | None = None


def start_server(port: int, requires_backend: bool = True) -> _profiler.ProfilerServer:
    """Serve profiles on ``port``; with ``requires_backend``, the default backend is
    started first so that its device activity is traced. One server at a time."""
    global _server
    if _server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    if requires_backend:
        get_backend()
    _server = _profiler.start_server(port)
    return _server


def stop_server() -> None:
    """Stop the server :func:`start_server` started."""
    global _server
    if _server is None:
        raise ValueError("No active profiler server.")
    _server = None  # jaxlib stops the server when the object goes away


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Trace the process ``pid`` (whose profiler server listens on ``port``) with this
    one; returns the function that stops doing so."""
    return _profiler.register_subprocess(pid, port)
