"""Print options and array printing.

Arrays print through NumPy (``repr`` of a lamina array formats its values with
``np.array2string``), so NumPy's print options are the ones in force, as in JAX:
``jnp.printoptions``, ``jnp.set_printoptions`` and ``jnp.get_printoptions`` change and
read them. ``array_repr`` and ``array_str`` are NumPy's functions, as JAX exports them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["array_repr", "array_str", "get_printoptions", "printoptions", "set_printoptions"]

array_repr = np.array_repr
array_str = np.array_str


def get_printoptions():
    """NumPy's current print options (a dict), which lamina arrays print with."""
    return np.get_printoptions()


def printoptions(*args, **kwargs):
    """A context manager setting NumPy's print options (``precision``, ``threshold``,
    ``linewidth``, ``suppress``, ...) for the ``with`` block; arrays print with them."""
    return np.printoptions(*args, **kwargs)


def set_printoptions(*args, **kwargs):
    """Set NumPy's print options, which lamina arrays print with."""
    return np.set_printoptions(*args, **kwargs)
