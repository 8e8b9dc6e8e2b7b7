"""The analysis window of the windowed-FFT functions: a named window made by
scipy.signal.get_window at trace time, or an array given by the caller."""

from __future__ import annotations

import warnings

import numpy as np

import lamina.numpy as jnp
import scipy.signal

__all__ = ["named_window", "segment_window"]


def named_window(window, nperseg: int, dtype):
    """The periodic window ``window`` (a name or a (name, parameters...) tuple) of
    ``nperseg`` points, as a constant of ``dtype``."""
    if isinstance(window, str) and window == "hann":
        values = np.ones(1) if nperseg == 1 else np.sin(np.pi * np.arange(nperseg) / nperseg) ** 2
    else:
        values = scipy.signal.get_window(window, nperseg)
    return jnp.asarray(np.asarray(values), dtype=dtype)


def segment_window(window, nperseg: int | None, input_length: int, dtype):
    """The window and the segment length for a signal of ``input_length`` points."""
    if isinstance(window, (str, tuple)):
        length = input_length if nperseg is None else int(nperseg)
        if length > input_length:
            warnings.warn(
                f"nperseg={length} is greater than input_length={input_length}, "
                f"using nperseg={input_length}",
                stacklevel=4,
            )
            length = input_length
        return named_window(window, length, dtype), length
    win = jnp.asarray(window, dtype=dtype)
    length = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.size:
        raise ValueError("window is longer than input signal")
    if length != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, length
