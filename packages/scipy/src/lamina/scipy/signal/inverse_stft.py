"""`istft`: the inverse short-time Fourier transform, by windowed overlap-add of the
inverse FFTs of the segments."""

from __future__ import annotations

import numpy as np

import lamina.numpy as jnp
from lamina.ir import dtypes
from lamina.numpy import canonicalize_axis, to_array
from lamina.scipy.signal.windows import named_window

__all__ = ["istft"]


def _overlap_add(frames, step: int):
    """Sum ``frames`` (``(..., count, length)``) placed ``step`` apart on one axis."""
    *batch, count, length = frames.shape
    positions = (np.arange(count) * step)[:, None] + np.arange(length)
    out = jnp.zeros((*batch, step * (count - 1) + length), frames.dtype)
    return out.at[..., positions].add(frames)


def istft(Zxx, fs=1.0, window: str = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2):  # fmt: skip
    """The signal whose STFT is ``Zxx`` (as scipy.signal.istft): times and signal."""
    Zxx = to_array(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, Zxx.ndim)
    time_axis = canonicalize_axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(dtypes.to_complex_dtype(Zxx.dtype))

    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg_int = int(nperseg or n_default)
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default + (input_onesided and nperseg_int == n_default + 1)
    else:
        nfft_int = int(nfft)
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg_int}).")
    noverlap_int = int(noverlap or nperseg_int // 2)
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg_int - noverlap_int

    outer = tuple(a for a in range(Zxx.ndim) if a not in (time_axis, freq_axis))
    Zxx = jnp.transpose(Zxx, (*outer, freq_axis, time_axis))
    inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    segments = inverse(Zxx, axis=-2, n=nfft)[..., :nperseg_int, :]

    if isinstance(window, (str, tuple)):
        win = named_window(window, nperseg_int, segments.dtype)
    else:
        win = jnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}")
    segments = segments * win.sum()  # undoes the 'spectrum' scaling of stft
    column = win.reshape((1,) * (segments.ndim - 2) + (-1, 1))  # along each segment
    frames = jnp.swapaxes(segments * column, -2, -1)
    x = _overlap_add(frames, step)
    norm = _overlap_add(jnp.broadcast_to(win * win, frames.shape[-2:]), step)

    if boundary:
        half = nperseg_int // 2
        x, norm = x[..., half:-half], norm[..., half:-half]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)

    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        x = jnp.moveaxis(x, -1, time_axis - (freq_axis < time_axis))
    time = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x
