"""Matrices built from the entries of vectors: ``block_diag``, ``circulant``,
``companion``, ``convolution_matrix``, ``fiedler``, ``fiedler_companion``, ``hankel``,
``leslie``, ``toeplitz``. Those taking vectors map over leading (batch) axes."""

import operator
from functools import partial

import numpy as np

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import jit
from lamina.scipy.linalg.operands import promote_common, strong


def block_diag(*arrs):
    """The block-diagonal matrix with the given arrays (scalars, vectors as 1×n rows,
    matrices) as its blocks, in their common dtype."""
    if len(arrs) == 0:
        arrs = (jnp.zeros((1, 0)),)
    arrs = promote_common(*arrs)
    for i, a in enumerate(arrs):
        if a.ndim > 2:
            raise ValueError(
                "Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, "
                f"got {a} at argument {i}."
            )
    blocks = [jnp.atleast_2d(a) for a in arrs]
    total = sum(b.shape[1] for b in blocks)
    rows, start = [], 0
    for b in blocks:
        cols = b.shape[1]
        rows.append(jnp.pad(b, ((0, 0), (start, total - start - cols))))
        start += cols
    return strong(jnp.concatenate(rows, axis=0))


def _toeplitz_matrix(c, r):
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return jnp.empty((m, n), dtype=jnp.promote_types(c.dtype, r.dtype))
    # Entry (i, j) is c[i - j] on and below the diagonal and r[j - i] above it.
    entries = jnp.concatenate((c[::-1], r[1:]))
    return entries[(m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]]


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (default
    ``conj(c)``; ``r[0]`` is ignored). Leading axes of ``c`` and ``r`` are batch axes."""
    if r is None:
        jnp.check_arraylike("toeplitz", c)
        r = jnp.conjugate(jnp.asarray(c))
    else:
        jnp.check_arraylike("toeplitz", c, r)
    return _toeplitz(jnp.atleast_1d(jnp.asarray(c)), jnp.atleast_1d(jnp.asarray(r)))


@jit
def _toeplitz(c, r):
    return strong(jnp.vectorize(_toeplitz_matrix, signature="(m),(n)->(m,n)")(c, r))


def _hankel_matrix(c, r):
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return jnp.empty((m, n), dtype=jnp.result_type(c, r))
    entries = jnp.concatenate((c, r[1:]))
    return entries[np.arange(m)[:, None] + np.arange(n)[None, :]]


def hankel(c, r=None):
    """The Hankel matrix with first column ``c`` and last row ``r`` (default zeros;
    ``r[0]`` is ignored). Leading axes are batch axes."""
    if r is None:
        jnp.check_arraylike("hankel", c)
        c = jnp.asarray(c)
        r = jnp.zeros_like(c)
    else:
        jnp.check_arraylike("hankel", c, r)
        c, r = jnp.asarray(c), jnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    if c.ndim < r.ndim:
        c = lax.expand_dims(c, range(r.ndim - c.ndim))
    elif r.ndim < c.ndim:
        r = lax.expand_dims(r, range(c.ndim - r.ndim))
    return _hankel(c, r)


@jit
def _hankel(c, r):
    return strong(jnp.vectorize(_hankel_matrix, signature="(m),(n)->(m,n)")(c, r))


def _circulant_matrix(c):
    n = c.shape[0]
    return c[(np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def circulant(c):
    """The circulant matrix whose first column is ``c`` (each column is the previous
    one rolled down by one). Leading axes are batch axes."""
    jnp.check_arraylike("circulant", c)
    return _circulant(jnp.atleast_1d(jnp.asarray(c)))


@jit
def _circulant(c):
    return jnp.vectorize(_circulant_matrix, signature="(n)->(n,n)")(c)


def _leslie_matrix(f, s):
    f, s = promote_common(f, s)
    return jnp.diag(s, k=-1).at[0].set(f)


def leslie(f, s):
    """The Leslie matrix: fecundities ``f`` in the first row, survival rates ``s`` on
    the subdiagonal. Leading axes are batch axes."""
    jnp.check_arraylike("leslie", f, s)
    f, s = jnp.atleast_1d(f), jnp.atleast_1d(s)
    if f.shape[-1] < 2:
        raise ValueError(
            f"The length of f along the last axis must be at least 2; got shape {f.shape}."
        )
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError(
            "Incorrect lengths for f and s. The length of s along the last axis must be "
            f"one less than the length of f; got f shape {f.shape} and s shape {s.shape}."
        )
    return _leslie(f, s)


@jit
def _leslie(f, s):
    return jnp.vectorize(_leslie_matrix, signature="(n),(m)->(n,n)")(f, s)


def _companion_matrix(a):
    first_row = -a[1:] / a[0]
    m = a.shape[0] - 1
    return jnp.eye(m, m, k=-1, dtype=first_row.dtype).at[0].set(first_row)


def companion(a):
    """The companion matrix of the polynomial with coefficients ``a`` (highest degree
    first): first row ``-a[1:] / a[0]``, ones on the subdiagonal."""
    (a,) = jnp.promote_args_inexact("companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(
            f"The length of `a` along the last axis must be at least 2; got shape {a.shape}."
        )
    return _companion(a)


@jit
def _companion(a):
    return jnp.vectorize(_companion_matrix, signature="(n)->(m,m)")(a)


def fiedler(a):
    """The symmetric Fiedler matrix ``|a[i] - a[j]|``. Leading axes are batch axes."""
    jnp.check_arraylike("fiedler", a)
    a = jnp.atleast_1d(a)
    return jnp.abs(a[..., None] - a[..., None, :])


def _fiedler_companion_matrix(a):
    n = a.shape[0] - 1
    if n == 0:
        return jnp.zeros((0, 0), a.dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    # The pentadiagonal layout (0-based): column 0 holds -a[1], 1 in rows 0, 1; an even
    # row i holds -a[i+2] at i+1, 1 at i+2 and, from row 2 on, -a[i+1] at i-1; an odd
    # row i >= 3 holds 1 at i-2.
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    even = i % 2 == 0
    conditions = [
        (i == 0) & (j == 0),
        (i == 1) & (j == 0),
        (j == i + 1) & even,
        (j == i + 2) & even,
        (j == i - 1) & even & (i >= 2),
        (j == i - 2) & ~even & (i >= 3),
    ]
    one = jnp.ones((), a.dtype)
    choices = [-a[1], one, -a[np.minimum(i + 2, n)], one, -a[np.minimum(i + 1, n)], one]
    return jnp.select(conditions, choices, default=jnp.zeros((), a.dtype))


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients ``a`` (highest
    degree first): pentadiagonal, with the same eigenvalues as ``companion(a)``."""
    (a,) = jnp.promote_args_inexact("fiedler_companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError(
            "fiedler_companion requires the last axis of 'a' to have nonzero length, but "
            f"got an array of shape {a.shape}."
        )
    return _fiedler_companion(a)


@jit
def _fiedler_companion(a):
    return jnp.vectorize(_fiedler_companion_matrix, signature="(n)->(m,m)")(a)


def convolution_matrix(a, n, mode="full"):
    """The Toeplitz matrix A with ``A @ v == convolve(a, v, mode)`` for vectors v of
    length ``n``. Leading axes of ``a`` are batch axes."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    jnp.check_arraylike("convolution_matrix", a)
    a = jnp.asarray(a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    return _convolution_matrix(a, n, mode)


@partial(jit, static_argnums=(1, 2))
def _convolution_matrix(a, n, mode):
    m = a.shape[-1]
    pad = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    padded, flipped = jnp.pad(a, pad), jnp.pad(jnp.flip(a, axis=-1), pad)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        begin, end = trim // 2, trim - trim // 2
    elif mode == "valid":
        begin = end = min(n, m) - 1
    else:
        begin = end = 0
    column = lax.slice_in_dim(padded, begin, length - end, axis=-1)
    row = lax.slice_in_dim(flipped, length - n - begin, length - begin, axis=-1)
    return _toeplitz(column, row)
