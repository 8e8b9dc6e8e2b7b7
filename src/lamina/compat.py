"""`lamina.compat`: run programs and libraries written for JAX on lamina, unchanged.

``install()`` makes ``import jax`` and every ``import jax.<module>`` resolve to lamina
for this process (``jax.numpy`` is ``lamina.numpy``, ``jax.core`` is ``lamina.core``);
``jaxlib`` is left alone. Nothing changes until it is called, so a process that has real
JAX installed keeps it unless it asks. ``uninstall()`` undoes it. ``python -m lamina.run
script.py`` runs a script with the alias installed.

The ``jax`` module seen through the alias is lamina's top level with one difference:
its ``__version__`` and ``__version_info__`` are those of the JAX API lamina implements
(``lamina.version``), because libraries gate code paths on them, while
``lamina.__version__`` stays lamina's own.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

import lamina
from lamina import version

__all__ = ["install", "installed", "uninstall"]

ALIAS = "jax"


class _JaxModule(types.ModuleType):
    """``jax``: every attribute is lamina's, but the version is JAX's API version."""

    def __getattr__(self, name: str):
        return getattr(lamina, name)

    def __dir__(self):
        return sorted({*dir(lamina), "__version__", "__version_info__"})


def _new_jax_module() -> _JaxModule:
    module = _JaxModule(ALIAS, lamina.__doc__)
    module.__version__ = version.__version__
    module.__version_info__ = version.__version_info__
    module.__path__ = []  # a package: ``import jax.numpy`` asks the finder below
    module.__lamina_alias__ = True
    return module


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        if self.target == "lamina":
            return _new_jax_module()
        return importlib.import_module(self.target)  # the very module, not a copy

    def exec_module(self, module) -> None:
        pass  # already executed under its own name


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Answers ``jax`` and ``jax.<path>`` with ``lamina`` and ``lamina.<path>``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        target_name = "lamina" + fullname[len(ALIAS) :]
        if target_name != "lamina" and importlib.util.find_spec(target_name) is None:
            return None  # ModuleNotFoundError names the jax module asked for
        return importlib.util.spec_from_loader(fullname, _AliasLoader(target_name))


_FINDER = _AliasFinder()


def installed() -> bool:
    """Whether the alias is in place."""
    return _FINDER in sys.meta_path


def install() -> None:
    """Make ``import jax`` (and ``jax.*``) resolve to lamina in this process."""
    if installed():
        return
    present = sys.modules.get(ALIAS)
    if present is not None and not getattr(present, "__lamina_alias__", False):
        raise RuntimeError(
            "lamina.compat.install(): JAX itself is already imported in this process, so "
            "`jax` cannot become lamina any more. Install the alias before anything "
            "imports jax (or run the program with `python -m lamina.run`)."
        )
    sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Undo ``install()``: ``jax`` and the ``jax.*`` modules imported through the alias
    are forgotten, so a later ``import jax`` finds real JAX (if installed)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + ".")]:
        module = sys.modules[name]
        if getattr(module, "__lamina_alias__", False) or (
            getattr(module, "__name__", "").startswith("lamina")
        ):
            del sys.modules[name]
