"""Binary elementwise primitives and the array operators built on them: values against
NumPy, derivatives against numerical differences, vmap against a loop, JAX's errors
(messages recorded from JAX 0.10.2)."""

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import device_put, enable_x64, grad, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

rng = np.random.default_rng(1)
X = rng.uniform(0.5, 2.0, (2, 3))
Y = rng.uniform(-2.0, -0.5, (2, 3))


@pytest.mark.parametrize(
    "f, ref",
    [
        (lax.rem, np.fmod),
        (lax.pow, np.power),
        (lax.atan2, np.arctan2),
        (lambda x, y: lax.clamp(np.float64(-1.0), x, y), lambda x, y: np.clip(x, -1.0, y)),
    ],
)
def test_values_and_grads(f, ref):
    x, y = X.astype(np.float32), (-Y).astype(np.float32)
    np.testing.assert_allclose(np.asarray(f(x, y)), ref(x, y), rtol=2e-6)
    with enable_x64():
        check_grads(f, (X + 0.013, -Y), 2)


def test_pow_integer_and_complex_exponents():
    x = X.astype(np.float32)
    np.testing.assert_allclose(np.asarray(lax.pow(x, 3)), x**3, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(lax.pow(x, np.int32(-2))), x**-2.0, rtol=1e-6)
    z = np.array([1 + 1j, 0.5 - 2j], np.complex64)
    np.testing.assert_allclose(np.asarray(lax.pow(z, z)), z**z, rtol=1e-5)
    assert "pow a 2:i32[]" in str(make_jaxpr(lambda x: lax.pow(x, 2))(x))
    with enable_x64():
        check_grads(lambda x: lax.pow(x, 3), (X,), 2)
    assert float(grad(lambda y: lax.pow(np.float32(0.0), y))(np.float32(1.0))) == 0.0


def test_clamp_grads_at_the_bounds_are_zero():
    assert float(grad(lambda x: lax.clamp(0.0, x, 1.0))(np.float32(1.0))) == 0.0
    assert float(grad(lambda lo: lax.clamp(lo, np.float32(0.5), 1.0))(0.5)) == 0.0
    assert float(grad(lambda lo: lax.clamp(lo, np.float32(0.5), 1.0))(0.7)) == 1.0


def test_nextafter():
    x = np.array([1.0, 0.0, -2.0], np.float32)
    y = np.array([2.0, -1.0, -2.0], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.nextafter(x, y)), np.nextafter(x, y))


def test_complex_parts_and_their_grads():
    z = np.array([1 + 2j, -3 - 0.5j], np.complex64)
    np.testing.assert_array_equal(np.asarray(lax.real(z)), z.real)
    np.testing.assert_array_equal(np.asarray(lax.imag(z)), z.imag)
    np.testing.assert_array_equal(np.asarray(lax.conj(z)), np.conj(z))
    x = np.array([1.0, 2.0], np.float32)
    assert lax.conj(x).dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(lax.complex(x, -x)), x - 1j * x)
    assert "conj[input_dtype=float32] a" in str(make_jaxpr(lax.conj)(x))
    # Values recorded from JAX 0.10.2.
    assert float(grad(lambda x: lax.real(lax.conj(lax.complex(x, 2.0))))(1.0)) == 1.0
    assert float(grad(lambda x: lax.imag(lax.conj(lax.complex(2.0, x))))(1.0)) == -1.0
    assert np.isclose(float(grad(lambda x: lax.abs(lax.complex(x, 2.0)))(1.0)), 0.4472136)


