"""``jax.numpy.fft``: NumPy's discrete Fourier transforms on ``lax.fft``.

``lax.fft`` transforms up to three trailing dimensions at once. An n-dimensional
transform over other axes moves them to the end, transforms them in groups of at most
three (for real transforms the real part is the group holding the last axis), and
moves them back. ``norm`` scales the result: ``"backward"`` (the default) leaves the
forward transform unscaled and divides the inverse by n, ``"forward"`` the opposite,
``"ortho"`` divides both by sqrt(n).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np
from lamina import lax
from lamina.interpreters import device_put
from lamina.ir import dtypes, wrap_api_functions
from lamina.numpy.base.arguments import aval_of, canonicalize_axis, check_arraylike, to_array

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = (None, "backward", "ortho", "forward")
_MAX_AXES_AT_ONCE = 3


def _check_norm(norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _scale(x, n: int, norm, inverse: bool):
    """The normalisation of a transform of total length ``n``. lax's inverse transforms
    already divide by ``n`` (the "backward" convention)."""
    if norm == "ortho":
        factor = math.sqrt(n) if inverse else 1 / math.sqrt(n)
    elif norm == "forward":
        factor = n if inverse else 1 / n
    else:
        return x
    return x * np.array(factor, aval_of(x).dtype)


def _resize(x, axis: int, length: int):
    """``x`` truncated or zero-padded to ``length`` along ``axis``."""
    size = aval_of(x).shape[axis]
    if length < size:
        return lax.slice_in_dim(x, 0, length, axis=axis)
    if length > size:
        config = [(0, 0, 0)] * aval_of(x).ndim
        config[axis] = (0, length - size, 0)
        return lax.pad(x, np.zeros((), aval_of(x).dtype), config)
    return x


def _to_transform_dtype(x, real_input: bool):
    dtype = aval_of(x).dtype
    want = dtypes.to_inexact_dtype(dtype) if real_input else dtypes.to_complex_dtype(dtype)
    if real_input and dtypes.issubdtype(dtype, np.complexfloating):
        raise ValueError("only real valued inputs supported for rfft")
    if real_input and dtype in (np.dtype(np.float16), np.dtype(dtypes.bfloat16)):
        raise ValueError(f"RFFT input must be float32 or float64, got {dtype}")
    return lax.convert_element_type(x, want) if dtype != want else x


def _axes_and_lengths(name, a, s, axes):
    ndim = aval_of(a).ndim
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    axes = tuple(canonicalize_axis(ax, ndim) for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"jax.numpy.fft.{name} does not support repeated axes. Got axes {axes}.")
    if s is None:
        s = tuple(aval_of(a).shape[ax] for ax in axes)
    s = tuple(operator.index(n) for n in s)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if any(n < 1 for n in s):
        raise ValueError("Shape should be positive.")
    return axes, s


def _transform_trailing(x, fft_type, lengths: Sequence[int]):
    return lax.fft(x, fft_type, tuple(lengths))


def _move_to_end(x, axes):
    ndim = aval_of(x).ndim
    perm = [d for d in range(ndim) if d not in axes] + list(axes)
    if perm == list(range(ndim)):
        return x, None
    return lax.transpose(x, perm), tuple(int(i) for i in np.argsort(perm))


def _complex_transform(x, axes, inverse: bool):
    """Complex FFT (or IFFT, divided by n as lax does) over ``axes``, three at a time."""
    fft_type = lax.FftType.IFFT if inverse else lax.FftType.FFT
    for start in range(0, len(axes), _MAX_AXES_AT_ONCE):
        group = axes[start : start + _MAX_AXES_AT_ONCE]
        moved, back = _move_to_end(x, group)
        lengths = aval_of(moved).shape[len(aval_of(moved).shape) - len(group) :]
        moved = _transform_trailing(moved, fft_type, lengths)
        x = lax.transpose(moved, back) if back is not None else moved
    return x


def _c2c(name, a, s, axes, norm, inverse):
    check_arraylike(f"jax.numpy.fft.{name}", a)
    _check_norm(norm)
    a = _to_transform_dtype(to_array(a), real_input=False)
    axes, s = _axes_and_lengths(name, a, s, axes)
    for ax, n in zip(axes, s, strict=True):
        a = _resize(a, ax, n)
    out = _complex_transform(a, axes[::-1], inverse)
    return _scale(out, math.prod(s), norm, inverse)


def _r2c(name, a, s, axes, norm):
    check_arraylike(f"jax.numpy.fft.{name}", a)
    _check_norm(norm)
    a = _to_transform_dtype(to_array(a), real_input=True)
    axes, s = _axes_and_lengths(name, a, s, axes)
    for ax, n in zip(axes, s, strict=True):
        a = _resize(a, ax, n)
    real_group = axes[-_MAX_AXES_AT_ONCE:]
    moved, back = _move_to_end(a, real_group)
    lengths = aval_of(moved).shape[aval_of(moved).ndim - len(real_group) :]
    moved = _transform_trailing(moved, lax.FftType.RFFT, lengths)
    out = lax.transpose(moved, back) if back is not None else moved
    out = _complex_transform(out, axes[:-_MAX_AXES_AT_ONCE][::-1], inverse=False)
    return _scale(out, math.prod(s), norm, inverse=False)


def _c2r(name, a, s, axes, norm):
    check_arraylike(f"jax.numpy.fft.{name}", a)
    _check_norm(norm)
    a = _to_transform_dtype(to_array(a), real_input=False)
    given_s = s
    axes, s = _axes_and_lengths(name, a, s, axes)
    if given_s is None:  # the last axis holds n//2 + 1 bins of n = 2 * (bins - 1)
        s = (*s[:-1], 2 * (aval_of(a).shape[axes[-1]] - 1))
    for ax, n in zip(axes[:-1], s[:-1], strict=True):
        a = _resize(a, ax, n)
    a = _resize(a, axes[-1], s[-1] // 2 + 1)
    leading = axes[:-_MAX_AXES_AT_ONCE]
    if leading:
        a = _complex_transform(a, leading[::-1], inverse=True)
    real_group = axes[-_MAX_AXES_AT_ONCE:]
    moved, back = _move_to_end(a, real_group)
    moved = _transform_trailing(moved, lax.FftType.IRFFT, s[-len(real_group) :])
    out = lax.transpose(moved, back) if back is not None else moved
    return _scale(out, math.prod(s), norm, inverse=True)


def _one_axis(n, axis):
    return (None if n is None else (n,)), (axis,)


def fft(a, n=None, axis=-1, norm=None):
    return _c2c("fft", a, *_one_axis(n, axis), norm, inverse=False)


def ifft(a, n=None, axis=-1, norm=None):
    return _c2c("ifft", a, *_one_axis(n, axis), norm, inverse=True)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _c2c("fft2", a, s, axes, norm, inverse=False)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _c2c("ifft2", a, s, axes, norm, inverse=True)


def fftn(a, s=None, axes=None, norm=None):
    return _c2c("fftn", a, s, axes, norm, inverse=False)


def ifftn(a, s=None, axes=None, norm=None):
    return _c2c("ifftn", a, s, axes, norm, inverse=True)


def rfft(a, n=None, axis=-1, norm=None):
    return _r2c("rfft", a, *_one_axis(n, axis), norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _r2c("rfft2", a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    return _r2c("rfftn", a, s, axes, norm)


def irfft(a, n=None, axis=-1, norm=None):
    return _c2r("irfft", a, *_one_axis(n, axis), norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return _c2r("irfft2", a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    return _c2r("irfftn", a, s, axes, norm)


_SWAPPED_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(a, n=None, axis=-1, norm=None):
    """The FFT of a signal with Hermitian symmetry, given its first half: a real
    spectrum of length ``n``."""
    _check_norm(norm)
    check_arraylike("jax.numpy.fft.hfft", a)
    return irfft(lax.conj(_to_transform_dtype(to_array(a), False)), n, axis, _SWAPPED_NORM[norm])


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of ``hfft``: half the Hermitian spectrum of a real signal."""
    _check_norm(norm)
    return lax.conj(rfft(a, n, axis, _SWAPPED_NORM[norm]))


