"""``named_call`` and ``named_scope``: names for parts of a program.

JAX records these names in its name stack, which appears in lowered locations and
profiles, not in the printed Jaxpr; lamina keeps no name stack yet, so both leave the
traced program exactly as it would be without them.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import TypeVar

__all__ = ["named_call", "named_scope"]

F = TypeVar("F", bound=Callable)


def named_call(fun: F, *, name: str | None = None) -> F:
    """``fun``, to be traced under ``name`` (its own name by default)."""
    if name is not None and not isinstance(name, str):
        raise TypeError("named_call name argument must be a string.")

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(name if name is not None else getattr(fun, "__name__", "fun")):
            return fun(*args, **kwargs)

    return named


def named_scope(name: str) -> contextlib.AbstractContextManager[None]:
    """A context manager naming the operations traced inside it ``name``."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return _scope(name)


@contextlib.contextmanager
def _scope(name: str) -> Iterator[None]:
    yield
