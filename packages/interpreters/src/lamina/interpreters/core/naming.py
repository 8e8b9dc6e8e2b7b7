"""``named_call`` and ``named_scope``: names for parts of a program, kept on the *name
stack* (:class:`NameStack`, current per thread and task).

JAX records these names in lowered locations and profiles, not in the printed Jaxpr;
lamina keeps the stack for libraries that read it (``current_name_stack()``), and
the traced program is exactly as it would be without them.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "NameStack",
    "current_name_stack",
    "extend_name_stack",
    "named_call",
    "named_scope",
    "new_name_stack",
    "reset_name_stack",
    "set_name_stack",
    "transform_name_stack",
]

F = TypeVar("F", bound=Callable)


@dataclasses.dataclass(frozen=True)
class Scope:
    name: str

    def wrap(self, names: list[str]) -> None:
        names.append(self.name)


@dataclasses.dataclass(frozen=True)
class Transform:
    name: str

    def wrap(self, names: list[str]) -> None:
        if names:
            names[-1] = f"{self.name}({names[-1]})"
        else:
            names.append(f"{self.name}()")


@dataclasses.dataclass(frozen=True)
class NameStack:
    """Scopes (``named_scope``) and transformations (``jvp``, ...) from outermost to
    innermost; prints as ``outer/transform(inner)``."""

    stack: tuple[Scope | Transform, ...] = ()

    def extend(self, name: tuple[str, ...] | str) -> NameStack:
        names = name if isinstance(name, tuple) else (name,)
        return NameStack((*self.stack, *map(Scope, names)))

    def wrap_name(self, name: str) -> str:
        return f"{self}/{name}" if self.stack else name

    def transform(self, transform_name: str) -> NameStack:
        return NameStack((*self.stack, Transform(transform_name)))

    def __getitem__(self, idx) -> NameStack:
        return NameStack(self.stack[idx])

    def __len__(self) -> int:
        return len(self.stack)

    def __add__(self, other: NameStack) -> NameStack:
        return NameStack(self.stack + other.stack)

    def __radd__(self, other: NameStack) -> NameStack:
        return NameStack(other.stack + self.stack)

    def __str__(self) -> str:
        names: list[str] = []
        for elem in reversed(self.stack):
            elem.wrap(names)
        return "/".join(reversed(names))


_EMPTY_STACK = NameStack()
_name_stack: contextvars.ContextVar[NameStack] = contextvars.ContextVar(
    "lamina_name_stack", default=_EMPTY_STACK
)


def current_name_stack() -> NameStack:
    return _name_stack.get()


def new_name_stack(name: str = "") -> NameStack:
    """A name stack holding ``name`` alone (empty for ``""``)."""
    return NameStack().extend(name) if name else NameStack()


class _NameStackBlock(contextlib.ContextDecorator):
    """The block of ``set_name_stack`` (also a decorator, as ``named_scope`` is): a
    plain class, cheaper than a generator-based context manager (transformations enter
    one per equation)."""

    __slots__ = ("_stack", "_token")

    def __init__(self, name_stack: NameStack):
        self._stack = name_stack

    def _recreate_cm(self) -> _NameStackBlock:  # each decorated call: its own token
        return _NameStackBlock(self._stack)

    def __enter__(self) -> None:
        self._token = _name_stack.set(self._stack)

    def __exit__(self, *exc_info) -> None:
        _name_stack.reset(self._token)


def set_name_stack(name_stack: NameStack) -> contextlib.AbstractContextManager[None]:
    """Within the block, ``name_stack`` is the current name stack."""
    return _NameStackBlock(name_stack)


def reset_name_stack() -> contextlib.AbstractContextManager[None]:
    """Within the block, the name stack is empty."""
    return set_name_stack(NameStack())


def extend_name_stack(name: str) -> contextlib.AbstractContextManager[None]:
    """Within the block, the name stack has the scope ``name`` on top."""
    return set_name_stack(current_name_stack().extend(name))


def transform_name_stack(name: str) -> contextlib.AbstractContextManager[None]:
    """Within the block, the name stack has the transformation ``name`` on top."""
    return set_name_stack(current_name_stack().transform(name))


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
    return extend_name_stack(name)
