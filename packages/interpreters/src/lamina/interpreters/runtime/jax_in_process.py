"""Living in one process with JAX.

lamina and JAX both run on jaxlib, and jaxlib keeps some things once per process:

* the Python behaviour of its C++ classes (``ArrayImpl``, the sharding classes), which
  both libraries add to the classes themselves;
* the one *tracer class* whose instances ``isinstance(x, Array)`` accepts;
* its host copy of an array that the buffer protocol cannot serve (bfloat16 on CPU,
  anything on a GPU), which imports ``jax.core`` and ``jax._src.sharding_impls``.

So that neither library breaks the other:

* lamina never imports JAX: while lamina asks jaxlib for a host copy
  (:func:`without_jax_import`), an import of ``jax`` that has not happened yet fails
  at once, and jaxlib takes its path that needs no ``jax``;
* when JAX is imported (before or after lamina), the attributes both define on a C++
  class become ones that serve lamina's objects with lamina's version and JAX's with
  JAX's (:func:`lamina.interpreters.runtime.cpp_classes.share_with_jax`), and the
  tracer class becomes ``object``: jaxlib then accepts any object whose
  ``_is_traced_array()`` is true, which both libraries' tracers define.

What stays shared: x64 mode and ``disable_jit`` are read by jaxlib's C++ from one holder
each, the one the last imported library installed; set them the same way in both (the
``JAX_ENABLE_X64`` environment variable does).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Iterator

from jaxlib import _jax

from lamina.interpreters.runtime.cpp_classes import share_with_jax

__all__ = ["register_tracer_class", "without_jax_import"]

_local = threading.local()
_tracer_class: list[type] = []


def register_tracer_class(tracer_class: type) -> None:
    """Make ``isinstance(t, Array)`` true for instances ``t`` of ``tracer_class`` whose
    ``t._is_traced_array()`` is true."""
    _tracer_class[:] = [tracer_class]
    _jax.set_tracer_class(object if _is_jax(sys.modules.get("jax")) else tracer_class)


def _is_jax(module) -> bool:
    """Whether ``module`` is JAX itself (not lamina under the ``jax`` alias, whose
    module says so with ``__lamina_alias__``)."""
    return module is not None and not getattr(module, "__lamina_alias__", False)


@contextlib.contextmanager
def without_jax_import() -> Iterator[None]:
    """Within the block, in this thread, ``import jax`` fails unless JAX is loaded."""
    _local.blocked = True
    try:
        yield
    finally:
        _local.blocked = False


def _jax_arrived() -> None:
    share_with_jax()
    if _tracer_class:
        _jax.set_tracer_class(object)


class _Loader(importlib.abc.Loader):
    """JAX's own loader, telling lamina when ``jax`` has finished importing."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = self._loader
        module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        if _is_jax(module):
            _jax_arrived()

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _JaxFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "jax" and not name.startswith("jax."):
            return None
        if getattr(_local, "blocked", False):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        if name != "jax":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


if _is_jax(sys.modules.get("jax")):  # JAX came first: lamina's attributes are shared
    share_with_jax()
else:
    sys.meta_path.insert(0, _JaxFinder())
