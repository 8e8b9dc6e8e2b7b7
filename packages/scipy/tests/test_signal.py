"""lamina.scipy.signal against scipy.signal: convolution and correlation (direct and
FFT, every mode, 1-D, 2-D, complex), detrending, STFT and its inverse, Welch's PSD and
the cross spectral density; float64, gradients, jit, vmap, and JAX's errors."""

import warnings

import numpy as np
import pytest
import scipy.signal

import lamina.numpy as jnp
from lamina.interpreters import enable_x64, jit, vmap
from lamina.interpreters.test_util import check_grads
from lamina.scipy import signal

RNG = np.random.default_rng(0)
X = RNG.standard_normal(30).astype(np.float32)
K = RNG.standard_normal(5).astype(np.float32)
A = RNG.standard_normal((5, 6)).astype(np.float32)
B = RNG.standard_normal((2, 3)).astype(np.float32)
AC = (A + 1j * RNG.standard_normal(A.shape)).astype(np.complex64)
BC = (B + 1j * RNG.standard_normal(B.shape)).astype(np.complex64)
S = RNG.standard_normal((2, 40)).astype(np.float32)

MODES = ["full", "same", "valid"]


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("method", ["direct", "fft"])
def test_convolve_and_correlate_1d(method):
    for mode in MODES:
        for a, b in ((X, K), (K, X)):
            got = signal.convolve(a, b, mode=mode, method=method)
            assert got.dtype == np.float32
            close(got, scipy.signal.convolve(a, b, mode=mode, method="direct"))
            got = signal.correlate(a, b, mode=mode, method=method)
            close(got, scipy.signal.correlate(a, b, mode=mode, method="direct"))
        got = signal.correlate(AC, BC, mode=mode, method=method)
        close(got, scipy.signal.correlate(AC, BC, mode=mode, method="direct"))


def test_convolve2d_and_correlate2d():
    for mode in MODES:
        for a, b in ((A, B), (B, A), (AC, BC), (BC, AC), (A, A[::-1])):
            close(signal.convolve2d(a, b, mode=mode), scipy.signal.convolve2d(a, b, mode=mode))
            got = signal.correlate2d(a, b, mode=mode)
            close(got, scipy.signal.correlate2d(a, b, mode=mode))
    got = signal.convolve2d(A, B, mode="same", precision="highest")
    close(got, scipy.signal.convolve2d(A, B, mode="same"), 1e-5)


def test_fftconvolve_over_axes():
    for mode in MODES:
        got = signal.fftconvolve(S, S[:, :7], mode=mode, axes=1)
        close(got, scipy.signal.fftconvolve(S, S[:, :7], mode=mode, axes=1))
        close(signal.fftconvolve(A, B, mode=mode), scipy.signal.fftconvolve(A, B, mode=mode))
    # Integers are convolved as the default float (recorded from JAX 0.10.2).
    got = signal.convolve(np.arange(5), np.arange(3))
    assert got.dtype == np.float32
    close(got, [0, 0, 1, 4, 7, 10, 8])


def test_detrend():
    for kwargs in ({}, {"type": "constant"}, {"axis": 0}, {"bp": [5, 20]}, {"bp": 39}):
        close(signal.detrend(S, **kwargs), scipy.signal.detrend(S, **kwargs), 1e-5)
    got = signal.detrend(np.arange(10) ** 2)
    assert got.dtype == np.float32
    close(got, scipy.signal.detrend(np.arange(10.0) ** 2))


STFT_CASES = [
    {"nperseg": 8},
    {"nperseg": 9, "noverlap": 3, "nfft": 12, "detrend": "linear"},
    {"nperseg": 8, "window": "hamming", "boundary": None, "padded": False},
    {"nperseg": 8, "boundary": "even", "return_onesided": False},
    {"nperseg": 8, "boundary": "odd", "window": ("tukey", 0.3)},
    {"nperseg": 8, "boundary": "constant", "fs": 10.0},
]


def test_stft():
    for kwargs in STFT_CASES:
        got = signal.stft(S, **kwargs)
        want = scipy.signal.stft(S, **kwargs)
        for g, w in zip(got, want, strict=True):
            close(g, w, 2e-5)
    f, t, z = signal.stft(S.T, nperseg=8, axis=0)
    assert z.dtype == np.complex64 and f.dtype == t.dtype == np.float32
    close(z, scipy.signal.stft(S.T, nperseg=8, axis=0)[2], 2e-5)


