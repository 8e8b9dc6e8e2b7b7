"""``jax.ref``: mutable array references (``Ref``), made with ``new_ref`` and read and
written with indexing or ``get``/``set``/``swap``/``addupdate``."""

from lamina import numpy as _numpy  # noqa: F401  (arrays read from a reference get methods)
from lamina.interpreters import Ref
from lamina.ir import AbstractRef
from lamina.lax import empty_ref, free_ref, freeze, new_ref
from lamina.lax import ref_addupdate as addupdate
from lamina.lax import ref_get as get
from lamina.lax import ref_set as set
from lamina.lax import ref_swap as swap

__all__ = [
    "AbstractRef",
    "Ref",
    "addupdate",
    "empty_ref",
    "free_ref",
    "freeze",
    "get",
    "new_ref",
    "set",
    "swap",
]
