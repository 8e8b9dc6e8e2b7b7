"""The ``fft`` primitive: FFT, IFFT, RFFT and IRFFT over the trailing dimensions.

All four are linear. The complex transforms are symmetric matrices, so each is its own
transpose; RFFT transposes as the full FFT of a real input keeping half the spectrum
would (pad the cotangent, FFT, real part), and IRFFT as the conjugated RFFT scaled by
``1/N`` with the doubled bins (those standing for two conjugate frequencies) counted
twice — the values JAX 0.10.2 gives.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from lamina.interpreters import ad, batching, jit
from lamina.interpreters.mlir import hlo
from lamina.ir import ShapedArray, dtypes, spec_of
from lamina.lax.base.operands import aval_of, standard_primitive
from lamina.lax.base.primitives import broadcast_in_dim, conj, convert_element_type, div, mul
from lamina.lax.slicing.dynamic_slicing import dynamic_update_slice

__all__ = ["FftType", "fft", "fft_p"]


class FftType(enum.IntEnum):
    """Which transform ``fft`` computes (printed in Jaxprs as its number, as JAX does)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}  # fmt: skip


def _real_of(dtype) -> np.dtype:
    return np.finfo(dtype).dtype


def _fft_abstract_eval(x, *, fft_type, fft_lengths):
    n = len(fft_lengths)
    if len(x.shape) < n:
        raise ValueError(
            f"FFT input shape {x.shape} must have at least as many input dimensions as "
            f"fft_lengths {fft_lengths}."
        )
    minor = tuple(x.shape[-n:]) if n else ()
    shape = list(x.shape)
    if fft_type == FftType.RFFT:
        if not dtypes.issubdtype(x.dtype, np.floating):
            raise ValueError("only real valued inputs supported for rfft")
        if minor != tuple(fft_lengths):
            raise ValueError(
                f"RFFT input shape {x.shape} minor dimensions must be equal to fft_lengths "
                f"{fft_lengths}"
            )
        shape[-1] = fft_lengths[-1] // 2 + 1
        return ShapedArray(tuple(shape), _COMPLEX_OF[np.dtype(x.dtype)])
    if not dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"only complex valued inputs supported for {fft_type.name.lower()}")
    if fft_type == FftType.IRFFT:
        want = (*fft_lengths[:-1], fft_lengths[-1] // 2 + 1)
        if minor != want:
            raise ValueError(
                f"IRFFT input shape {x.shape} minor dimensions must be equal to all except "
                f"the last fft_length, got fft_lengths={fft_lengths}"
            )
        shape[-1] = fft_lengths[-1]
        return ShapedArray(tuple(shape), _real_of(x.dtype))
    if minor != tuple(fft_lengths):
        raise ValueError(
            f"FFT input shape {x.shape} minor dimensions must be equal to fft_lengths {fft_lengths}"
        )
    return ShapedArray(x.shape, x.dtype)


def _fft_lowering(ctx, x, *, fft_type, fft_lengths):
    kind = hlo.FftTypeAttr.get(fft_type.name)
    return [hlo.fft(x, kind, list(fft_lengths))]


fft_p = standard_primitive("fft", _fft_abstract_eval, _fft_lowering)
fft_p.def_sharding(lambda x, **_: spec_of(x))  # the result keeps the operand's splits
ad.deflinear(fft_p)


def _half_spectrum_mask(like, bins, n, dtype):
    """1 for the bins standing for one frequency (DC, and Nyquist for even ``n``), 2 for
    those standing for a conjugate pair."""
    mask = broadcast_in_dim(np.array(2, dtype), (bins,), ())
    mask = dynamic_update_slice(mask, broadcast_in_dim(np.array(1, dtype), (1,), ()), (0,))
    if n % 2 == 0:
        one = broadcast_in_dim(np.array(1, dtype), (1,), ())
        mask = dynamic_update_slice(mask, one, (bins - 1,))
    ndim = len(aval_of(like).shape)
    return broadcast_in_dim(mask, (1,) * (ndim - 1) + (bins,), (ndim - 1,))


def _rfft_transpose(ct, fft_lengths):
    dtype = aval_of(ct).dtype
    mask = _half_spectrum_mask(ct, aval_of(ct).shape[-1], fft_lengths[-1], dtype)
    out = fft(div(conj(ct), mask), FftType.IRFFT, fft_lengths)
    return mul(np.array(math.prod(fft_lengths), aval_of(out).dtype), out)


def _irfft_transpose(ct, fft_lengths):
    x = fft(ct, FftType.RFFT, fft_lengths)
    dtype = aval_of(x).dtype
    mask = _half_spectrum_mask(x, aval_of(x).shape[-1], fft_lengths[-1], dtype)
    return conj(mul(mul(np.array(1 / math.prod(fft_lengths), dtype), mask), x))


_rfft_transpose = jit(_rfft_transpose, static_argnums=1)


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval)]
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft(ct, fft_type, fft_lengths)]


def _fft_batching(axis_data, vals, dims, *, fft_type, fft_lengths):
    (x,), (d,) = vals, dims
    x = batching.bdim_at_front(x, d, axis_data.size)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


fft_p.def_transpose(_fft_transpose)
fft_p.def_batching(_fft_batching)


def _fft_type(value) -> FftType:
    if isinstance(value, str):
        try:
            return FftType[value.upper()]
        except KeyError:
            raise ValueError(f"Unknown FFT type {value!r}") from None
    return FftType(value)


def _staged_fft():
    # Staged as a ``jit`` named ``fft`` around the primitive, as JAX stages it.
    def fft(x, fft_type, fft_lengths):
        dtype = aval_of(x).dtype
        if fft_type == FftType.FFT and not dtypes.issubdtype(dtype, np.complexfloating):
            if not dtypes.issubdtype(dtype, np.floating):
                dtype = dtypes.canonicalize_dtype(np.float64)
            x = convert_element_type(x, _COMPLEX_OF[np.dtype(dtype)])
        return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths)

    return jit(fft, static_argnums=(1, 2))


_jitted_fft = _staged_fft()


def fft(x, fft_type, fft_lengths):
    """The ``fft_type`` transform of ``x`` over its last ``len(fft_lengths)`` axes."""
    return _jitted_fft(x, _fft_type(fft_type), tuple(int(n) for n in fft_lengths))
