"""Array-level helpers the linalg functions and their JVP rules are written with (they
bind lax primitives, so they trace, differentiate and batch like any lax code)."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import batching, trace_to_jaxpr
from lamina.ir import dtypes
from lamina.lax.base.operands import aval_of
from lamina.lax.base.primitives import (
    add,
    broadcast_in_dim,
    broadcasted_iota,
    convert_element_type,
    div,
    eq,
    ge,
    le,
    mul,
    real,
    reduce_sum,
    select_n,
    transpose,
)
from lamina.lax.base.primitives import conj as lax_conj
from lamina.lax.dot.dot_general import dot_general


def is_complex(x) -> bool:
    return dtypes.issubdtype(aval_of(x).dtype, np.complexfloating)


def conj(x):
    if not is_complex(x):
        return x
    return lax_conj(x)


def swap_last(x):
    nd = aval_of(x).ndim
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def adjoint(x):
    return conj(swap_last(x))


def matmul(a, b):
    """Batched ``a @ b`` over the leading axes (equal batch shapes)."""
    nd = aval_of(a).ndim
    batch = tuple(range(nd - 2))
    numbers = (((nd - 1,), (nd - 2,)), (batch, batch))
    return dot_general(a, b, numbers, precision="highest")


def triangle_mask(shape, *, lower: bool, offset: int = 0):
    nd = len(shape)
    rows = add(broadcasted_iota(np.int32, shape, nd - 2), np.int32(offset))
    cols = broadcasted_iota(np.int32, shape, nd - 1)
    return ge(rows, cols) if lower else le(rows, cols)


def _lower_mask(shape, k):
    """True on and below diagonal ``k`` of the trailing matrices of ``shape`` (built for
    one matrix, then broadcast, as JAX builds it)."""
    mask = triangle_mask(shape[-2:], lower=True, offset=k)
    if len(shape) == 2:
        return mask
    return broadcast_in_dim(mask, tuple(shape), (len(shape) - 2, len(shape) - 1))


def tril(x, k: int = 0):
    """Entries on and below diagonal ``k``; zero above."""
    mask = _lower_mask(aval_of(x).shape, k)
    return select_n(mask, zeros_like(x), x)


def triu(x, k: int = 0):
    """Entries on and above diagonal ``k``; zero below."""
    mask = _lower_mask(aval_of(x).shape, k - 1)
    return select_n(mask, x, zeros_like(x))


def zeros_like(x):
    aval = aval_of(x)
    return broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())


def full(shape, value, dtype):
    return broadcast_in_dim(np.asarray(value, dtype), tuple(shape), ())


def eye_like(x):
    aval = aval_of(x)
    rows = broadcasted_iota(np.int32, aval.shape, aval.ndim - 2)
    cols = broadcasted_iota(np.int32, aval.shape, aval.ndim - 1)
    one = full(aval.shape, 1, aval.dtype)
    return select_n(eq(rows, cols), zeros_like(x), one)


def symmetrize(x):
    """``(x + xᴴ) / 2``, as JAX traces it."""
    return div(add(x, adjoint(x)), np.asarray(2, aval_of(x).dtype))


def check_rank(name: str, x, position: int = 0, rank: int = 2):
    aval = aval_of(x)
    if aval.ndim < rank:
        raise TypeError(
            f"Input {position} to {name} must have rank at least {rank}, but got shape={aval.shape}"
        )
    return aval


def as_inexact(x, name: str):
    """Operands of integer or boolean dtype become floats, as in JAX."""
    aval = aval_of(x)
    if dtypes.issubdtype(aval.dtype, np.inexact):
        return x
    return convert_element_type(x, dtypes.canonicalize_dtype(np.float64))


def move_batch_front(axis_data, vals, dims):
    """Each operand with its batch axis first (unbatched ones broadcast)."""
    return [batching.bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims, strict=True)]


def real_part(x):
    """``x`` with its imaginary part dropped, keeping ``x``'s dtype."""
    if not is_complex(x):
        return x
    return convert_element_type(real(x), aval_of(x).dtype)


def diagonal(x):
    """The diagonals of a batch of square matrices (masked sum over the last axis)."""
    aval = aval_of(x)
    masked = mul(x, eye_like(x))
    return reduce_sum(masked, (aval.ndim - 1,))


def real_diagonal(x):
    """The real parts of the diagonals of a batch of square matrices, as a real dtype."""
    d = diagonal(x)
    return real(d) if is_complex(d) else d


def inline(ctx, fun, values, avals):
    """Lower ``fun`` (lax code on operands of types ``avals``, returning a list) in
    place on the MLIR ``values``."""
    closed, _ = trace_to_jaxpr(lambda *xs: list(fun(*xs)), list(avals))
    return ctx.call(closed, list(values), inline=True)


def shift(v, offset: int):
    """``out[..., i] = v[..., i + offset]``, zero where that index is out of range
    (a product with a 0/1 matrix: slicing is another family's layer)."""
    aval = aval_of(v)
    n = aval.shape[-1]
    rows = broadcasted_iota(np.int32, (n, n), 0)
    cols = broadcasted_iota(np.int32, (n, n), 1)
    picks = convert_element_type(eq(cols, add(rows, np.int32(offset))), aval.dtype)
    return dot_general(v, picks, (((aval.ndim - 1,), (1,)), ((), ())))


def tridiagonal_matrix(dl, d, du):
    """The dense matrix with sub-diagonal ``dl[1:]``, diagonal ``d`` and super-diagonal
    ``du[:-1]`` (JAX's convention: ``dl[0]`` and ``du[-1]`` are ignored)."""
    aval = aval_of(d)
    n = aval.shape[-1]
    shape = (*aval.shape, n)
    nd = len(shape)
    rows = broadcasted_iota(np.int32, shape, nd - 2)
    cols = broadcasted_iota(np.int32, shape, nd - 1)
    by_row = tuple(range(nd - 1))
    zero = full(shape, 0, aval.dtype)
    out = select_n(eq(rows, cols), zero, broadcast_in_dim(d, shape, by_row))
    below = eq(rows, add(cols, np.int32(1)))
    out = add(out, select_n(below, zero, broadcast_in_dim(dl, shape, by_row)))
    above = eq(add(rows, np.int32(1)), cols)
    return add(out, select_n(above, zero, broadcast_in_dim(du, shape, by_row)))