def test_stft_of_complex_input_is_two_sided():
    with pytest.warns(UserWarning, match="Input data is complex, switching to"):
        got = signal.stft(AC, nperseg=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = scipy.signal.stft(AC, nperseg=4)
    for g, w in zip(got, want, strict=True):
        close(g, w, 2e-5)


WELCH_CASES = [
    {"nperseg": 8},
    {"nperseg": 8, "scaling": "spectrum", "average": "median"},
    {"nperseg": 10, "noverlap": 2, "nfft": 16, "detrend": "linear", "fs": 100.0},
    {"nperseg": 8, "return_onesided": False, "detrend": False, "window": "hamming"},
]


def test_welch_and_csd():
    for kwargs in WELCH_CASES:
        for g, w in zip(signal.welch(S, **kwargs), scipy.signal.welch(S, **kwargs), strict=True):
            close(g, w, 2e-5)
        got = signal.csd(S, S[::-1], **kwargs)
        for g, w in zip(got, scipy.signal.csd(S, S[::-1], **kwargs), strict=True):
            close(g, w, 2e-5)
    # y broadcasts against x, and the shorter signal is zero-padded.
    close(signal.csd(S, S[:1, ::-1], nperseg=8)[1], scipy.signal.csd(S, S[:1, ::-1], nperseg=8)[1])
    close(signal.csd(X, S[0, :25], nperseg=8)[1], scipy.signal.csd(X, S[0, :25], nperseg=8)[1])
    close(signal.welch(S.T, nperseg=8, axis=0)[1], scipy.signal.welch(S.T, nperseg=8, axis=0)[1])


def test_welch_defaults_differ_from_scipy():
    # JAX takes the whole signal as one segment when nperseg is None (SciPy takes 256
    # points); recorded from JAX 0.10.2.
    long = RNG.standard_normal(300).astype(np.float32)
    f, p = signal.welch(long)
    assert f.shape == p.shape == (151,)
    close(p, scipy.signal.welch(long, nperseg=300)[1], 1e-5)
    f, p = signal.welch(np.zeros((2, 0), np.float32))
    assert f.shape == p.shape == (2, 0)


def test_istft():
    for kwargs in ({"nperseg": 8}, {"nperseg": 8, "window": "hamming", "nfft": 12}):
        z = scipy.signal.stft(S, **kwargs)[2]
        got = signal.istft(z, **kwargs)
        for g, w in zip(got, scipy.signal.istft(z, **kwargs), strict=True):
            close(g, w, 2e-5)
    z = scipy.signal.stft(S, nperseg=8)[2]
    _, x = signal.istft(np.moveaxis(z, 0, -1), nperseg=8, time_axis=-2, freq_axis=0)
    close(x, S.T, 2e-5)
    # noverlap=0 is read as the default nperseg // 2 (recorded from JAX 0.10.2).
    close(signal.istft(z, nperseg=8, noverlap=0)[1], signal.istft(z, nperseg=8)[1], 0)


def test_float64():
    s = RNG.standard_normal((2, 40))
    with enable_x64():
        got = signal.welch(s, nperseg=8)[1]
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, scipy.signal.welch(s, nperseg=8)[1], rtol=1e-12)
        got = signal.convolve(s[0], s[1, :7], mode="same")
        assert got.dtype == np.float64
        want = scipy.signal.convolve(s[0], s[1, :7], mode="same")
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        got = signal.stft(s, nperseg=8)[2]
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, scipy.signal.stft(s, nperseg=8)[2], atol=1e-12)


def test_gradients_jit_and_vmap():
    check_grads(lambda a, b: signal.convolve(a, b, mode="same"), (X[:8], K), order=1,
                atol=1e-2, rtol=1e-2)  # fmt: skip
    check_grads(lambda s: signal.welch(s, nperseg=8)[1], (S[0],), order=1, modes=("rev",),
                atol=1e-2, rtol=1e-2)  # fmt: skip
    got = jit(lambda s, fs: signal.welch(s, fs=fs, nperseg=8))(S, 2.0)
    for g, w in zip(got, scipy.signal.welch(S, fs=2.0, nperseg=8), strict=True):
        close(g, w, 2e-5)
    got = vmap(lambda a: signal.correlate(a, K, mode="valid"))(S)
    close(got, np.stack([scipy.signal.correlate(s, K, mode="valid") for s in S]))
    assert isinstance(got, type(jnp.zeros(1)))


