"""Argument checks and batched matrix helpers shared by the jnp.linalg functions."""

from __future__ import annotations

import numpy as np
from lamina import lax
from lamina.ir import dtypes
from lamina.numpy.base.arguments import aval_of, check_arraylike, promote_dtypes_inexact, to_array
from lamina.numpy.ufuncs.operands import is_complex


def swap_last(x):
    """``x`` with its last two axes swapped."""
    nd = aval_of(x).ndim
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def adjoint(x):
    """The conjugate transpose of a batch of matrices."""
    x = swap_last(x)
    return lax.conj(x) if is_complex(x) else x


def eye_like(x):
    """Identity matrices of ``x``'s shape and dtype."""
    aval = aval_of(x)
    rows = lax.broadcasted_iota(np.int32, aval.shape, aval.ndim - 2)
    cols = lax.broadcasted_iota(np.int32, aval.shape, aval.ndim - 1)
    one = lax.broadcast_in_dim(np.asarray(1, aval.dtype), aval.shape, ())
    zero = lax.broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())
    return lax.select_n(lax.eq(rows, cols), zero, one)


def diagonal(x):
    """The diagonals of a batch of square matrices (masked sum over the last axis)."""
    masked = lax.mul(x, eye_like(x))
    return lax.reduce_sum(masked, (aval_of(x).ndim - 1,))


def as_matrix(name: str, a, *, square: bool = False, label: str | None = None):
    """``a`` as an inexact array of shape (..., m, n) (n == m when ``square``)."""
    check_arraylike(f"jnp.linalg.{name}", a)
    (a,) = promote_dtypes_inexact(to_array(a))
    shape = aval_of(a).shape
    if len(shape) < 2 or (square and shape[-1] != shape[-2]):
        want = "[..., n, n]" if square else "[..., m, n]"
        raise ValueError(f"Argument to {label or name} must have shape {want}, got {shape}.")
    return a


def real_dtype(dtype) -> np.dtype:
    return np.finfo(dtype).dtype if dtypes.issubdtype(dtype, np.inexact) else np.dtype(dtype)


def broadcast_batch(a, b, a_core: int, b_core: int):
    """``a`` and ``b`` with their leading (batch) dimensions broadcast together."""
    sa, sb = aval_of(a).shape, aval_of(b).shape
    batch = np.broadcast_shapes(sa[: len(sa) - a_core], sb[: len(sb) - b_core])

    def expand(x, shape, core):
        target = (*batch, *shape[len(shape) - core :])
        if tuple(shape) == target:
            return x
        dims = tuple(range(len(target) - len(shape), len(target)))
        return lax.broadcast_in_dim(x, target, dims)

    return expand(a, sa, a_core), expand(b, sb, b_core)


def matmul(a, b):
    """Batched matrix product with equal batch shapes."""
    nd = aval_of(a).ndim
    batch = tuple(range(nd - 2))
    return lax.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)), precision="highest")


def scalar(value, like):
    return np.asarray(value, aval_of(like).dtype)
