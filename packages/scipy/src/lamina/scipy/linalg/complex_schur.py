"""The complex Schur form, which the matrix functions here are built on."""

from __future__ import annotations

from lamina import lax
from lamina import numpy as jnp
from lamina.ir import dtypes

__all__ = ["complex_schur"]


def complex_schur(a):
    """(T, Z): upper-triangular T and unitary Z with ``a = Z·T·Zᴴ``, in ``a``'s complex
    dtype."""
    a = jnp.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"The input to schur must be a square matrix. Got shape {a.shape}.")
    return lax.linalg.schur(a.astype(dtypes.to_complex_dtype(a.dtype)))