ERRORS = [  # messages recorded from JAX 0.10.2
    (lambda: signal.convolve(X, K, mode="foo"), ValueError, "mode must be one of"),
    (lambda: signal.convolve(X, K, method="foo"), ValueError,
     "Got method='foo'; expected 'auto', 'fft', or 'direct'."),
    (lambda: signal.convolve(X, A), ValueError,
     "in1 and in2 must have the same number of dimensions"),
    (lambda: signal.convolve(X, np.zeros(0, np.float32)), ValueError,
     r"zero-size arrays not supported in convolutions, got shapes \(30,\) and \(0,\)."),
    (lambda: signal.convolve(A, A.T), ValueError,
     "One input must be smaller than the other in every dimension."),
    (lambda: signal.convolve2d(A, B, boundary="wrap"), NotImplementedError,
     "convolve2d\\(\\) only supports boundary='fill', fillvalue=0"),
    (lambda: signal.correlate2d(A, B, fillvalue=1), NotImplementedError,
     "correlate2d\\(\\) only supports boundary='fill', fillvalue=0"),
    (lambda: signal.convolve2d(X, K), ValueError,
     r"convolve2d\(\) only supports 2-dimensional inputs."),
    (lambda: signal.fftconvolve(X, A), ValueError,
     "in1 and in2 should have the same dimensionality"),
    (lambda: signal.fftconvolve(A, B, axes=1), ValueError,
     r"mapped axes must have same shape; got in1.shape=\(5, 6\) in2.shape=\(2, 3\) axes=\(1,\)"),
    (lambda: signal.fftconvolve(A, A.T, mode="valid"), ValueError,
     "For 'valid' mode, One input must be at least as large as the other in every"),
    (lambda: signal.detrend(S, type="foo"), ValueError,
     "Trend type must be 'linear' or 'constant'."),
    (lambda: signal.detrend(S, bp=41), ValueError, "Breakpoints must be non-negative"),
    (lambda: signal.detrend(S, overwrite_data=True), NotImplementedError,
     "overwrite_data argument not implemented."),
    (lambda: signal.stft(X, boundary="foo"), ValueError,
     r"Unknown boundary option 'foo', must be one of: \['even', 'odd', 'constant', 'zeros', "),
    (lambda: signal.stft(X, nperseg=8, nfft=4), ValueError,
     "nfft must be greater than or equal to nperseg."),
    (lambda: signal.stft(X, nperseg=8, noverlap=8), ValueError,
     "noverlap must be less than nperseg."),
    (lambda: signal.stft(X, nperseg=0), ValueError, "nperseg must be a positive integer"),
    (lambda: signal.stft(X, nperseg=8, detrend=True), ValueError,
     "Unsupported detrend type: True"),
    (lambda: signal.stft(X, window=np.ones((2, 4))), ValueError, "window must be 1-D"),
    (lambda: signal.stft(X[:4], window=np.ones(8), nperseg=None), ValueError,
     "window is longer than input signal"),
    (lambda: signal.stft(X, window=np.ones(8), nperseg=6), ValueError,
     "value specified for nperseg is different from length of window"),
    (lambda: signal.welch(S, scaling="foo"), ValueError, "Unknown scaling: foo"),
    (lambda: signal.welch(S, nperseg=8, average="foo"), ValueError,
     'average must be "median" or "mean", got foo'),
    (lambda: signal.csd(S, X, nperseg=8), ValueError,
     r"two-arguments must have the same rank \({x.ndim} vs {y.ndim}\)."),
    (lambda: signal.csd(S, np.zeros((3, 40)), nperseg=8), ValueError,
     "x and y cannot be broadcast together."),
    (lambda: signal.istft(X), ValueError, "Input stft must be at least 2d!"),
    (lambda: signal.istft(S, time_axis=0, freq_axis=0), ValueError,
     "Must specify differing time and frequency axes!"),
    (lambda: signal.istft(S, nperseg=80, nfft=4), ValueError,
     r"FFT length \(4\) must be longer than nperseg \(80\)."),
    (lambda: signal.istft(S, nperseg=-1), ValueError, "nperseg must be a positive integer"),
    # An odd nperseg with nfft left out: the inverse FFT is one point short of the window.
    (lambda: signal.istft(scipy.signal.stft(S, nperseg=9)[2], nperseg=9), TypeError,
     "mul got incompatible shapes for broadcasting"),
]  # fmt: skip


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index):
    call, kind, message = ERRORS[index]
    with pytest.raises(kind, match=message):
        call()
