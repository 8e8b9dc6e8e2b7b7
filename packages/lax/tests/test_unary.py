"""Unary elementwise primitives: values against NumPy/SciPy, derivatives against
numerical differences (first and second order), vmap against a loop, JAX's dtype
errors (messages recorded from JAX 0.10.2) and printed Jaxprs."""

import math

import ml_dtypes
import numpy as np
import pytest
import scipy.special

from lamina import lax
from lamina.interpreters import enable_x64, grad, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(0)
X = rng.uniform(-0.9, 0.9, (2, 3)).astype(np.float32)
POS = rng.uniform(1.2, 3.0, (2, 3)).astype(np.float32)

# name -> (function, reference, input)
CASES = {
    "abs": (lax.abs, np.abs, X),
    "exp2": (lax.exp2, np.exp2, X),
    "expm1": (lax.expm1, np.expm1, X),
    "log1p": (lax.log1p, np.log1p, X),
    "logistic": (lax.logistic, scipy.special.expit, X),
    "rsqrt": (lax.rsqrt, lambda x: 1 / np.sqrt(x), POS),
    "cbrt": (lax.cbrt, np.cbrt, POS),
    "tan": (lax.tan, np.tan, X),
    "asin": (lax.asin, np.arcsin, X),
    "acos": (lax.acos, np.arccos, X),
    "atan": (lax.atan, np.arctan, X),
    "sinh": (lax.sinh, np.sinh, X),
    "cosh": (lax.cosh, np.cosh, X),
    "asinh": (lax.asinh, np.arcsinh, X),
    "acosh": (lax.acosh, np.arccosh, POS),
    "atanh": (lax.atanh, np.arctanh, X),
    "square": (lax.square, np.square, X),
    "reciprocal": (lax.reciprocal, np.reciprocal, POS),
    "integer_pow3": (lambda x: lax.integer_pow(x, 3), lambda x: x**3, X),
    "integer_pow-2": (lambda x: lax.integer_pow(x, -2), lambda x: x**-2.0, POS),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_grads(name):
    f, ref, x = CASES[name]
    np.testing.assert_allclose(np.asarray(f(x)), ref(x.astype(np.float64)), rtol=2e-6, atol=1e-6)
    with enable_x64():
        check_grads(f, (x.astype(np.float64),), 2)


@pytest.mark.parametrize("name", ["abs", "tan", "acosh", "integer_pow3"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_vmap_matches_loop(name, axis):
    f, _, x = CASES[name]
    xs = np.stack([x, x + 0.05, x - 0.05], axis=axis)
    expected = np.stack([np.asarray(f(np.take(xs, i, axis=axis))) for i in range(3)], axis=axis)
    np.testing.assert_allclose(np.asarray(vmap(f, in_axes=axis, out_axes=axis)(xs)), expected)


def test_complex_functions():
    z = np.array([1 + 2j, -0.5 + 0.25j, 0.3 - 1.2j], np.complex64)
    for f, ref in [(lax.tan, np.tan), (lax.asinh, np.arcsinh), (lax.atan, np.arctan),
                   (lax.square, np.square), (lax.sign, lambda z: z / np.abs(z)),
                   (lax.expm1, np.expm1)]:  # fmt: skip
        np.testing.assert_allclose(np.asarray(f(z)), ref(z), rtol=1e-5)
    magnitude = lax.abs(z)
    assert magnitude.dtype == np.float32
    np.testing.assert_allclose(np.asarray(magnitude), np.abs(z), rtol=1e-6)
    with enable_x64():
        check_grads(lambda z: lax.abs(z), (z.astype(np.complex128),), 1)
        check_grads(lambda z: lax.tan(z), (z.astype(np.complex128),), 1)


def test_sign_and_rounding():
    x = np.array([-2.5, -0.5, 0.0, 0.5, 1.5, 2.5], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.sign(x)), np.sign(x))
    np.testing.assert_array_equal(np.asarray(lax.floor(x)), np.floor(x))
    np.testing.assert_array_equal(np.asarray(lax.ceil(x)), np.ceil(x))
    away = np.asarray(lax.round(x))
    np.testing.assert_array_equal(away, [-3, -1, 0, 1, 2, 3])
    even = lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    np.testing.assert_array_equal(np.asarray(even), np.round(x))
    np.testing.assert_array_equal(np.asarray(lax.round(x, 1)), np.round(x))
    i = np.array([-3, 0, 7], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.sign(i)), [-1, 0, 1])
    np.testing.assert_array_equal(np.asarray(lax.abs(i)), [3, 0, 7])
    np.testing.assert_array_equal(np.asarray(lax.sign(np.uint32([0, 5]))), [0, 1])
    bad = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.is_finite(bad)), [False, False, False, True])
    # Piecewise-constant functions have zero derivatives; abs has 1 at 0 (JAX's choice).
    with enable_x64():
        for f in (lax.sign, lax.floor, lax.ceil, lax.round):
            check_grads(f, (np.array([0.3, -1.7]),), 1)

    assert float(grad(lax.abs)(np.float32(0.0))) == 1.0


