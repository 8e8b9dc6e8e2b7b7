"""Giving jaxlib's C++ classes their Python methods.

Several jaxlib types are made in C++ and cannot be subclassed usefully from Python:
``ArrayImpl`` refuses subclasses outright, and jaxlib's result handlers, device puts
and dlpack imports always build the C++ type itself. Their Python-level behaviour
(``shape``, ``__repr__``, ``device_set``, ...) is therefore added to the C++ class:
``extends(cpp_class)`` decorates a plain Python class whose body lists the methods and
properties, copies them onto ``cpp_class``, and returns ``cpp_class``.

Whatever the Python class does not define keeps jaxlib's C++ version. A process can
hold only one set of such methods, so lamina and ``jax`` cannot both be imported into
one Python process.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["extends"]

_SKIP = frozenset({"__module__", "__qualname__", "__dict__", "__weakref__", "__doc__"})


def extends(cpp_class: type) -> Callable[[type], type]:
    def install(py_class: type) -> type:
        for name, value in vars(py_class).items():
            if name not in _SKIP:
                setattr(cpp_class, name, value)
        if py_class.__doc__:
            cpp_class.__doc__ = py_class.__doc__
        return cpp_class

    return install
