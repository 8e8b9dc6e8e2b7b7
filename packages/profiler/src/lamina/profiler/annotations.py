"""Annotations: named spans that show on a trace's timeline while a trace runs.

They are jaxlib's ``TraceMe``, made only when a trace is running: with none, an
annotation costs a Python object and one check (JAX builds the ``TraceMe`` each time,
which costs about twice as much, and several times as much for a step annotation)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import ClassVar

from jaxlib._profiler import TraceMe

__all__ = ["StepTraceAnnotation", "TraceAnnotation", "annotate_function"]

_tracing = TraceMe.is_enabled


class TraceAnnotation:
    """``with TraceAnnotation(name, **metadata):`` puts a span named ``name`` (with the
    keyword metadata) on the timeline of the running trace."""

    __slots__ = ("_kwargs", "_name", "_span")

    _marks: ClassVar[Mapping[str, int]] = {}  # keyword arguments jaxlib always gets
    is_enabled = staticmethod(_tracing)

    def __init__(self, name: str, **kwargs):
        self._name = name
        self._kwargs = kwargs

    def __enter__(self):
        if _tracing():
            self._span = TraceMe(self._name, **self._marks, **self._kwargs)
            self._span.__enter__()
        else:
            self._span = None
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._span is not None:
            self._span.__exit__(exc_type, exc, tb)
            self._span = None

    def set_metadata(self, **kwargs) -> None:
        """Add metadata to the span while it is open."""
        span = getattr(self, "_span", None)
        if span is not None:
            span.set_metadata(**kwargs)


class StepTraceAnnotation(TraceAnnotation):
    """A :class:`TraceAnnotation` marking one step of a loop (give ``step_num=i``):
    TensorBoard's profile tools break their analysis down by these steps."""

    __slots__ = ()

    _marks: ClassVar[Mapping[str, int]] = {"_r": 1}  # jaxlib's mark of a step


def annotate_function(func: Callable, name: str | None = None, **decorator_kwargs):
    """``func``, each of whose calls is a span named ``name`` (its qualified name by
    default) with the keyword metadata ``decorator_kwargs``."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def annotated(*args, **kwargs):
        if _tracing():
            with TraceMe(name, **decorator_kwargs):
                return func(*args, **kwargs)
        return func(*args, **kwargs)

    return annotated
