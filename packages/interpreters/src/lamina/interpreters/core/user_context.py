"""``make_user_context``: a value of the user's that jit's caches key on.

Each context is a jaxlib ``Config`` holder included in the trace context, like the
options of :mod:`lamina.interpreters.core.config` that change what a function traces
to: a jitted function traced under one value of the context is traced, lowered and
compiled again under another.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

from jaxlib import _jax

__all__ = ["UserConfig", "make_user_context"]

_count = itertools.count()


class UserConfig:
    """A user context: ``.value`` reads it, ``context(v)`` sets it within a block (in
    this thread), ``set_global``/``get_global`` set and read the process-wide value."""

    def __init__(self, default_value: Any):
        self._obj = _jax.config.Config(
            f"user_context_{next(_count)}",
            default_value,
            include_in_jit_key=True,
            include_in_trace_context=True,
        )

    @property
    def value(self) -> Any:
        return self._obj.value

    def get_global(self) -> Any:
        return self._obj.get_global()

    def set_global(self, value: Any) -> None:
        self._obj.set_global(value)

    @contextlib.contextmanager
    def __call__(self, new_value: Any) -> Iterator[None]:
        previous = self._obj.swap_local(new_value)
        try:
            yield
        finally:
            self._obj.set_local(previous)


def make_user_context(default_value: Any = None) -> UserConfig:
    """A new context whose value (``default_value`` until set) jit's caches key on:
    jitted functions are traced and compiled again when it changes. Values must be
    hashable. Making contexts is not thread-safe; using them is."""
    return UserConfig(default_value)