def test_integer_pow_edge_cases():
    i = np.array([-3, 2, 5], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.integer_pow(i, 5)), i**5)
    np.testing.assert_array_equal(np.asarray(lax.integer_pow(i, 0)), [1, 1, 1])

    assert float(grad(lambda x: lax.integer_pow(x, 0))(np.float32(0.0))) == 0.0
    assert float(grad(lambda x: lax.integer_pow(x, 3))(np.float32(2.0))) == 12.0


def test_low_precision_floats():
    x = np.array([0.25, 1.5, -2.0], ml_dtypes.bfloat16)
    out = lax.expm1(x)
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(
        np.asarray(out, np.float32), np.expm1(x.astype(np.float32)), rtol=1e-2
    )
    h = np.array([0.25, 1.5], np.float16)
    assert lax.cbrt(h).dtype == np.float16


def test_accuracy_keyword():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    for f in (lax.sin, lax.cos, lax.exp, lax.tanh, lax.tan, lax.exp2, lax.expm1, lax.logistic):
        plain = np.asarray(f(x))
        for accuracy in (lax.Tolerance(atol=1e-3, rtol=1e-4, ulps=2), lax.AccuracyMode.HIGHEST):
            np.testing.assert_allclose(np.asarray(f(x, accuracy=accuracy)), plain, rtol=1e-6)
    jaxpr = str(make_jaxpr(lambda x: lax.sin(x, accuracy=lax.AccuracyMode.HIGHEST))(x))
    assert "sin[accuracy=AccuracyMode.HIGHEST] a" in jaxpr
    assert "b:f32[5] = sin a" in str(make_jaxpr(lax.sin)(x))
    with pytest.raises(NotImplementedError, match="Accuracy 3 not supported"):
        lax.sin(x, accuracy=3)
    with pytest.raises(ValueError, match=r"At least one of atol, rtol, or ulps must be set\."):
        lax.Tolerance()
    with pytest.raises(ValueError, match=r"Tolerances must be non-negative\."):
        lax.Tolerance(atol=-1.0)
    with enable_x64():
        check_grads(lambda x: lax.sin(x, accuracy=lax.AccuracyMode.HIGHEST), (x.astype(float),), 2)


def test_copy_p_is_linear():
    x = np.arange(3.0)
    np.testing.assert_array_equal(np.asarray(lax.copy_p.bind(x)), x)
    with enable_x64():
        check_grads(lambda x: lax.copy_p.bind(x) * 2.0, (x,), 2)
    assert "b:f32[3] = copy a" in str(make_jaxpr(lax.copy_p.bind)(x.astype(np.float32)))


def test_printed_jaxprs():
    x = np.ones(3, np.float32)
    text = str(make_jaxpr(lambda x: (lax.round(x), lax.integer_pow(x, 3), lax.exp2(x)))(x))
    assert "round[rounding_method=0] a" in text
    assert "integer_pow[y=3] a" in text
    assert "exp2 a" in text
    assert "bool[3] = is_finite a" in str(make_jaxpr(lax.is_finite)(x))
    assert "integer_pow[y=-1] a" in str(make_jaxpr(lax.reciprocal)(x))


F = np.float32(1)
I = np.int32(1)
B = np.bool_(True)
C = np.complex64(1)
ERRORS = [
    (lambda: lax.abs(B), "abs does not accept dtype bool. Accepted dtypes are subtypes of "
     "floating, complexfloating, signedinteger."),
    (lambda: lax.sign(B), "sign does not accept dtype bool. Accepted dtypes are subtypes of "
     "integer, floating, complexfloating."),
    (lambda: lax.floor(I), "floor does not accept dtype int32. Accepted dtypes are subtypes "
     "of floating."),
    (lambda: lax.round(C), "round does not accept dtype complex64. Accepted dtypes are "
     "subtypes of floating."),
    (lambda: lax.exp2(I), "exp2 does not accept dtype int32. Accepted dtypes are subtypes of "
     "floating, complexfloating."),
    (lambda: lax.cbrt(C), "cbrt does not accept dtype complex64. Accepted dtypes are "
     "subtypes of floating."),
    (lambda: lax.asin(I), "asin does not accept dtype int32. Accepted dtypes are subtypes of "
     "floating, complexfloating."),
    (lambda: lax.square(B), "square does not accept dtype bool. Accepted dtypes are subtypes "
     "of integer, floating, complexfloating."),
    (lambda: lax.integer_pow(np.ones(3, np.int32), -2), "Integers cannot be raised to "
     "negative powers, got integer_pow(int32[3], -2)"),
]  # fmt: skip


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, message = ERRORS[i]
    with pytest.raises(TypeError) as info:
        fn()
    assert str(info.value) == message


def test_round_rejects_unknown_method():
    with pytest.raises(ValueError, match="7 is not a valid RoundingMethod"):
        lax.round(F, 7)


def test_exp2_matches_its_definition():
    assert math.isclose(float(lax.exp2(np.float32(10.0))), 1024.0, rel_tol=1e-6)
