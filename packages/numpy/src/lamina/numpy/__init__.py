"""lamina.numpy: the NumPy API (``jax.numpy``) written on lax.

Each module below lists its public names in ``__all__``; the package exports their
union, plus the submodules ``linalg`` and ``fft``. Importing the package installs the
methods of ``jax.Array`` (``x.sum()``, ``x[i]``, ``x.at[i].set(v)``, ...) on arrays and
tracers (:mod:`.array_methods`).
"""

import importlib as _importlib
import sys as _sys

_MODULES = (
    "creation",
    "printing",
    "ufuncs",
    "reductions",
    "manipulation",
    "selection",
    "contractions",
    "polynomial",
    "functional",
)

__all__ = ["fft", "linalg"]
for _name in _MODULES:
    _module = _importlib.import_module(f"{__name__}.{_name}")
    globals().update({n: getattr(_module, n) for n in _module.__all__})
    __all__ += _module.__all__
__all__ = sorted(set(__all__))

from lamina.numpy import fft, linalg  # noqa: E402
from lamina.numpy.array_methods.installation import install_array_methods as _install  # noqa: E402

_install(_sys.modules[__name__])
del _name, _module, _install

# Not part of jax.numpy: what the layers above (nn, scipy) build on.
from lamina.numpy.base.arguments import (  # noqa: E402, F401
    canonicalize_axes,
    check_arraylike,
    promote_args_inexact,
    to_array,
)
