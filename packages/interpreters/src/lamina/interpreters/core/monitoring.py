"""Monitoring events (``jax.monitoring``): named events that listeners receive.

Code marks a point with ``record_event(name)``, a timed step with
``record_event_duration_secs(name, secs)`` / ``record_event_time_span(name, start,
end)``, a measured value with ``record_scalar(name, value)``; each call passes the
event to every listener registered for its kind, with the keyword metadata given.

lamina records, as JAX does, how long each compilation step of a ``jit`` call (and of
an eager primitive's first use) takes, with ``fun_name`` metadata: the events named in
:data:`JAXPR_TRACE_EVENT`, :data:`JAXPR_TO_MLIR_MODULE_EVENT` and
:data:`BACKEND_COMPILE_EVENT`, through :func:`compile_step`, which also marks the
step as a span of a running profiler trace (``trace: f``, ``lower: jit(f)``,
``compile: jit(f)``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from jaxlib._profiler import TraceMe

__all__ = [
    "BACKEND_COMPILE_EVENT",
    "JAXPR_TO_MLIR_MODULE_EVENT",
    "JAXPR_TRACE_EVENT",
    "clear_event_listeners",
    "compile_step",
    "get_event_duration_listeners",
    "get_event_listeners",
    "get_event_time_span_listeners",
    "get_scalar_listeners",
    "record_event",
    "record_event_duration_secs",
    "record_event_time_span",
    "record_scalar",
    "register_event_duration_secs_listener",
    "register_event_listener",
    "register_event_time_span_listener",
    "register_scalar_listener",
    "unregister_event_duration_listener",
    "unregister_event_listener",
    "unregister_event_time_span_listener",
    "unregister_scalar_listener",
]

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
JAXPR_TO_MLIR_MODULE_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

Listener = Callable[..., Any]

_event_listeners: list[Listener] = []
_duration_listeners: list[Listener] = []
_time_span_listeners: list[Listener] = []
_scalar_listeners: list[Listener] = []


def record_event(event: str, **kwargs: str | int) -> None:
    """Tell every event listener that ``event`` happened."""
    for listener in tuple(_event_listeners):
        listener(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Tell every duration listener that ``event`` took ``duration`` seconds."""
    for listener in tuple(_duration_listeners):
        listener(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float, **kwargs) -> None:
    """Tell every time-span listener that ``event`` ran from ``start_time`` to
    ``end_time`` (seconds since the epoch)."""
    for listener in tuple(_time_span_listeners):
        listener(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Tell every scalar listener that ``event`` measured ``value``."""
    for listener in tuple(_scalar_listeners):
        listener(event, value, **kwargs)


def register_event_listener(callback: Listener) -> None:
    """``callback(event, **kwargs)`` is called on each :func:`record_event`."""
    _event_listeners.append(callback)


def register_event_duration_secs_listener(callback: Listener) -> None:
    """``callback(event, duration, **kwargs)`` is called on each
    :func:`record_event_duration_secs`."""
    _duration_listeners.append(callback)


def register_event_time_span_listener(callback: Listener) -> None:
    """``callback(event, start_time, end_time, **kwargs)`` is called on each
    :func:`record_event_time_span`."""
    _time_span_listeners.append(callback)


def register_scalar_listener(callback: Listener) -> None:
    """``callback(event, value, **kwargs)`` is called on each :func:`record_scalar`."""
    _scalar_listeners.append(callback)


def _unregister(listeners: list[Listener], callback: Listener) -> None:
    # JAX asserts that the callback is registered; so does lamina.
    assert callback in listeners, f"{callback!r} is not a registered listener"
    listeners.remove(callback)


def unregister_event_listener(callback: Listener) -> None:
    _unregister(_event_listeners, callback)


def unregister_event_duration_listener(callback: Listener) -> None:
    _unregister(_duration_listeners, callback)


def unregister_event_time_span_listener(callback: Listener) -> None:
    _unregister(_time_span_listeners, callback)


def unregister_scalar_listener(callback: Listener) -> None:
    _unregister(_scalar_listeners, callback)


def get_event_listeners() -> list[Listener]:
    return list(_event_listeners)


def get_event_duration_listeners() -> list[Listener]:
    return list(_duration_listeners)


def get_event_time_span_listeners() -> list[Listener]:
    return list(_time_span_listeners)


def get_scalar_listeners() -> list[Listener]:
    return list(_scalar_listeners)


def clear_event_listeners() -> None:
    """Forget every registered listener, of every kind."""
    for listeners in (_event_listeners, _duration_listeners, _time_span_listeners,
                      _scalar_listeners):  # fmt: skip
        listeners.clear()


_SPAN_NAMES = {
    JAXPR_TRACE_EVENT: "trace",
    JAXPR_TO_MLIR_MODULE_EVENT: "lower",
    BACKEND_COMPILE_EVENT: "compile",
}


class compile_step:
    """``with compile_step(event, fun_name):`` records one compilation step as JAX
    does: its start time as a scalar on entry, then its duration and time span on exit
    (also when the step raised), each with ``fun_name`` metadata; and it is a span of
    the running profiler trace, named for the step and ``fun_name``."""

    __slots__ = ("event", "fun_name", "span", "start")

    def __init__(self, event: str, fun_name: str):
        self.event = event
        self.fun_name = fun_name
        self.span = TraceMe(f"{_SPAN_NAMES.get(event, event)}: {fun_name}")

    def __enter__(self):
        self.span.__enter__()
        self.start = time.time()
        if _scalar_listeners:
            record_scalar(self.event, self.start, fun_name=self.fun_name)
        return self

    def __exit__(self, exc_type, exc, tb):
        end = time.time()
        if _duration_listeners:
            record_event_duration_secs(self.event, end - self.start, fun_name=self.fun_name)
        if _time_span_listeners:
            record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)
        self.span.__exit__(exc_type, exc, tb)