def test_bitwise_and_shifts():
    i = np.array([5, -7, 12, 0], np.int32)
    j = np.array([3, 1, 6, 31], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.bitwise_and(i, j)), i & j)
    np.testing.assert_array_equal(np.asarray(lax.bitwise_or(i, j)), i | j)
    np.testing.assert_array_equal(np.asarray(lax.bitwise_xor(i, j)), i ^ j)
    np.testing.assert_array_equal(np.asarray(lax.bitwise_not(i)), ~i)
    b = np.array([True, False])
    np.testing.assert_array_equal(np.asarray(lax.bitwise_and(b, ~b)), [False, False])
    np.testing.assert_array_equal(np.asarray(lax.shift_left(i, j)), np.left_shift(i, j))
    np.testing.assert_array_equal(np.asarray(lax.shift_right_arithmetic(i, j)), i >> j)
    logical = np.right_shift(i.view(np.uint32), j.view(np.uint32)).view(np.int32)
    np.testing.assert_array_equal(np.asarray(lax.shift_right_logical(i, j)), logical)
    u = np.array([0, 1, 255, 2**31], np.uint32)
    np.testing.assert_array_equal(np.asarray(lax.population_count(u)), [0, 1, 8, 1])
    np.testing.assert_array_equal(np.asarray(lax.clz(u)), [32, 31, 24, 0])
    big = np.array([2**31 - 1, -5, 1 << 20], np.int32)
    want = ((big.astype(np.int64) * big.astype(np.int64)) >> 32).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(lax.mulhi(big, big)), want)


