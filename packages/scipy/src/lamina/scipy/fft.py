"""JAX's `jax.scipy.fft`: the discrete cosine transform (type 2) and its inverse, in
one and several dimensions, computed with one complex FFT of reordered input
(Makhoul's method)."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.ir import dtypes
from lamina.numpy import (
    canonicalize_axis,
    check_arraylike,
    promote_dtypes_complex,
    promote_dtypes_inexact,
)

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name: str, type: int, norm) -> None:
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")


def _resize(x, n: int | None, axis: int):
    """``x`` zero-padded or truncated to length ``n`` along ``axis``."""
    if n is None:
        return x
    config = [(0, n - x.shape[axis] if a == axis else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, lax.full((), 0, x.dtype), config)


def _interleave_order(n: int) -> np.ndarray:
    """Even positions forward, then odd positions backward."""
    return np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])


def _along(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-D ``values`` shaped to broadcast along ``axis`` of an ``ndim`` array."""
    return values.reshape([-1 if a == axis else 1 for a in range(ndim)])


def _ortho_factor(n: int) -> np.ndarray:
    """The divisor that makes the unnormalized DCT-II orthonormal."""
    factor = np.full(n, 2.0 * n)
    factor[:1] = 4.0 * n
    return np.sqrt(factor)


def _inexact(name: str, x):
    check_arraylike(name, x)
    (x,) = promote_dtypes_inexact(x)
    return x


def _is_complex(x) -> bool:
    return dtypes.issubdtype(x.dtype, np.complexfloating)


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The type-2 discrete cosine transform of ``x`` along ``axis`` (as scipy.fft.dct)."""
    _check("dct", type, norm)
    x = _inexact("dct", x)
    if _is_complex(x):
        parts = (
            dct(jnp.real(x), n=n, axis=axis, norm=norm),
            dct(jnp.imag(x), n=n, axis=axis, norm=norm),
        )
        return lax.complex(*parts)
    axis = canonicalize_axis(axis, x.ndim)
    x = _resize(x, n, axis)
    size = x.shape[axis]
    spectrum = jnp.fft.fft(jnp.take(x, _interleave_order(size), axis=axis), axis=axis)
    twiddle = 2 * np.exp(-0.5j * np.pi * np.arange(size) / size)
    twiddle = _along(twiddle, axis, x.ndim).astype(spectrum.dtype)
    out = jnp.real(spectrum * twiddle)
    if norm == "ortho":
        out = out / _along(_ortho_factor(size), axis, x.ndim).astype(out.dtype)
    return out


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of :func:`dct` along ``axis`` (as scipy.fft.idct)."""
    _check("idct", type, norm)
    x = _inexact("idct", x)
    if _is_complex(x):
        parts = (
            idct(jnp.real(x), n=n, axis=axis, norm=norm),
            idct(jnp.imag(x), n=n, axis=axis, norm=norm),
        )
        return lax.complex(*parts)
    axis = canonicalize_axis(axis, x.ndim)
    x = _resize(x, n, axis)
    size = x.shape[axis]
    # Undo the twiddle of `dct` on the (halved) spectrum; the real part of its inverse
    # FFT is the interleaved signal.
    weights = np.exp(0.5j * np.pi * np.arange(size) / size)
    weights[:1] /= 2
    if norm == "ortho":
        weights = weights * _ortho_factor(size)
    (spectrum,) = promote_dtypes_complex(x)
    spectrum = spectrum * _along(weights, axis, x.ndim).astype(spectrum.dtype)
    v = jnp.real(jnp.fft.ifft(spectrum, axis=axis))
    return jnp.take(v, np.argsort(_interleave_order(size)), axis=axis)


def _axes_and_sizes(x, s, axes):
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = range(x.ndim - len(s), x.ndim) if s is not None else range(x.ndim)
    axes = tuple(canonicalize_axis(a, x.ndim) for a in axes)
    sizes = [] if s is None else s[: len(axes)]
    return list(zip(axes, [*sizes, *[None] * (len(axes) - len(sizes))], strict=True))


def dctn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None):  # fmt: skip
    """The type-2 DCT over several axes (as scipy.fft.dctn)."""
    _check("dctn", type, norm)
    x = _inexact("dctn", x)
    for axis, size in _axes_and_sizes(x, s, axes):
        x = dct(x, n=size, axis=axis, norm=norm)
    return x


def idctn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):  # fmt: skip
    """The inverse of :func:`dctn` (as scipy.fft.idctn)."""
    _check("idctn", type, norm)
    x = _inexact("idctn", x)
    for axis, size in _axes_and_sizes(x, s, axes):
        x = idct(x, n=size, axis=axis, norm=norm)
    return x
