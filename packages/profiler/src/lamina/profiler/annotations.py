"""Annotations: named spans that show on a trace's timeline while a trace runs, and
cost a constructor call when none does. They are jaxlib's ``TraceMe``."""

from __future__ import annotations

import functools
from collections.abc import Callable

from jaxlib import _profiler

__all__ = ["StepTraceAnnotation", "TraceAnnotation", "annotate_function"]


class TraceAnnotation(_profiler.TraceMe):
    """``with TraceAnnotation(name, **metadata):`` puts a span named ``name`` (with the
    keyword metadata) on the timeline of the running trace."""


class StepTraceAnnotation(TraceAnnotation):
    """A :class:`TraceAnnotation` marking one step of a loop (give ``step_num=i``):
    TensorBoard's profile tools break their analysis down by these steps."""

    def __init__(self, name: str, **kwargs):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: Callable, name: str | None = None, **decorator_kwargs):
    """``func``, each of whose calls is a span named ``name`` (its qualified name by
    default) with the keyword metadata ``decorator_kwargs``."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def annotated(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)

    return annotated
