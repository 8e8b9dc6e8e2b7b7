"""JAX's `jax.scipy.signal`: convolution and correlation, detrending, and windowed-FFT
spectral estimates (STFT, its inverse, Welch's PSD, cross spectral density)."""

from lamina.scipy.signal.convolution import convolve, convolve2d, correlate, correlate2d
from lamina.scipy.signal.detrending import detrend
from lamina.scipy.signal.fft_convolution import fftconvolve
from lamina.scipy.signal.inverse_stft import istft
from lamina.scipy.signal.spectral import csd, stft, welch

__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "csd",
    "detrend",
    "fftconvolve",
    "istft",
    "stft",
    "welch",
]
