"""`lamina.typing`: the type aliases of `jax.typing`, describing lamina's types.

``ArrayLike`` is what lamina's functions accept as an array: a lamina ``Array`` (tracers
included, which are registered as Arrays), a NumPy array or scalar, or a Python scalar.
``DTypeLike`` is what they accept as a dtype: a name, a type object (``np.float32``,
``float``), a ``np.dtype``, or anything with a ``dtype`` attribute.
"""

from __future__ import annotations

from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from lamina.interpreters import Array

__all__ = ["ArrayLike", "DTypeLike"]


@runtime_checkable
class SupportsDType(Protocol):
    """An object whose ``dtype`` attribute is its dtype (arrays, ShapeDtypeStruct)."""

    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[  # noqa: UP007 (a typing.Union, as JAX's, so get_args lists its members)
    Array,
    np.ndarray,
    np.bool_,
    np.number,
    bool,
    int,
    float,
    complex,
]

DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]  # noqa: UP007
