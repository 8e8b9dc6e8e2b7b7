"""Giving jaxlib's C++ classes their Python methods, and sharing them with JAX.

Several jaxlib types are made in C++ and cannot be subclassed usefully from Python:
``ArrayImpl`` refuses subclasses outright, and jaxlib's result handlers, device puts
and dlpack imports always build the C++ type itself. Their Python-level behaviour
(``shape``, ``__repr__``, ``device_set``, ...) is therefore added to the C++ class:
``extends(cpp_class)`` decorates a plain Python class whose body lists the methods and
properties, copies them onto ``cpp_class``, and returns ``cpp_class``. Whatever the
Python class does not define keeps jaxlib's C++ version.

JAX does the same to the same classes. When both live in one process (see
:mod:`lamina.interpreters.runtime.jax_in_process`), an attribute that both define is
replaced by one that picks lamina's version for lamina's objects and JAX's for JAX's:
:func:`share_with_jax` does it, with a test telling the two apart per class (an array
is lamina's when its ``aval`` is one of lamina's abstract values).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["extends", "install", "share_with_jax"]

_SKIP = frozenset({"__module__", "__qualname__", "__dict__", "__weakref__", "__doc__"})

# Per C++ class: lamina's attributes, and how to tell lamina's instances apart (None:
# the class keeps lamina's attributes for everyone).
_OURS: dict[type, dict[str, Any]] = {}
_IS_OURS: dict[type, Callable[[Any], bool] | None] = {}
# Whether JAX has been imported into this process (set by jax_in_process).
_jax_loaded = [False]


def extends(cpp_class: type, is_ours: Callable[[Any], bool] | None = None):
    """Decorator: copy a Python class's attributes onto ``cpp_class``. ``is_ours(obj)``
    tells lamina's instances from JAX's, for a class whose instances both make."""

    def decorate(py_class: type) -> type:
        if is_ours is not None:
            _IS_OURS[cpp_class] = is_ours
        for name, value in vars(py_class).items():
            if name not in _SKIP:
                install(cpp_class, name, value)
        if py_class.__doc__:
            cpp_class.__doc__ = py_class.__doc__
        return cpp_class

    return decorate


def install(cpp_class: type, name: str, value: Any) -> None:
    """Set lamina's attribute ``name`` of ``cpp_class`` (shared with JAX if it is here)."""
    _OURS.setdefault(cpp_class, {})[name] = value
    current = cpp_class.__dict__.get(name)
    if _jax_loaded[0] and current is not None and _IS_OURS.get(cpp_class) is not None:
        value = _dispatching(cpp_class, value, current)
    setattr(cpp_class, name, value)


def share_with_jax() -> None:
    """After JAX has installed its attributes: make each class lamina and JAX both
    extended serve both. Classes without an ``is_ours`` test get lamina's attributes
    back (their JAX counterparts compute the same things)."""
    _jax_loaded[0] = True
    for cpp_class, ours in _OURS.items():
        for name, value in ours.items():
            current = cpp_class.__dict__.get(name)
            if current is value or id(current) in _SHARED:
                continue
            if _IS_OURS.get(cpp_class) is None or current is None:
                setattr(cpp_class, name, value)
            else:
                setattr(cpp_class, name, _dispatching(cpp_class, value, current))


# The attributes made by _dispatching, by id (not to be wrapped twice).
_SHARED: dict[int, Any] = {}


def _dispatching(cpp_class: type, ours: Any, theirs: Any) -> Any:
    """An attribute that is ``ours`` for lamina's instances and ``theirs`` for JAX's."""
    is_ours = _IS_OURS[cpp_class]
    if not hasattr(ours, "__get__"):
        return ours  # a plain value (``__array_priority__``): lamina's serves both
    if isinstance(ours, property) or isinstance(theirs, property):

        def get(self):
            impl = ours if is_ours(self) else theirs
            return impl.__get__(self, type(self)) if hasattr(impl, "__get__") else impl

        shared = property(get)
    else:

        def shared(self, *args, **kwargs):
            impl = ours if is_ours(self) else theirs
            return impl.__get__(self, type(self))(*args, **kwargs)

    _SHARED[id(shared)] = shared
    return shared
