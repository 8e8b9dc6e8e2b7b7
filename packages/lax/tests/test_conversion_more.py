"""bitcast_convert_type, reduce_precision and mul's ``out_dtype``: values against NumPy's
views and ml_dtypes, shapes of size-changing casts, derivatives, vmap, JAX's errors."""

import ml_dtypes
import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import enable_x64, grad, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

X = np.array([[1.5, -2.0, 0.1], [3.25, 1e-3, -7.0]], np.float32)


@pytest.mark.parametrize("new", [np.int32, np.uint32, np.float32])
def test_bitcast_same_width(new):
    out = lax.bitcast_convert_type(X, new)
    assert out.shape == X.shape and out.dtype == new
    np.testing.assert_array_equal(np.asarray(out), X.view(new))


def test_bitcast_narrower_adds_a_trailing_axis():
    out = lax.bitcast_convert_type(X, np.uint8)
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(np.asarray(out).reshape(2, 12), X.view(np.uint8))
    halves = lax.bitcast_convert_type(X, ml_dtypes.bfloat16)
    assert halves.shape == (2, 3, 2)


def test_bitcast_wider_consumes_the_trailing_axis():
    raw = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    out = lax.bitcast_convert_type(raw, np.float32)
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(out), raw.reshape(2, 12).view(np.float32))
    text = str(make_jaxpr(lambda x: lax.bitcast_convert_type(x, np.float32))(raw))
    assert "b:f32[2,3] = bitcast_convert_type[new_dtype=float32] a" in text


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_bitcast_vmap(axis):
    xs = np.stack([X, X * 2, -X], axis=axis)
    f = lambda x: lax.bitcast_convert_type(x, np.uint16)  # noqa: E731
    want = np.stack([np.asarray(f(np.take(xs, i, axis))) for i in range(3)], axis)
    np.testing.assert_array_equal(np.asarray(vmap(f, axis, axis)(xs)), want)


def test_bitcast_has_zero_derivative():
    g = grad(lambda x: lax.convert_element_type(lax.bitcast_convert_type(x, np.int32), np.float32))
    assert float(g(np.float32(1.0))) == 0.0


def test_bitcast_errors():
    with pytest.raises(ValueError) as info:
        lax.bitcast_convert_type(np.zeros(3, np.int8), np.int32)
    assert str(info.value) == (
        "Attempting to convert array of shape (3,) from int8 of size 8 bits to int32 of size "
        "32, bits but 3 * 8 != 32"
    )
    with pytest.raises(TypeError) as info:
        lax.bitcast_convert_type(X, np.bool_)
    assert str(info.value) == (
        "lax.bitcast_convert_type does not support bool or complex values unless the operand "
        "and destination types match. Got operand dtype=float32, new_dtype=dtype('bool'). "
        "Consider using the arr.view() method instead."
    )


def test_reduce_precision_rounds_like_the_narrow_format():
    x = np.array([1.0001, 3.14159, -65519.0, 1e-8], np.float32)
    half = lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10)
    np.testing.assert_array_equal(np.asarray(half), x.astype(np.float16).astype(np.float32))
    bf16 = lax.reduce_precision(x, 8, 7)
    np.testing.assert_array_equal(np.asarray(bf16), x.astype(ml_dtypes.bfloat16).astype(np.float32))
    text = str(make_jaxpr(lambda x: lax.reduce_precision(x, 5, 10))(x))
    assert "reduce_precision[exponent_bits=5 mantissa_bits=10] a" in text
    with enable_x64():
        check_grads(lambda x: lax.reduce_precision(x, 11, 52), (x.astype(np.float64),), 2)
    assert float(grad(lambda x: lax.reduce_precision(x, 5, 10))(np.float32(1.0))) == 1.0
    batched = vmap(lambda x: lax.reduce_precision(x, 5, 10))(x.reshape(2, 2))
    np.testing.assert_array_equal(np.asarray(batched).ravel(), np.asarray(half))


def test_reduce_precision_errors():
    with pytest.raises(ValueError, match="exponent_bits must be positive; got 0"):
        lax.reduce_precision(X, 0, 10)
    with pytest.raises(ValueError, match="mantissa_bits must be non-negative; got -1"):
        lax.reduce_precision(X, 5, -1)
    with pytest.raises(TypeError) as info:
        lax.reduce_precision(np.int32(1), 5, 10)
    assert str(info.value) == (
        "reduce_precision does not accept dtype int32. Accepted dtypes are subtypes of floating."
    )


def test_mul_out_dtype():
    i8 = np.array([100, -100, 7], np.int8)
    np.testing.assert_array_equal(
        np.asarray(lax.mul(i8, i8, out_dtype=np.int32)), [10000] * 2 + [49]
    )
    np.testing.assert_array_equal(np.asarray(lax.mul(i8, i8, out_dtype=np.int8)), (i8 * i8))
    mixed = lax.mul(i8, np.float32(0.5), out_dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(mixed), i8.astype(np.float32) * 0.5)
    text = str(make_jaxpr(lambda x: lax.mul(x, x, out_dtype="float32"))(i8))
    assert "b:f32[3] = mul[out_dtype=float32] a a" in text
    assert "mul a a" in str(make_jaxpr(lambda x: lax.mul(x, x))(i8))
    h = np.array([0.5, 2.0], np.float16)
    g = grad(lambda x: lax.reduce_sum(lax.mul(x, x, out_dtype=np.float32), (0,)))(h)
    assert g.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(g), 2 * h)
    with pytest.raises(TypeError, match="data type 'foo' not understood"):
        lax.mul(i8, i8, out_dtype="foo")
