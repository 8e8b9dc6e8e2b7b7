"""Direct N-dimensional convolution and correlation (`convolve`, `correlate`, and their
2-D forms) as one lax convolution, the smaller operand flipped as the kernel."""

from __future__ import annotations

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.numpy import promote_dtypes_inexact
from lamina.scipy.signal.fft_convolution import fftconvolve

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d"]


def _convolve_nd(in1, in2, mode: str, precision):
    if mode not in ("full", "same", "valid"):
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if np.ndim(in1) != np.ndim(in2):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if np.size(in1) == 0 or np.size(in2) == 0:
        raise ValueError(
            "zero-size arrays not supported in convolutions, got shapes "
            f"{np.shape(in1)} and {np.shape(in2)}."
        )
    in1, in2 = promote_dtypes_inexact(in1, in2)
    bigger = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    smaller = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    if not (bigger or smaller):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape2 = in2.shape  # the 'same' output is centred on in1 as given
    if smaller:
        in1, in2 = in2, in1
    kernel = in2.shape
    if mode == "valid":
        padding = [(0, 0)] * len(kernel)
    elif mode == "same":
        pairs = zip(kernel, shape2, strict=True)
        padding = [(k - 1 - (s - 1) // 2, k - s + (s - 1) // 2) for k, s in pairs]
    else:
        padding = [(k - 1, k - 1) for k in kernel]
    out = lax.conv_general_dilated(
        in1[None, None],
        jnp.flip(in2)[None, None],
        (1,) * len(kernel),
        padding,
        precision=precision,
    )
    return out[0, 0]


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """Convolve two N-dimensional arrays (as scipy.signal.convolve)."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _convolve_nd(in1, in2, mode, precision)
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """Cross-correlate two N-dimensional arrays (as scipy.signal.correlate)."""
    return convolve(in1, jnp.flip(jnp.conj(in2)), mode, method=method, precision=precision)


def _check_2d(name: str, in1, in2, boundary: str, fillvalue) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue: float = 0,
               precision=None):  # fmt: skip
    """Convolve two 2-D arrays (as scipy.signal.convolve2d; zero fill only)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue: float = 0,
                precision=None):  # fmt: skip
    """Cross-correlate two 2-D arrays (as scipy.signal.correlate2d; zero fill only)."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    smaller = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    same_shape = in1.shape == in2.shape
    # Correlating is convolving with one operand reversed and conjugated; which one is
    # reversed decides where the 'same' and 'valid' windows fall, as in SciPy.
    if mode == "valid" and smaller and not same_shape:
        return _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision)
    if mode == "full" and smaller:
        return jnp.conj(_convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision))
    return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision))