def _frequencies(name, n, d, dtype, count):
    n = operator.index(n)
    dtype = dtypes.check_and_canonicalize_user_dtype(
        dtype if dtype is not None else dtypes.default_float_dtype(), name
    )
    bins = np.arange(count(n), dtype=np.int64)
    if name == "fftfreq":
        bins = np.where(bins < (n + 1) // 2, bins, bins - n)
    spacing = lax.convert_element_type(to_array(d) * n, dtype)
    return lax.div(to_array(np.asarray(bins, dtype)), spacing)


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an ``n``-point FFT with sample spacing ``d``."""
    return _placed(_frequencies("fftfreq", n, d, dtype, lambda n: n), device)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an ``n``-point real FFT (``n // 2 + 1`` of them)."""
    return _placed(_frequencies("rfftfreq", n, d, dtype, lambda n: n // 2 + 1), device)


def _placed(x, device):
    if device is None:
        return x

    return device_put(x, device)


def _roll_static(x, shifts: dict[int, int]):
    for axis, shift in shifts.items():
        size = aval_of(x).shape[axis]
        shift %= size if size else 1
        if shift:
            tail = lax.slice_in_dim(x, size - shift, size, axis=axis)
            head = lax.slice_in_dim(x, 0, size - shift, axis=axis)
            x = lax.concatenate([tail, head], axis)
    return x


def _shift(name, x, axes, sign):
    check_arraylike(f"jax.numpy.fft.{name}", x)
    x = to_array(x)
    shape = aval_of(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = [canonicalize_axis(ax, len(shape)) for ax in axes]
    return _roll_static(x, {ax: sign * (shape[ax] // 2) for ax in axes})


def fftshift(x, axes=None):
    """``x`` with the zero-frequency term moved to the centre of each of ``axes``."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of ``fftshift``."""
    return _shift("ifftshift", x, axes, -1)


wrap_api_functions(globals(), __all__)  # tracebacks stop at the user's call
