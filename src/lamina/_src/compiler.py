"""``jax._src.compiler``: ``backend_compile_and_load``, through which every program
lamina compiles goes.

Reading the attribute gives the runtime's function; assigning it (as chex's
``restrict_backends`` does, to refuse some platforms) puts the new function in the
runtime's place, so every later compilation calls it.
"""

import sys
import types

from lamina.interpreters import backend as _backend

__all__ = ["backend_compile_and_load"]  # noqa: F822 (read from the runtime)

_FORWARDED = frozenset(__all__)


class _CompilerModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name in _FORWARDED:
            return getattr(_backend, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name: str, value) -> None:
        if name in _FORWARDED:
            setattr(_backend, name, value)
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _CompilerModule
