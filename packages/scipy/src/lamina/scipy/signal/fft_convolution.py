"""`fftconvolve`: N-dimensional convolution by multiplying spectra, with optional
batch axes (the axes not in ``axes`` are mapped with vmap)."""

from __future__ import annotations

from collections.abc import Sequence

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import vmap
from lamina.numpy import canonicalize_axis, check_arraylike, promote_dtypes_inexact

__all__ = ["fftconvolve"]

_MODES = ("same", "full", "valid")


def _output_window(shape1, shape2, mode: str):
    """Where the ``mode`` output starts in the full convolution, and its shape."""
    full = tuple(s1 + s2 - 1 for s1, s2 in zip(shape1, shape2, strict=True))
    if mode == "full":
        shape = full
    elif mode == "same":
        shape = tuple(shape1)
    else:
        shape = tuple(s1 - s2 + 1 for s1, s2 in zip(shape1, shape2, strict=True))
    return tuple((f - s) // 2 for f, s in zip(full, shape, strict=True)), shape


def _fftconvolve_all_axes(in1, in2, mode: str):
    if mode == "valid":
        bigger = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
        smaller = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
        if not (bigger or smaller):
            raise ValueError(
                "For 'valid' mode, One input must be at least as large as the other in "
                "every dimension."
            )
        if smaller:
            in1, in2 = in2, in1
    full = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape, strict=True)):
        conv = in1 * in2
    elif jnp.iscomplexobj(in1):
        conv = jnp.fft.ifftn(jnp.fft.fftn(in1, full) * jnp.fft.fftn(in2, full), full)
    else:
        conv = jnp.fft.irfftn(jnp.fft.rfftn(in1, full) * jnp.fft.rfftn(in2, full), full)
    start, shape = _output_window(in1.shape, in2.shape, mode)
    return lax.slice(conv, start, tuple(b + s for b, s in zip(start, shape, strict=True)))


def fftconvolve(in1, in2, mode: str = "full", axes: Sequence[int] | None = None):
    """Convolve ``in1`` with ``in2`` through FFTs (as scipy.signal.fftconvolve)."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")

    def convolve(a, b):
        return _fftconvolve_all_axes(a, b, mode)

    if axes is None:
        return convolve(in1, in2)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    axes = tuple(canonicalize_axis(a, in1.ndim) for a in axes)
    mapped = sorted(set(range(in1.ndim)) - set(axes))
    if any(in1.shape[a] != in2.shape[a] for a in mapped):
        raise ValueError(
            f"mapped axes must have same shape; got in1.shape={in1.shape} "
            f"in2.shape={in2.shape} axes={axes}"
        )
    for a in mapped:
        convolve = vmap(convolve, in_axes=a, out_axes=a)
    return convolve(in1, in2)
