"""lamina.scipy: not built yet (issue 16).

It is to hold JAX's SciPy API (`jax.scipy`). Until then the package imports, so that it
installs with its declared dependencies, and any attribute or submodule of it raises an
error that says the layer is not built yet.
"""

import sys as _sys
from importlib.abc import MetaPathFinder as _MetaPathFinder

__all__: list[str] = []

_NOT_BUILT = "lamina.scipy is not built yet (issue 16)"


def __getattr__(name: str):
    raise AttributeError(f"{_NOT_BUILT}, so it has no attribute {name!r}")


class _NotBuiltFinder(_MetaPathFinder):
    """Answers an import of a submodule (which the path finders did not find) with the
    error, naming the layer as the missing module so that ``from ... import`` reports
    it too."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(__name__ + "."):
            raise ModuleNotFoundError(f"{_NOT_BUILT}: no module {fullname!r}", name=__name__)
        return None


_sys.meta_path.append(_NotBuiltFinder())
