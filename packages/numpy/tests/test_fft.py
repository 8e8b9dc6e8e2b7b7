"""lamina.numpy.fft against numpy.fft: every transform with every norm, lengths that
truncate and pad, axes in any order (more than three at once), dtypes, gradients,
vmap and errors."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import enable_x64, jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(0)
REAL = RNG.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
COMPLEX = (REAL + 1j * RNG.standard_normal(REAL.shape)).astype(np.complex64)

CASES = [
    ("fftn", COMPLEX, {}),
    ("ifftn", COMPLEX, {"axes": (3, 0, 1)}),
    ("rfftn", REAL, {}),
    ("irfftn", COMPLEX, {}),
    ("fft", COMPLEX, {"n": 7, "axis": 1}),
    ("ifft", COMPLEX, {"n": 3, "axis": 0}),
    ("fft", REAL, {}),
    ("rfft", REAL, {"n": 9}),
    ("irfft", COMPLEX, {"n": 9}),
    ("irfft", COMPLEX, {"axis": 2}),
    ("hfft", COMPLEX, {}),
    ("hfft", COMPLEX, {"n": 5, "axis": 0}),
    ("ihfft", REAL, {}),
    ("fft2", COMPLEX, {"axes": (0, 2)}),
    ("ifft2", COMPLEX, {"s": (2, 8)}),
    ("rfft2", REAL, {"s": (3, 7)}),
    ("irfft2", COMPLEX, {"s": (4, 8)}),
    ("rfftn", REAL, {"axes": (0, 3, 1, 4)}),
    ("irfftn", COMPLEX, {"axes": (4, 0, 2, 1), "s": (3, 3, 3, 4)}),
    ("fftn", COMPLEX, {"s": (1, 2, 3, 4, 5), "axes": (0, 1, 2, 3, 4)}),
]


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("name, x, kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_transforms_match_numpy(name, x, kwargs, norm):
    got = getattr(jnp.fft, name)(x, norm=norm, **kwargs)
    want = getattr(np.fft, name)(x, norm=norm, **kwargs)
    assert got.shape == want.shape
    assert got.dtype == (np.complex64 if np.iscomplexobj(want) else np.float32)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.complex64])
def test_input_dtypes_become_complex64(dtype):
    x = np.arange(6).astype(dtype)
    got = jnp.fft.fft(x)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(got), np.fft.fft(x), rtol=1e-5, atol=1e-5)


def test_x64_keeps_double_precision():
    with enable_x64(True):
        x = RNG.standard_normal(8)
        got = jnp.fft.rfft(x)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(np.asarray(got), np.fft.rfft(x), rtol=1e-12, atol=1e-12)


def test_frequencies_and_shifts():
    for n, d in [(1, 1.0), (4, 0.5), (5, 2.0), (8, 1.0)]:
        np.testing.assert_allclose(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), rtol=1e-6)
        np.testing.assert_allclose(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), rtol=1e-6)
    assert jnp.fft.fftfreq(4).dtype == np.float32
    assert jnp.fft.fftfreq(4, dtype=np.float16).dtype == np.float16
    np.testing.assert_allclose(jit(lambda d: jnp.fft.fftfreq(4, d))(0.5), [0, 0.5, -1, -0.5])
    x = np.arange(30).reshape(5, 6)
    for axes in [None, 0, (1,), (0, 1), -1]:
        np.testing.assert_array_equal(jnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(jnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))


@pytest.mark.parametrize(
    "f",
    [
        lambda x: jnp.fft.fft(x, n=6),
        lambda x: jnp.fft.rfft(x, norm="ortho"),
        lambda x: jnp.fft.irfft(jnp.fft.rfft(x), n=5),
        lambda x: jnp.fft.fft2(lax.reshape(x, (1, 5)), s=(2, 4), norm="forward"),
        lambda x: jnp.fft.hfft(x),
    ],
)
def test_gradients(f):
    x = RNG.standard_normal(5).astype(np.float32)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)


def test_vmap_and_jit_agree_with_a_loop():
    batch = COMPLEX[:, 0]
    got = vmap(lambda x: jnp.fft.fftn(x, axes=(0, 2), norm="ortho"))(batch)
    want = np.stack([np.fft.fftn(b, axes=(0, 2), norm="ortho") for b in batch])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    jitted = jit(lambda x: jnp.fft.irfftn(x, s=(4, 6)))(batch[0, :2])
    np.testing.assert_allclose(np.asarray(jitted), np.fft.irfftn(batch[0, :2], s=(4, 6)), atol=1e-4)


def test_errors():
    with pytest.raises(ValueError, match="Invalid norm value bad"):
        jnp.fft.fft(REAL, norm="bad")
    with pytest.raises(ValueError, match="does not support repeated axes"):
        jnp.fft.fftn(REAL, axes=(0, 0))
    with pytest.raises(ValueError, match="Shape should be positive"):
        jnp.fft.fft(REAL, n=0)
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        jnp.fft.fftn(REAL, s=(3,), axes=(0, 1))
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        jnp.fft.rfft(COMPLEX)
    with pytest.raises(ValueError, match="RFFT input must be float32 or float64, got float16"):
        jnp.fft.rfft(np.ones(4, np.float16))
    with pytest.raises(TypeError, match=r"jax.numpy.fft.fft requires ndarray or scalar"):
        jnp.fft.fft([1.0, 2.0])
