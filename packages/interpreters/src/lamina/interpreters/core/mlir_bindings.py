"""jaxlib's MLIR Python bindings, imported the first time something uses them.

Loading ``jaxlib.mlir.ir`` and the StableHLO/CHLO dialect modules costs about as much as
the rest of ``import lamina``, yet only lowering (the first compile of a function) needs
them. Lowering code and lowering rules import the modules from here (other layers through
the public ``lamina.interpreters.mlir``) and use them as usual (``hlo.add(x, y)``,
``ir.RankedTensorType.get(...)``); the real import happens at the first attribute
access::

    from lamina.interpreters.mlir import hlo, ir

Only attribute access triggers the import: a module-level ``hlo.add`` in a rule file
would load the bindings at import time, so rule tables refer to ops inside functions.

The stand-ins are plain objects held here, not entries in ``sys.modules`` (as
``importlib.util.LazyLoader`` would make them), so code that imports ``jaxlib.mlir``
directly is unaffected, and first use from two threads at once is safe on Python 3.11.
"""

from __future__ import annotations

import importlib
import types
from typing import Any

__all__ = ["chlo", "func", "hlo", "ir", "jax_mlir_ext", "lazy_module", "sdy", "stablehlo"]


class _LazyModule(types.ModuleType):
    """Stands for the module ``__name__`` and imports it on first attribute access.

    Loading copies the real module's namespace into the stand-in and turns it into a
    plain module, so later attribute reads cost what any module attribute costs.
    Importing is thread-safe: ``importlib.import_module`` holds the module's import lock,
    and a second thread loading at the same time copies the same namespace.
    """

    def _load(self) -> types.ModuleType:
        module = importlib.import_module(self.__name__)
        self.__dict__.update(vars(module))
        self.__class__ = types.ModuleType
        return module

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(), attr)

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}>"


def lazy_module(name: str) -> types.ModuleType:
    """A stand-in for the module ``name`` that imports it on first attribute access."""
    return _LazyModule(name)


ir = lazy_module("jaxlib.mlir.ir")
func = lazy_module("jaxlib.mlir.dialects.func")
stablehlo = hlo = lazy_module("jaxlib.mlir.dialects.stablehlo")
chlo = lazy_module("jaxlib.mlir.dialects.chlo")
sdy = lazy_module("jaxlib.mlir.dialects.sdy")
jax_mlir_ext = lazy_module("jaxlib.mlir._mlir_libs._jax_mlir_ext")
