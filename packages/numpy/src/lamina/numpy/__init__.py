"""lamina.numpy: the NumPy API (``jax.numpy``) written on lax.

Each module named in ``_MODULES`` (its path under the package, tier by tier) lists its
public names in ``__all__``, the one place they are written; the package exports their
union, plus the submodules ``linalg`` and ``fft``. The concern folders' ``__init__``
files only describe the folder, and helper modules (``ufuncs/operands.py``,
``reductions/rules.py``, ...) are not in ``_MODULES``. Importing the package installs the
methods of ``jax.Array`` (``x.sum()``, ``x[i]``, ``x.at[i].set(v)``, ...) on arrays and
tracers (:mod:`.array_methods`).
"""

import sys as _sys

from lamina.ir import wrap_api_functions as _wrap_api_functions

_MODULES = (
    # creation/: conversion first, what makes arrays from it above.
    "creation.conversion",
    "creation.filled",
    "creation.ranges",
    "creation.matrices",
    "creation.windows",
    "creation.io",
    "creation.index_tricks",
    "creation.scalar_types",
    # The concern folders and modules, each on base/ (ufuncs/ on creation/).
    "ufuncs.unary",
    "ufuncs.bits",
    "ufuncs.comparisons",
    "ufuncs.binary",
    "ufuncs.floating",
    "ufuncs.objects",
    "reductions.folding",
    "reductions.cumulative",
    "reductions.moments",
    "reductions.statistics",
    "reductions.histograms",
    "reductions.signal",
    "manipulation.shapes",
    "manipulation.rearrange",
    "manipulation.repetition",
    "manipulation.splitting",
    "manipulation.stacking",
    "manipulation.edit",
    "manipulation.padding",
    "selection.sorting",
    "selection.searching",
    "selection.setops",
    "selection.unique_values",
    "selection.choosing",
    "selection.taking",
    "selection.index_helpers",
    "polynomial.fitting",
    "polynomial.arithmetic",
    "functional",
    "printing",
    # contractions/, on functional.
    "contractions.products",
    "contractions.outer_and_diagonal",
    "contractions.einsum_notation",
)

__all__ = ["fft", "linalg"]
for _name in _MODULES:
    __import__(f"{__name__}.{_name}")  # (import_module would hide it from -X importtime)
    _module = _sys.modules[f"{__name__}.{_name}"]
    globals().update({n: getattr(_module, n) for n in _module.__all__})
    __all__ += _module.__all__
__all__ = sorted(set(__all__))

from lamina.numpy import fft, linalg  # noqa: E402
from lamina.numpy.array_methods.installation import install_array_methods as _install  # noqa: E402

_install(_sys.modules[__name__])
del _name, _module, _install
_wrap_api_functions(globals(), __all__)  # tracebacks stop at the user's call

# Not part of jax.numpy: what the layers above (nn, scipy) build on; the axis functions
# that jax.nn and jax.scipy.special share (one function object each).
from lamina.numpy.base.arguments import (  # noqa: E402, F401
    canonicalize_axes,
    check_arraylike,
    promote_args_inexact,
    promote_dtypes_inexact,
    to_array,
)
from lamina.numpy.reductions.log_sum_exp import logsumexp  # noqa: E402, F401
from lamina.numpy.reductions.softmax import log_softmax, softmax  # noqa: E402, F401

_wrap_api_functions(globals(), ["log_softmax", "logsumexp", "softmax"])
