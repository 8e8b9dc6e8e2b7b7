"""``jax.interpreters.xla``: ``apply_primitive`` (run one primitive eagerly),
``canonicalize_dtype_handlers`` (host values to their canonical dtype, by type) and
``Backend`` (jaxlib's client class)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lamina.interpreters.runtime.backend import Client
from lamina.interpreters.runtime.dispatch import apply_primitive
from lamina.ir import dtypes

__all__ = ["Backend", "apply_primitive", "canonicalize_dtype_handlers"]

Backend = Client


def _canonical_array(x) -> np.ndarray:
    return np.asarray(x, dtypes.canonicalize_dtype(np.result_type(x)))


def _canonical_scalar(x) -> np.ndarray:
    return np.asarray(x, dtypes.canonicalize_dtype(dtypes.dtype(type(x))))


canonicalize_dtype_handlers: dict[type, Callable[[Any], Any]] = {
    np.ndarray: _canonical_array,
    **{t: _canonical_scalar for t in dtypes.python_scalar_types},
    **{
        np.dtype(d).type: _canonical_array
        for d in np.sctypeDict.values()
        if np.dtype(d).kind in "biufc"
    },
}