@pytest.mark.parametrize("axis", [0, 1])
def test_vmap_matches_loop(axis):
    xs = np.stack([X, X + 1, X * 2], axis=axis).astype(np.float32)
    lo = np.float32(0.8)
    for f in (lambda x: lax.atan2(x, x + 1), lambda x: lax.clamp(lo, x, np.float32(1.5)),
              lambda x: lax.pow(x, 2), lambda x: lax.real(lax.complex(x, x))):  # fmt: skip
        want = np.stack([np.asarray(f(np.take(xs, i, axis))) for i in range(3)], axis)
        np.testing.assert_allclose(np.asarray(vmap(f, axis, axis)(xs)), want, rtol=1e-6)
    bounds = np.array([0.6, 0.9, 1.2], np.float32)  # a scalar bound per example
    got = vmap(lambda b, x: lax.clamp(b, x, np.float32(5.0)), (0, axis))(bounds, xs)
    want = np.stack([np.clip(np.take(xs, i, axis), bounds[i], 5.0) for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want)


def test_array_operators():
    xf = np.array([-7.5, 7.5, -3.0, 3.0], np.float32)
    yf = np.array([2.0, -2.0, 2.0, -2.0], np.float32)
    xi = np.array([-7, 7, -3, 3, 9], np.int32)
    yi = np.array([2, -2, 2, -2, 3], np.int32)
    a, b, ai, bi = map(device_put, (xf, yf, xi, yi))
    np.testing.assert_array_equal(np.asarray(a % b), xf % yf)
    np.testing.assert_array_equal(np.asarray(a // b), xf // yf)
    np.testing.assert_array_equal(np.asarray(ai % bi), xi % yi)
    np.testing.assert_array_equal(np.asarray(ai // bi), xi // yi)
    np.testing.assert_array_equal(np.asarray(divmod(ai, 3)[1]), xi % 3)
    np.testing.assert_array_equal(np.asarray(ai**3), xi**3)
    np.testing.assert_array_equal(np.asarray(ai ** device_put(np.int32(3))), xi**3)
    np.testing.assert_allclose(np.asarray(a**2), xf**2)
    np.testing.assert_allclose(np.asarray(2.0**a), 2.0**xf, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(ai & 6), xi & 6)
    np.testing.assert_array_equal(np.asarray(ai | 6), xi | 6)
    np.testing.assert_array_equal(np.asarray(ai ^ 6), xi ^ 6)
    np.testing.assert_array_equal(np.asarray(~ai), ~xi)
    np.testing.assert_array_equal(np.asarray(ai << 2), xi << 2)
    np.testing.assert_array_equal(np.asarray(ai >> 1), xi >> 1)
    u = np.array([8, 2**31], np.uint32)
    np.testing.assert_array_equal(np.asarray(device_put(u) >> 1), u >> 1)
    np.testing.assert_array_equal(np.asarray(abs(ai)), np.abs(xi))
    np.testing.assert_array_equal(np.asarray(-5 % ai), -5 % xi)
    assert "integer_pow[y=2] a" in str(make_jaxpr(lambda x: x**2)(xf))


F, H, I, B, C = np.float32(1), np.float16(1), np.int32(1), np.bool_(True), np.complex64(1)
U = np.uint32(1)
TIP = " (Tip: jnp.{} is a similar function that does automatic type promotion on inputs)."
ERRORS = [
    (lambda: lax.rem(C, C), "rem does not accept dtype complex64 at position 0. Accepted "
     "dtypes at position 0 are subtypes of integer, floating."),
    (lambda: lax.rem(F, H), "lax.rem requires arguments to have the same dtypes, got "
     "float32, float16."),
    (lambda: lax.atan2(F, H), "lax.atan2 requires arguments to have the same dtypes, got "
     "float32, float16." + TIP.format("arctan2")),
    (lambda: lax.pow(I, F), "pow does not accept dtype int32 at position 0. Accepted dtypes "
     "at position 0 are subtypes of floating, complexfloating."),
    (lambda: lax.pow(F, H), "the first argument to pow must have an inexact dtype (float or "
     "complex), and the second argument must have an inexact or integer dtype, and two "
     "inexact dtypes must match, but got float32 and float16 respectively."),
    (lambda: lax.nextafter(I, I), "nextafter does not accept dtype int32 at position 0. "
     "Accepted dtypes at position 0 are subtypes of floating."),
    (lambda: lax.clamp(I, F, F), "lax.clamp requires arguments to have the same dtypes, got "
     "int32, float32, float32."),
    (lambda: lax.clamp(np.zeros(2, np.float32), np.zeros(3, np.float32), F),
     "clamp requires min.shape == operand.shape or min.shape == (), got min.shape=(2,), "
     "operand.shape=(3,)."),
    (lambda: lax.bitwise_and(F, F), "and does not accept dtype float32 at position 0. "
     "Accepted dtypes at position 0 are subtypes of integer, bool."),
    (lambda: lax.bitwise_and(I, B), "lax.and requires arguments to have the same dtypes, "
     "got int32, bool."),
    (lambda: lax.bitwise_not(F), "not does not accept dtype float32. Accepted dtypes are "
     "subtypes of integer, bool."),
    (lambda: lax.shift_left(I, U), "lax.shift_left requires arguments to have the same "
     "dtypes, got int32, uint32." + TIP.format("left_shift")),
    (lambda: lax.population_count(B), "population_count does not accept dtype bool. "
     "Accepted dtypes are subtypes of integer."),
    (lambda: lax.mulhi(F, F), "mulhi does not accept dtype float32 at position 0. Accepted "
     "dtypes at position 0 are subtypes of integer."),
    (lambda: lax.real(F), "real does not accept dtype float32. Accepted dtypes are subtypes "
     "of complexfloating."),
    (lambda: lax.conj(I), "conj does not accept dtype int32. Accepted dtypes are subtypes of "
     "float32, complexfloating, float64."),
    (lambda: lax.complex(F, H), "complex does not accept dtype float16 at position 1. "
     "Accepted dtypes at position 1 are subtypes of float32, float64."),
]  # fmt: skip


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, message = ERRORS[i]
    with pytest.raises(TypeError) as info:
        fn()
    assert str(info.value) == message


def test_boolean_plus_and_times_are_logical_or_and_and():
    a = device_put(np.array([True, False, False]))
    b = device_put(np.array([True, True, False]))
    np.testing.assert_array_equal(np.asarray(a * b), [True, False, False])
    np.testing.assert_array_equal(np.asarray(a + b), [True, True, False])
    assert (a * b).dtype == np.bool_ and (a + True).dtype == np.bool_
    assert (a * 2).dtype == np.int32  # a Python int promotes booleans to integers
    with pytest.raises(TypeError, match="sub does not accept dtype bool"):
        a - b


def test_complex_max_min_are_lexicographic_and_comparisons_keep_weak_types():
    a = np.array([1 + 2j, 1 + 1j, 5j], np.complex64)
    b = np.array([1 + 1j, 2 + 0j, 4j], np.complex64)
    np.testing.assert_array_equal(np.asarray(lax.max(a, b)), [1 + 2j, 2, 5j])
    np.testing.assert_array_equal(np.asarray(lax.min(a, b)), [1 + 1j, 1 + 1j, 4j])
    weak = lax.broadcast(2.0, (2,))
    assert lax.eq(weak, weak).weak_type and lax.lt(weak, 3.0).weak_type
    assert not lax.lt(weak, np.float32(1)).weak_type
    assert int(lax.square(np.int32(3))) == 9
