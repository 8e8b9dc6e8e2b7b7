"""Matrices of a given order: ``dft``, ``hadamard``, ``helmert``, ``hilbert``,
``invhilbert``, ``pascal``, ``invpascal``. Binomial coefficients are computed in
floating point through ``lgamma``, as JAX does, so large orders are not exact."""

import math
from functools import partial

import numpy as np

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import jit
from lamina.ir import dtypes

_KINDS = ["symmetric", "lower", "upper"]


def _binom(n, k):
    """n choose k through lgamma; 0 for k > n (lgamma has poles there)."""
    return lax.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def _comb(n, k):
    """n choose k as ``jax.scipy.special.comb``: 0 outside 0 <= k <= n."""
    ok = (k <= n) & (n >= 0) & (k >= 0)
    n, k = jnp.where(ok, n, 0.0), jnp.where(ok, k, 0.0)
    value = lax.exp(lax.lgamma(n + 1) - lax.lgamma(k + 1) - lax.lgamma(n + 1 - k))
    return jnp.where(ok, value, 0.0)


@partial(jit, static_argnums=0)
def _hilbert(n):
    a = lax.broadcasted_iota(dtypes.default_float_dtype(), (n, 1), 0)
    return 1 / (a + a.T + 1)


def hilbert(n):
    """The n×n Hilbert matrix ``1 / (i + j + 1)``."""
    return _hilbert(n)


@partial(jit, static_argnums=0)
def _invhilbert(n):
    a = jnp.arange(n, dtype=dtypes.default_float_dtype())
    i, j = a[:, None], a[None, :]
    s = i + j
    return (
        (-1.0) ** s
        * (s + 1.0)
        * _comb(n + i, n - j - 1)
        * _comb(n + j, n - i - 1)
        * _comb(s, i) ** 2
    )


def invhilbert(n):
    """The inverse of the n×n Hilbert matrix (in floating point)."""
    return _invhilbert(n)


def _check_kind(kind, verb):
    kind = "symmetric" if kind is None else kind
    if kind not in _KINDS:
        raise ValueError(f"Expected kind to be {verb}: {_KINDS}; got {kind}")
    return kind


def pascal(n, kind=None):
    """The n×n Pascal matrix: "symmetric" (default), "lower" or "upper" triangular.
    Always float32, as in JAX."""
    return _pascal(n, _check_kind(kind, "on of"))


@partial(jit, static_argnums=(0, 1))
def _pascal(n, kind):
    a = jnp.arange(n, dtype=np.float32)
    lower = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return jnp.dot(lower, lower.T)


def invpascal(n, kind=None):
    """The inverse of ``pascal(n, kind)``."""
    return _invpascal(n, _check_kind(kind, "one of"))


@partial(jit, static_argnums=(0, 1))
def _invpascal(n, kind):
    a = jnp.arange(n, dtype=dtypes.default_float_dtype())
    i, j = a[:, None], a[None, :]
    lower = ((-1.0) ** (i - j)) * _binom(i, j)
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return jnp.dot(lower.T, lower)


def helmert(n, full=False):
    """The Helmert matrix: (n-1)×n orthonormal rows orthogonal to the ones vector, with
    the normalized ones vector on top when ``full``."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    return _helmert(n, bool(full))


@partial(jit, static_argnums=(0, 1))
def _helmert(n, full):
    i = jnp.arange(n - 1)[:, None]
    j = jnp.arange(n)[None, :]
    k = i + 1
    kf = k.astype(dtypes.default_float_dtype())
    denom = jnp.sqrt(kf * (kf + 1))
    h = jnp.where(j <= i, 1.0 / denom, jnp.where(j == k, -kf / denom, jnp.zeros_like(denom)))
    if full:
        top = jnp.full((1, n), 1.0 / jnp.sqrt(n), dtype=h.dtype)
        h = jnp.concatenate([top, h], axis=0)
    return h


def hadamard(n, dtype=int):
    """The n×n Hadamard matrix (Sylvester's construction) for n a power of two."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    return _hadamard(n, dtype)


@partial(jit, static_argnums=(0, 1))
def _hadamard(n, dtype):
    h = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = jnp.block([[h, h], [h, -h]])
    return h


def dft(n, scale=None, *, dtype=None):
    """The n×n discrete Fourier transform matrix ``exp(-2πi jk / n)``, divided by
    ``sqrt(n)`` (``scale="sqrtn"``) or n (``"n"``)."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.default_complex_dtype()
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "dft")
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    return _dft(n, scale, dtype)


@partial(jit, static_argnums=(0, 1, 2))
def _dft(n, scale, dtype):
    a = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        return omegas / jnp.sqrt(n)
    if scale == "n":
        return omegas / n
    return omegas
