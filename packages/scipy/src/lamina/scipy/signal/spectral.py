"""Windowed-FFT spectral estimates: `stft`, `csd` and `welch`. The signal is cut into
overlapping segments along an axis, each detrended, windowed and transformed."""

from __future__ import annotations

import operator
import warnings
from functools import partial

import numpy as np

import lamina.numpy as jnp
from lamina.ir import dtypes
from lamina.numpy import (
    canonicalize_axis,
    check_arraylike,
    promote_dtypes_complex,
    promote_dtypes_inexact,
)
from lamina.scipy.signal.detrending import detrend as detrend_trend
from lamina.scipy.signal.windows import segment_window

__all__ = ["csd", "stft", "welch"]


def _padder(mode: str, **kwargs):
    def pad(x, n: int):
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode, **kwargs)

    return pad


def _odd_extension(x, n: int):
    """``x`` extended by ``n`` points at both ends of its last axis, point-reflected
    about the end values."""
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(
            f"The extension length n ({n}) is too big. It must not exceed "
            f"x.shape[axis]-1, which is {x.shape[-1] - 1}."
        )
    left = 2 * x[..., :1] - jnp.flip(x[..., 1 : n + 1], axis=-1)
    right = 2 * x[..., -1:] - jnp.flip(x[..., -(n + 1) : -1], axis=-1)
    return jnp.concatenate([left, x, right], axis=-1)


_EXTENSIONS = {
    "even": _padder("reflect"),
    "odd": _odd_extension,
    "constant": _padder("edge"),
    "zeros": _padder("constant", constant_values=0.0),
    None: lambda x, n: x,
}


def _segment_spectra(x, win, detrend_func, nperseg, noverlap, nfft, twosided):
    """The FFT of each windowed segment: shape ``(..., segments, frequencies)``."""
    starts = np.arange(0, x.shape[-1] - nperseg + 1, nperseg - noverlap)
    segments = x[..., starts[:, None] + np.arange(nperseg)]
    segments = detrend_func(segments)
    if jnp.iscomplexobj(win):
        (segments,) = promote_dtypes_complex(segments)
    segments = win * segments
    if twosided:
        return jnp.fft.fft(segments, n=nfft)
    return jnp.fft.rfft(jnp.real(segments), n=nfft)


def _detrend_function(detrend, axis):
    if isinstance(detrend, str):
        return partial(detrend_trend, type=detrend, axis=-1)
    if callable(detrend):
        if axis == -1:
            return detrend
        return lambda d: jnp.moveaxis(detrend(jnp.moveaxis(d, axis, -1)), -1, axis)
    if not detrend:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend}")


def _pad_to(x, length: int):
    extra = length - x.shape[-1]
    return jnp.concatenate([x, jnp.zeros((*x.shape[:-1], extra), x.dtype)], axis=-1)


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
              scaling, axis, mode, boundary=None, padded=False):  # fmt: skip
    """Frequencies, segment times and spectra (``mode`` 'psd' or 'stft') of ``x``, or
    the cross spectra of ``x`` and ``y``."""
    if boundary not in _EXTENSIONS:
        raise ValueError(
            f"Unknown boundary option '{boundary}', must be one of: {list(_EXTENSIONS)}"
        )
    axis = canonicalize_axis(operator.index(axis), np.ndim(x))
    if y is None:
        check_arraylike("spectral_helper", x)
        (x,) = promote_dtypes_inexact(x)
        outer = x.shape[:axis] + x.shape[axis + 1 :]
    else:
        check_arraylike("spectral_helper", x, y)
        x, y = promote_dtypes_inexact(x, y)
        if x.ndim != y.ndim:
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outer = jnp.broadcast_shapes(
                x.shape[:axis] + x.shape[axis + 1 :], y.shape[:axis] + y.shape[axis + 1 :]
            )
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = dtypes.to_complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype

    if nperseg is not None:
        nperseg = int(nperseg)
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = segment_window(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)

    if x.size == 0 or (y is not None and y.size == 0):
        length = x.shape[axis] if y is None else min(x.shape[axis], y.shape[axis])
        shape = x.shape if y is None else (*outer[:axis], length, *outer[axis:])
        return (
            jnp.zeros(shape, freq_dtype),
            jnp.zeros(shape, freq_dtype),
            jnp.zeros(shape, result_dtype),
        )

    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        if y.ndim > 1:
            y = jnp.moveaxis(y, axis, -1)
        length = max(x.shape[-1], y.shape[-1])
        x, y = _pad_to(x, length), _pad_to(y, length)
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap

    signals = [x] if y is None else [x, y]
    if boundary is not None:
        signals = [_EXTENSIONS[boundary](s, nperseg // 2) for s in signals]
    if padded:
        extra = (-(signals[0].shape[-1] - nperseg) % step) % nperseg
        signals = [_pad_to(s, s.shape[-1] + extra) for s in signals]
    detrend_func = _detrend_function(detrend, axis)

    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    (scale,) = promote_dtypes_complex(scale)

    twosided = not return_onesided
    if return_onesided and any(jnp.iscomplexobj(s) for s in signals):
        twosided = True
        warnings.warn("Input data is complex, switching to return_onesided=False", stacklevel=3)
    freqs = (jnp.fft.fftfreq if twosided else jnp.fft.rfftfreq)(nfft, 1 / fs, dtype=freq_dtype)

    spectra = [
        _segment_spectra(s, win, detrend_func, nperseg, noverlap, nfft, twosided) for s in signals
    ]
    if y is not None:
        result = jnp.conjugate(spectra[0]) * spectra[1]
    elif mode == "psd":
        result = jnp.conjugate(spectra[0]) * spectra[0]
    else:
        result = spectra[0]
    result = result * scale
    if not twosided and mode == "psd":
        # Fold the negative frequencies onto the positive ones (not DC, nor Nyquist).
        end = None if nfft % 2 else -1
        result = result.at[..., 1:end].multiply(2)

    length = signals[0].shape[-1]
    time = np.arange(nperseg / 2, length - nperseg / 2 + 1, step, dtype=freq_dtype)
    time = jnp.asarray(time) / fs
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = jnp.real(result)
    return freqs, time, jnp.moveaxis(result, -1, axis)


def stft(x, fs=1.0, window: str = "hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend: bool = False, return_onesided: bool = True,
         boundary: str | None = "zeros", padded: bool = True, axis: int = -1):  # fmt: skip
    """The short-time Fourier transform of ``x`` (as scipy.signal.stft): frequencies,
    segment times and the transform."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     "spectrum", axis, "stft", boundary, padded)  # fmt: skip


def csd(x, y, fs=1.0, window: str = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean"):  # fmt: skip
    """The cross power spectral density of ``x`` and ``y`` by Welch's method (as
    scipy.signal.csd): frequencies and the averaged spectrum."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd")  # fmt: skip
    if y is not None:
        (pxy,) = promote_dtypes_complex(pxy)
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                # SciPy's bias of the median of chi-squared(2) variables.
                k = np.arange(2.0, pxy.shape[-1], 2)
                bias = 1 + np.sum(1.0 / (k + 1) - 1.0 / k)
                if jnp.iscomplexobj(pxy):
                    pxy = jnp.median(jnp.real(pxy), axis=-1) + 1j * jnp.median(
                        jnp.imag(pxy), axis=-1
                    )
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / jnp.asarray(bias, pxy.dtype)
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window: str = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean"):  # fmt: skip
    """The power spectral density of ``x`` by Welch's method (as scipy.signal.welch)."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)  # fmt: skip
    return freqs, jnp.real(pxx)
