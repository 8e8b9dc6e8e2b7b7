"""lax.fft against numpy.fft for every transform, its staged form, and its gradients
(recorded from JAX 0.10.2 for the real transforms, whose transposes follow JAX's
conjugation convention)."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import make_jaxpr, vjp, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(0)
x = rng.standard_normal((2, 8)).astype(np.float32)
c = (rng.standard_normal((2, 8)) + 1j * rng.standard_normal((2, 8))).astype(np.complex64)


@pytest.mark.parametrize(
    "kind,operand,lengths,reference",
    [
        ("fft", c, (8,), lambda v: np.fft.fft(v)),
        ("ifft", c, (8,), lambda v: np.fft.ifft(v)),
        ("fft", c, (2, 8), lambda v: np.fft.fft2(v)),
        ("ifft", c, (2, 8), lambda v: np.fft.ifft2(v)),
        ("rfft", x, (8,), lambda v: np.fft.rfft(v)),
        ("rfft", x, (2, 8), lambda v: np.fft.rfft2(v)),
        ("irfft", np.fft.rfft(x).astype(np.complex64), (8,), lambda v: np.fft.irfft(v, 8)),
        ("fft", x, (8,), lambda v: np.fft.fft(v)),  # real input promoted to complex
    ],
)
def test_against_numpy(kind, operand, lengths, reference):
    got = np.asarray(lax.fft(operand, kind, lengths))
    np.testing.assert_allclose(got, reference(operand), rtol=1e-4, atol=1e-4)


def test_staged_as_jax_stages_it_and_errors():
    text = str(make_jaxpr(lambda v: lax.fft(v, "fft", (4,)))(np.ones(4, np.complex64)))
    assert text == (
        "{ lambda ; a:c64[4]. let\n"
        "    b:c64[4] = jit[\n"
        "      name=fft\n"
        "      jaxpr={ lambda ; a:c64[4]. let\n"
        "          b:c64[4] = fft[fft_lengths=(4,) fft_type=0] a\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        lax.fft(c, "rfft", (8,))
    with pytest.raises(ValueError, match="minor dimensions must be equal to fft_lengths"):
        lax.fft(c, "fft", (5,))
    assert list(lax.FftType) == [lax.FftType.FFT, lax.FftType.IFFT, lax.FftType.RFFT,
                                 lax.FftType.IRFFT]  # fmt: skip


def test_gradients():
    check_grads(lambda v: lax.fft(v, "fft", (8,)), (c,), order=2)
    check_grads(lambda v: lax.fft(v, "ifft", (2, 8)), (c,), order=1)
    check_grads(lambda v: lax.fft(v, "rfft", (8,)), (x,), order=1, modes=("rev",))
    spectrum = np.fft.rfft(x).astype(np.complex64)
    check_grads(lambda v: lax.fft(v, "irfft", (8,)), (spectrum,), order=1, modes=("rev",))


def test_real_transform_vjps_match_jax():
    r = np.random.default_rng(0)
    h = (r.standard_normal(5) + 1j * r.standard_normal(5)).astype(np.complex64)
    ct = r.standard_normal(8).astype(np.float32)
    got = vjp(lambda v: lax.fft(v, "irfft", (8,)), h)[1](ct)[0]
    want = [-0.74556357, 0.27517518 - 0.29120243j, 0.2500261 - 0.03896239j,
            0.03614309 + 0.59918344j, -0.43905526]  # fmt: skip
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    signal = r.standard_normal(8).astype(np.float32)
    bins = (r.standard_normal(5) + 1j * r.standard_normal(5)).astype(np.complex64)
    got = vjp(lambda v: lax.fft(v, "rfft", (8,)), signal)[1](bins)[0]
    want = [-2.9123735, 0.03870255, -1.6692758, 0.57193094, -1.5093131, 1.5752263,
            -0.9215074, -1.1213844]  # fmt: skip
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_vmap_against_a_loop():
    out = vmap(lambda v: lax.fft(v, "fft", (8,)), in_axes=1)(np.ascontiguousarray(c.T))
    np.testing.assert_allclose(np.asarray(out), np.fft.fft(c), rtol=1e-4, atol=1e-4)
