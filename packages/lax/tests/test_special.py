"""Special functions: values against scipy.special in float32 and float64, the
derivatives against numerical ones, vmap against a Python loop, edge values and error
messages recorded from JAX 0.10.2."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sp

from lamina import lax
from lamina.interpreters import enable_x64, grad, jit, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(0)


def _numeric_gammainc_grad_a(a, x, h=1e-3):
    """Five-point central difference: truncation error of order h**4."""
    p = [sp.gammainc(a + k * h, x) for k in (-2, -1, 1, 2)]
    return (p[0] - 8 * p[1] + 8 * p[2] - p[3]) / (12 * h)


def _random_gamma_grad_reference(a, x):
    density = np.exp((a - 1) * np.log(x) - x - sp.gammaln(a))
    return -_numeric_gammainc_grad_a(a, x) / density


def _gamma_operands(n):
    """a and x on both sides of x = a + 1, where igamma switches algorithms."""
    return [rng.uniform(0.1, 30, n), rng.uniform(0.01, 40, n)]


# name, reference, sampler of operands (float64), float32 rtol, float64 rtol
CASES = {
    "erf": (sp.erf, lambda n: [rng.uniform(-4, 4, n)], 1e-6, 1e-14),
    "erfc": (sp.erfc, lambda n: [rng.uniform(-2, 6, n)], 2e-5, 1e-13),
    "erf_inv": (sp.erfinv, lambda n: [rng.uniform(-0.99, 0.99, n)], 1e-5, 1e-13),
    "lgamma": (sp.gammaln, lambda n: [rng.uniform(0.1, 20, n)], 2e-5, 1e-13),
    "digamma": (sp.digamma, lambda n: [rng.uniform(0.1, 20, n)], 2e-5, 1e-12),
    "bessel_i0e": (sp.i0e, lambda n: [rng.uniform(-30, 30, n)], 1e-6, 1e-13),
    "bessel_i1e": (sp.i1e, lambda n: [rng.uniform(-30, 30, n)], 1e-5, 1e-13),
    "zeta": (sp.zeta, lambda n: [rng.uniform(1.5, 6, n), rng.uniform(0.5, 5, n)], 2e-5, 1e-12),
    "polygamma": (
        sp.polygamma,
        lambda n: [rng.integers(0, 4, n).astype(float), rng.uniform(0.5, 5, n)],
        5e-5,
        1e-12,
    ),
    "igamma": (
        sp.gammainc,
        lambda n: [rng.uniform(0.1, 30, n), rng.uniform(0.01, 40, n)],
        1e-4,
        1e-12,
    ),
    "igammac": (
        sp.gammaincc,
        lambda n: [rng.uniform(0.1, 30, n), rng.uniform(0.01, 40, n)],
        1e-4,
        1e-11,
    ),
    "igamma_grad_a": (
        _numeric_gammainc_grad_a,
        lambda n: [rng.uniform(0.5, 20, n), rng.uniform(0.1, 30, n)],
        2e-3,
        1e-8,
    ),
    "random_gamma_grad": (
        _random_gamma_grad_reference,
        lambda n: [rng.uniform(0.5, 10, n), rng.uniform(0.2, 15, n)],
        2e-3,
        1e-8,
    ),
    "betainc": (
        sp.betainc,
        lambda n: [rng.uniform(0.2, 20, n), rng.uniform(0.2, 20, n), rng.uniform(0.01, 0.99, n)],
        5e-4,
        1e-11,
    ),
}


def _reference(name, args):
    return CASES[name][0](*args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_matches_scipy(name):
    reference, sample, rtol, _ = CASES[name]
    args = [a.astype(np.float32) for a in sample(64)]
    got = np.asarray(getattr(lax, name)(*args))
    assert got.dtype == np.float32
    want = reference(*[a.astype(np.float64) for a in args])
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-2)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_matches_scipy(name):
    reference, sample, _, rtol = CASES[name]
    args = sample(64)
    with enable_x64():
        got = np.asarray(getattr(lax, name)(*args))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, reference(*args), rtol=rtol, atol=rtol * 1e-2)


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("erf", ml_dtypes.bfloat16),
        ("lgamma", np.float16),
        ("bessel_i0e", ml_dtypes.bfloat16),
        ("igamma", np.float16),
        ("betainc", ml_dtypes.bfloat16),
    ],
)
def test_half_precision_keeps_dtype(name, dtype):
    reference, sample, _, _ = CASES[name]
    args = [a.astype(dtype) for a in sample(16)]
    got = np.asarray(getattr(lax, name)(*args))
    assert got.dtype == dtype
    want = reference(*[a.astype(np.float64) for a in args])
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=3e-2, atol=1e-2)


# ------------------------------------------------------------------ edge values from JAX

_EDGE = np.array([0.0, 1.0, -1.0, np.inf, np.nan, 0.5], np.float32)
NAN = np.nan
JAX_EDGES = {
    # igamma(a, x) over the grid (a, x) in _EDGE x _EDGE, recorded from JAX 0.10.2 except
    # at (0, 0.5) and (inf, 1), where JAX gives NaN and the limits are 1 and 0.
    "igamma": [NAN, 1, NAN, 1, NAN, 1, 0, 0.6321205, NAN, 1, NAN, 0.3934693] + [NAN] * 6
    + [0, 0, NAN, 1, NAN, 0] + [NAN] * 6 + [0, 0.8427008, NAN, 1, NAN, 0.6826895],
    "igammac": [NAN, 0, NAN, 0, NAN, 0, 1, 0.3678794, NAN, 0, NAN, 0.6065307] + [NAN] * 6
    + [1, 1, NAN, 0, NAN, 1] + [NAN] * 6 + [1, 0.1572992, NAN, 0, NAN, 0.3173105],
    "igamma_grad_a": [NAN] * 6 + [0, -0.4317297, NAN, NAN, NAN, -0.4894574] + [NAN] * 6
    + [0] + [NAN] * 11 + [0, -0.3898374, NAN, NAN, NAN, -0.6472006],
    "random_gamma_grad": [NAN] * 6 + [0, 1.1735635, NAN, NAN, NAN, 0.8069793] + [NAN] * 6
    + [0] + [NAN] * 11 + [0, 1.8782476, NAN, NAN, NAN, 1.3373529],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(JAX_EDGES))
def test_edge_values(name):
    a, x = (g.ravel() for g in np.meshgrid(_EDGE, _EDGE, indexing="ij"))
    got = np.asarray(getattr(lax, name)(a, x))
    np.testing.assert_allclose(got, np.float32(JAX_EDGES[name]), rtol=2e-6)


def test_betainc_edge_values():
    a = np.repeat(_EDGE, 6)
    x = np.tile(np.float32([0, 0.5, -0.5, 1, np.nan, 0.25]), 6)
    want = [0, 1, NAN, 1, NAN, 1, 0, 0.75, NAN, 1, NAN, 0.4375] + [NAN] * 6
    want += [0, 0, NAN, 1, NAN, 0] + [NAN] * 6 + [0, 0.8838835, NAN, 1, NAN, 0.6875]
    got = np.asarray(lax.betainc(a, np.full_like(a, 2), x))
    np.testing.assert_allclose(got, np.float32(want), rtol=2e-6)
    b_edges = np.asarray(lax.betainc(np.full_like(a, 2), a, np.tile(np.float32([0, 0.5, 1]), 12)))
    np.testing.assert_allclose(b_edges[:3], [0, 0, 1])  # b = 0
    np.testing.assert_allclose(b_edges[18:21], [0, 1, 1])  # b = inf


def test_bessel_and_erf_edges():
    np.testing.assert_allclose(
        np.asarray(lax.bessel_i0e(_EDGE)), [1, 0.4657596, 0.4657596, 0, NAN, 0.6450353], rtol=1e-6
    )
    np.testing.assert_array_equal(np.asarray(lax.erf(np.float32([-np.inf, np.inf]))), [-1, 1])
    np.testing.assert_array_equal(np.asarray(lax.erf_inv(np.float32([-1, 1]))), [-np.inf, np.inf])


# ------------------------------------------------------------------ derivatives


@pytest.mark.parametrize(
    "name, x",
    [
        ("erf", [-1.3, 0.2, 0.9]),
        ("erfc", [-0.4, 0.7, 1.6]),
        ("erf_inv", [-0.6, 0.1, 0.8]),
        ("lgamma", [0.7, 2.5, 6.0]),
        ("digamma", [0.8, 2.0, 5.5]),
        ("bessel_i0e", [-2.0, 0.3, 9.0]),
        ("bessel_i1e", [-3.0, 0.4, 12.0]),
    ],
)
def test_unary_gradients(name, x):
    with enable_x64():
        check_grads(getattr(lax, name), (np.array(x),), order=2, modes=("fwd", "rev"))


def test_bessel_i1e_gradient_at_zero():
    assert float(grad(lax.bessel_i1e)(np.float32(0.0))) == 0.5


def test_polygamma_gradient_in_x():
    with enable_x64():
        m = np.array([0.0, 1.0, 2.0])
        check_grads(lambda x: lax.polygamma(m, x), (np.array([0.6, 1.5, 4.0]),), order=2)
        np.testing.assert_allclose(
            np.asarray(grad(lambda x: lax.polygamma(np.float64(1), x))(2.0)), sp.polygamma(2, 2.0)
        )


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_gradients(name):
    a = np.array([0.6, 3.0, 12.0, 2.0])
    x = np.array([0.4, 1.5, 15.0, 7.0])  # series and continued-fraction regions
    with enable_x64():
        check_grads(getattr(lax, name), (a, x), order=1, modes=("fwd", "rev"))
        check_grads(lambda x: getattr(lax, name)(a, x), (x,), order=2, modes=("fwd",))


def test_betainc_gradient_in_x():
    a, b = np.array([0.7, 3.0, 8.0]), np.array([2.0, 0.9, 5.0])
    with enable_x64():
        check_grads(lambda x: lax.betainc(a, b, x), (np.array([0.2, 0.5, 0.8]),), order=2)


def test_unsupported_gradients_raise_like_jax():
    with pytest.raises(ValueError, match="polygamma gradient with respect to m is not supported"):
        grad(lax.polygamma)(np.float32(1), np.float32(2))
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not supported"):
        grad(lax.betainc)(np.float32(1), np.float32(2), np.float32(0.3))
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not supported"):
        grad(lax.betainc, argnums=1)(np.float32(1), np.float32(2), np.float32(0.3))


# ------------------------------------------------------------------ vmap


def _vmap_matches_loop(f, args, in_axes):
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes, strict=True) if ax is not None)
    pick = [
        [a if ax is None else np.take(a, i, ax) for a, ax in zip(args, in_axes, strict=True)]
        for i in range(size)
    ]
    want = np.stack([np.asarray(f(*p)) for p in pick])
    got = np.asarray(vmap(f, in_axes=tuple(in_axes))(*args))
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("axis", [0, 1])
def test_vmap_unary(axis):
    x = rng.uniform(0.2, 3, (3, 4)).astype(np.float32)
    for f in (lax.lgamma, lax.bessel_i0e, lax.erf):
        _vmap_matches_loop(f, [x], [axis])


@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, 1)])
def test_vmap_binary(in_axes):
    a = rng.uniform(0.5, 5, (3, 3)).astype(np.float32)
    x = rng.uniform(0.5, 5, (3, 3)).astype(np.float32)
    if None in in_axes:
        a, x = (v[0] if ax is None else v for v, ax in zip((a, x), in_axes, strict=True))
    for f in (lax.igamma, lax.zeta):
        _vmap_matches_loop(f, [a, x], in_axes)


def test_vmap_betainc():
    a = rng.uniform(0.5, 5, (4, 2)).astype(np.float32)
    b = rng.uniform(0.5, 5, 2).astype(np.float32)
    x = rng.uniform(0.1, 0.9, (2, 4)).astype(np.float32)
    _vmap_matches_loop(lax.betainc, [a, b, x], [0, None, 1])


# ------------------------------------------------------------------ printing, lowering, errors


def test_jaxprs_print_like_jax():
    f32 = np.float32(1)
    assert str(make_jaxpr(lax.igamma)(f32, f32)) == (
        "{ lambda ; a:f32[] b:f32[]. let c:f32[] = igamma a b in (c,) }"
    )
    assert str(make_jaxpr(lax.betainc)(f32, f32, f32)) == (
        "{ lambda ; a:f32[] b:f32[] c:f32[]. let\n"
        "    d:f32[] = regularized_incomplete_beta a b c\n"
        "  in (d,) }"
    )
    assert str(make_jaxpr(lax.digamma)(f32)) == (
        "{ lambda ; a:f32[]. let b:f32[] = digamma a in (b,) }"
    )


@pytest.mark.parametrize("name", ["erf", "erfc", "erf_inv", "lgamma", "digamma", "bessel_i1e"])
def test_lowers_to_chlo(name):
    text = jit(getattr(lax, name)).lower(np.float32(1)).as_text()
    assert f"chlo.{name} %arg0 : tensor<f32> -> tensor<f32>" in text


def test_dtype_errors():
    with pytest.raises(TypeError, match=r"^erf does not accept dtype int32\. Accepted dtypes are "
                       r"subtypes of floating\."):  # fmt: skip
        lax.erf(np.int32(1))
    with pytest.raises(TypeError, match=r"^igamma does not accept dtype complex64 at position 0\. "
                       r"Accepted dtypes at position 0 are subtypes of floating\."):  # fmt: skip
        lax.igamma(np.complex64(1), np.complex64(1))
    same = r"lax\.zeta requires arguments to have the same dtypes, got float32, float64\."
    with pytest.raises(TypeError, match=same), enable_x64():
        lax.zeta(np.float32(2), np.float64(1))


def test_bessel_second_derivatives_at_zero_are_finite():
    assert float(grad(grad(lax.bessel_i0e))(0.0)) == 0.5  # i0e'' = i1e' - sign·i0e' → 1/2
    assert float(grad(lax.bessel_i0e)(0.0)) == 0.0
    assert float(grad(grad(lax.bessel_i1e))(0.0)) == 0.0
