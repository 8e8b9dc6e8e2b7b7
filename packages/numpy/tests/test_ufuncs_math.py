# ruff: noqa: E501  (the recorded tables are long lines)
"""lamina.numpy's elementwise math (ufuncs.py and its ``_ufuncs_*`` helpers) against
NumPy: values over a sample of dtypes, result dtypes and weak types as JAX 0.10.2
gives them (recorded below from JAX), special values, derivatives (custom JVPs at their
special points included, recorded from JAX), ``vmap`` against a loop, and errors."""

import ml_dtypes
import numpy as np
import pytest
from result_types import check_binary, check_unary

import lamina.numpy as jnp
from lamina import interpreters as api
from lamina.interpreters.test_util import check_grads

# Result dtypes of JAX 0.10.2 for each input of INPUTS (unary) or pair of PAIRS
# (binary): "~" marks a weak type, "E?" the exception raised.
UNARY = {
    "abs": "b i8 i32 u8 u32 bf16 f16 f32 f32 f32~ i32~ b f32~",
    "absolute": "b i8 i32 u8 u32 bf16 f16 f32 f32 f32~ i32~ b f32~",
    "acos": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "acosh": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "arccos": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "arccosh": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "arcsin": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "arcsinh": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "arctan": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "arctanh": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "asin": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "asinh": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "atan": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "atanh": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "cbrt": "f32 f32 f32 f32 f32 bf16 f16 f32 ET f32~ f32~ f32 ET",
    "ceil": "b i8 i32 u8 u32 bf16 f16 f32 ET f32~ i32~ b ET",
    "conj": "b i8 i32 u8 u32 bf16 f16 f32 c64 f32~ i32~ b c64~",
    "conjugate": "b i8 i32 u8 u32 bf16 f16 f32 c64 f32~ i32~ b c64~",
    "cos": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "cosh": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "deg2rad": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "degrees": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "exp": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "exp2": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "expm1": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "fabs": "f32 f32 f32 f32 f32 bf16 f16 f32 ET f32~ f32~ f32 ET",
    "floor": "b i8 i32 u8 u32 bf16 f16 f32 ET f32~ i32~ b ET",
    "i0": "f32 f32 f32 f32 f32 bf16 f16 f32 EV f32~ f32~ f32 EV",
    "imag": "b i8 i32 u8 u32 bf16 f16 f32 f32 f32~ i32~ b f32~",
    "log": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "log10": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32 f32 f32 c64",
    "log1p": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "log2": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32 f32 f32 c64",
    "negative": "ET i8 i32 u8 u32 bf16 f16 f32 c64 f32~ i32~ ET c64~",
    "positive": "b i8 i32 u8 u32 bf16 f16 f32 c64 f32~ i32~ b c64~",
    "rad2deg": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "radians": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "real": "b i8 i32 u8 u32 bf16 f16 f32 f32 f32~ i32~ b f32~",
    "reciprocal": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "rint": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32 f32 c64~",
    "round": "EV i8 i32 u8 u32 bf16 f16 f32 c64 f32~ i32~ EV c64~",
    "around": "EV i8 i32 u8 u32 bf16 f16 f32 c64 f32~ i32~ EV c64~",
    "sign": "ET i8 i32 u8 u32 bf16 f16 f32 c64 f32~ i32~ ET c64~",
    "signbit": "b b b b b b b b EV b b b EV",
    "sin": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "sinc": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "sinh": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "spacing": "f32 f32 f32 f32 f32 bf16 f16 f32 EV f32 f32 f32 EV",
    "sqrt": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "square": "i32 i8 i32 u8 u32 bf16 f16 f32 c64 f32~ i32~ i32 c64~",
    "tan": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "tanh": "f32 f32 f32 f32 f32 bf16 f16 f32 c64 f32~ f32~ f32 c64~",
    "trunc": "b i8 i32 u8 u32 bf16 f16 f32 ET f32~ i32~ b ET",
    "nan_to_num": "b i8 i32 u8 u32 bf16 f16 f32 c64 f32 i32~ b c64",
    "angle": "f32 f32 f32 f32 f32 bf16 f16 f32 f32 f32 f32 f32 f32~",
    "frexp": "f32,i32 f32,i32 f32,i32 f32,i32 f32,i32 bf16,i32 f16,i32 f32,i32 ET f32,i32 f32,i32 f32,i32 ET",
    "modf": "f32,f32 f32,f32 f32,f32 f32,f32 f32,f32 bf16,bf16 f16,f16 f32,f32 ET f32~,f32~ f32~,f32~ f32,f32 ET",
}
BINARY = {
    "add": "b f32~ i16 i8 f16 u32 i32 f32 f16 c64 c64 f32~ i32~ f32 c64~ i32",
    "arctan2": "f32 f32~ f32 f32 f16 f32 f32 f32 f16 c64 c64 f32~ f32~ f32 c64~ f32",
    "atan2": "f32 f32~ f32 f32 f16 f32 f32 f32 f16 c64 c64 f32~ f32~ f32 c64~ f32",
    "copysign": "f32 f32~ f32 f32 f16 f32 f32 f32 f16 ET ET f32~ f32~ f32 ET f32",
    "divide": "f32 f32~ f32 f32 f16 f32 f32 f32 f16 c64 c64 f32~ f32~ f32 c64~ f32",
    "divmod": "i32,i32 f32~,f32~ i16,i16 i8,i8 f16,f16 u32,u32 i32,i32 f32,f32 f16,f16 ET ET f32~,f32~ i32~,i32~ f32,f32 ET i32,i32",
    "float_power": "f32 f32~ f32 f32 f16 f32 f32 f32 f16 c64 c64 f32~ f32~ f32 c64~ f32",
    "floor_divide": "i32 f32~ i16 i8 f16 u32 i32 f32 f16 ET ET f32~ i32~ f32 ET i32",
    "fmax": "b f32~ i16 i8 f16 u32 i32 f32 f16 c64 c64 f32~ i32~ f32 c64~ i32",
    "fmin": "b f32~ i16 i8 f16 u32 i32 f32 f16 c64 c64 f32~ i32~ f32 c64~ i32",
    "fmod": "i32 f32~ i16 i8 f16 u32 i32 f32 f16 ET ET f32~ i32~ f32 ET i32",
    "heaviside": "f32 f32 f32 f32 f16 f32 f32 f32 f16 ET ET f32~ f32~ f32 ET f32",
    "hypot": "f32 f32 f32 f32 f16 f32 f32 f32 f16 EV EV f32~ f32~ f32 EV f32",
    "ldexp": "f32 EV f32 f32 EV f32 f32 EV EV EV EV f32 f32 EV EV f32",
    "logaddexp": "f32 f32~ f32 f32 f16 f32 f32 f32 f16 c64 c64 f32~ f32~ f32 c64 f32",
    "logaddexp2": "f32 f32 f32 f32 f16 f32 f32 f32 f16 c64 c64 f32~ f32~ f32 c64 f32",
    "maximum": "b f32~ i16 i8 f16 u32 i32 f32 f16 c64 c64 f32~ i32~ f32 c64~ i32",
    "minimum": "b f32~ i16 i8 f16 u32 i32 f32 f16 c64 c64 f32~ i32~ f32 c64~ i32",
    "mod": "i32 f32~ i16 i8 f16 u32 i32 f32 f16 ET ET f32~ i32~ f32 ET i32",
    "multiply": "b f32~ i16 i8 f16 u32 i32 f32 f16 c64 c64 f32~ i32~ f32 c64~ i32",
    "nextafter": "f32 f32~ f32 f32 f16 f32 f32 f32 f16 ET ET f32~ f32~ f32 ET f32",
    "pow": "i32 f32~ i16 i8 f16 u32 i32 f32 f16 c64 c64 f32~ i32~ f32 c64~ i32",
    "power": "i32 f32~ i16 i8 f16 u32 i32 f32 f16 c64 c64 f32~ i32~ f32 c64~ i32",
    "remainder": "i32 f32~ i16 i8 f16 u32 i32 f32 f16 ET ET f32~ i32~ f32 ET i32",
    "subtract": "ET f32~ i16 i8 f16 u32 i32 f32 f16 c64 c64 f32~ i32~ f32 c64~ i32",
    "true_divide": "f32 f32~ f32 f32 f16 f32 f32 f32 f16 c64 c64 f32~ f32~ f32 c64~ f32",
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_result_types_match_jax(name):
    check_unary(getattr(jnp, name), UNARY[name])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_result_types_match_jax(name):
    check_binary(getattr(jnp, name), BINARY[name])


# ---------------------------------------------------------------- values against NumPy

REAL_POINTS = np.array([[-0.75, -0.3, 0.0], [0.4, 0.9, 2.5]])
INT_POINTS = np.array([[-3, -1, 0], [1, 2, 5]])
COMPLEX_POINTS = np.array(
    [[0.5 + 0.25j, -0.3 + 1.2j, 1.5 - 0.5j], [-2.0 - 0.7j, 0.2j + 0.1, 3.0 + 2.0j]]
)

UNARY_NUMPY = {
    "abs": np.abs, "absolute": np.absolute, "fabs": np.fabs, "negative": np.negative,
    "positive": np.positive, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "rint": np.rint, "round": np.round, "around": np.round,
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "cbrt": np.cbrt,
    "square": np.square, "reciprocal": lambda x: 1 / x, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "arcsinh": np.arcsinh, "arccosh": np.arccosh,
    "arctanh": np.arctanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "deg2rad": lambda x: x * (np.pi / 180), "radians": lambda x: x * (np.pi / 180),
    "rad2deg": lambda x: x * (180 / np.pi), "degrees": lambda x: x * (180 / np.pi), "sinc": np.sinc, "i0": np.i0, "conj": np.conj,
    "conjugate": np.conjugate, "real": np.real, "imag": np.imag, "angle": np.angle,
    "signbit": np.signbit, "nan_to_num": np.nan_to_num,
}  # fmt: skip
NO_COMPLEX = {"fabs", "floor", "ceil", "trunc", "cbrt", "i0", "signbit"}
NO_BOOL = {"negative", "sign", "round", "around", "positive"}
# A sample of functions for the dtypes other than float32 (compiling is what costs).
SAMPLE = {
    "abs",
    "negative",
    "positive",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "rint",
    "round",
    "exp",
    "log1p",
    "sqrt",
    "square",
    "reciprocal",
    "sin",
    "arctan",
    "tanh",
    "arcsinh",
    "sinc",
    "conj",
    "real",
    "imag",
    "angle",
    "signbit",
    "nan_to_num",
    "fabs",
}
TOLERANCE = {np.float16: 2e-3, ml_dtypes.bfloat16: 2e-2, np.float32: 2e-6, np.complex64: 2e-6}


def reference(np_fun, x, out_dtype):
    """NumPy's result in double precision (integer results in the input's type),
    rounded to ``out_dtype``."""
    out_dtype = np.dtype(out_dtype)
    if out_dtype.kind in "biu":
        return np.asarray(np_fun(x)).astype(out_dtype)
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    with np.errstate(all="ignore"):
        return np.asarray(np_fun(wide)).astype(out_dtype)


def assert_matches(actual, expected, name=""):
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype, (name, actual.dtype, expected.dtype)
    tol = TOLERANCE.get(actual.dtype.type, 0)
    if actual.dtype.kind in "fcV":
        wide = np.complex128 if actual.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(actual.astype(wide), expected.astype(wide), rtol=tol,
                                   atol=tol, equal_nan=True, err_msg=name)  # fmt: skip
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=name)


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.int32,
        np.uint8,
        ml_dtypes.bfloat16,
        np.float16,
        np.float32,
        np.complex64,
    ],
    ids=lambda d: np.dtype(d).name,
)
def test_unary_values_match_numpy(dtype):
    kind = np.dtype(dtype).kind
    points = {"b": INT_POINTS > 0, "i": INT_POINTS, "u": INT_POINTS + 3, "c": COMPLEX_POINTS}
    x = points.get(kind, REAL_POINTS).astype(dtype)
    names = [
        n
        for n in UNARY_NUMPY
        if not (kind == "c" and n in NO_COMPLEX)
        and not (kind == "b" and n in NO_BOOL)
        and (dtype == np.float32 or n in SAMPLE)
    ]
    # One compiled program per dtype for every function (compiling is what costs).
    results = api.jit(lambda v: {n: getattr(jnp, n)(v) for n in names})(x)
    for name in names:
        out = results[name]
        assert_matches(out, reference(UNARY_NUMPY[name], x, out.dtype), name)


REAL_PAIR = (np.array([[-2.5, -1.0, 0.0], [0.5, 3.0, 7.25]]),
             np.array([[1.5, -0.75, 2.0], [-0.5, 0.0, 2.0]]))  # fmt: skip
INT_PAIR = (np.array([[-7, -3, 0], [5, 8, 9]]), np.array([[2, -2, 3], [-3, 1, 4]]))
BINARY_NUMPY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "true_divide": np.true_divide, "floor_divide": np.floor_divide, "remainder": np.remainder,
    "mod": np.mod, "fmod": np.fmod, "maximum": np.maximum, "minimum": np.minimum,
    "fmax": np.fmax, "fmin": np.fmin, "float_power": np.power, "arctan2": np.arctan2,
    "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign, "heaviside": np.heaviside,
    "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2, "power": np.power,
}  # fmt: skip
INTEGER_BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "mod",
                  "fmod", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot"]  # fmt: skip


@pytest.mark.parametrize(
    "dtype", [np.int8, np.int32, np.uint32, np.float16, np.float32], ids=lambda d: np.dtype(d).name
)
def test_binary_values_match_numpy(dtype):
    kind = np.dtype(dtype).kind
    x, y = INT_PAIR if kind in "iu" else REAL_PAIR
    if kind == "u":
        x, y = np.abs(x), np.abs(y)
    x, y = x.astype(dtype), y.astype(dtype)
    names = INTEGER_BINARY if kind in "iu" else list(BINARY_NUMPY)
    # y broadcast against x's rows checks broadcasting too.
    results = api.jit(lambda a, b: {n: getattr(jnp, n)(a, b) for n in names})(x, y[:1])
    for name in names:
        out = results[name]
        np_fun = BINARY_NUMPY[name]
        expected = reference(lambda a, f=np_fun: f(a, y[:1].astype(a.dtype)), x, out.dtype)
        assert_matches(out, expected, name)


def test_binary_complex_values_match_numpy():
    x, y = COMPLEX_POINTS.astype(np.complex64), COMPLEX_POINTS[::-1].astype(np.complex64)
    names = ["add", "subtract", "multiply", "divide", "float_power"]
    results = api.jit(lambda a, b: {n: getattr(jnp, n)(a, b) for n in names})(x, y)
    for name in names:
        ref = BINARY_NUMPY[name] if name != "float_power" else np.power
        expected = reference(lambda a, f=ref: f(a, y.astype(np.complex128)), x, np.complex64)
        np.testing.assert_allclose(results[name], expected, rtol=2e-5, err_msg=name)
    # Complex numbers order by real part, then imaginary part (JAX's lax.max).
    a = np.array([1 + 2j, -0.5j, 3 - 1j, 2 + 1j], np.complex64)
    b = np.array([1 + 0j, 0j, 2.25 + 0j, 2 + 3j], np.complex64)
    np.testing.assert_array_equal(jnp.maximum(a, b), [1 + 2j, 0j, 3 - 1j, 2 + 3j])
    np.testing.assert_array_equal(jnp.minimum(a, b), [1 + 0j, -0.5j, 2.25 + 0j, 2 + 1j])


def test_division_and_remainder_signs_and_zeros():
    x = np.array([7, -7, 7, -7, 0, 5], np.int32)
    y = np.array([2, 2, -2, -2, 3, 0], np.int32)
    q, r = jnp.divmod(x, y)
    np.testing.assert_array_equal(q[:5], np.floor_divide(x[:5], y[:5]))
    np.testing.assert_array_equal(r, [1, 1, -1, -1, 0, 0])  # remainder by 0 is 0 in JAX
    np.testing.assert_array_equal(jnp.fmod(x, y), [1, -1, 1, -1, 0, 0])
    np.testing.assert_array_equal(jnp.floor_divide(np.uint8(7), np.uint8(2)), 3)
    xf = np.array([5.5, -5.5, 5.5, -0.0, 3.0], np.float32)
    yf = np.array([2.0, 2.0, -2.0, 1.0, 0.0], np.float32)
    with np.errstate(all="ignore"):
        expected_q, expected_r = np.divmod(xf, yf)
    qf, rf = jnp.divmod(xf, yf)
    np.testing.assert_array_equal(qf, expected_q)
    np.testing.assert_array_equal(rf, expected_r)
    # JAX keeps the sign of a zero remainder's dividend (NumPy gives +0.0).
    assert np.signbit(jnp.remainder(np.float32(-0.0), 1.0))
    for fun in (jnp.floor_divide, jnp.remainder, jnp.divmod, jnp.fmod):
        with pytest.raises(TypeError, match="complex"):
            fun(np.complex64(1j), 2.0)


def test_power_integer_and_float_cases():
    # Integer powers as JAX 0.10.2 computes them (recorded): squaring over the low 6
    # bits of the exponent (so 3 ** -1 is 3 ** 63, wrapped), 0 ** n == 0 for n != 0.
    base = np.array([2, 3, -2, 0, 0, 5, 2], np.int32)
    exponent = np.array([3, -1, 5, 0, 4, 2, 70], np.int32)
    np.testing.assert_array_equal(jnp.power(base, exponent), [8, 2111105451, -32, 1, 0, 25, 64])
    assert jnp.power(base, exponent).dtype == np.int32
    np.testing.assert_array_equal(jnp.power(np.int8(3), 4), 81)
    # A concrete integer exponent is lax.integer_pow, even for a 0-d array exponent.
    jaxpr = str(api.make_jaxpr(lambda x: jnp.power(x, 3))(np.float32(2.0)))
    assert "integer_pow" in jaxpr and "y=3" in jaxpr
    jaxpr = str(api.make_jaxpr(lambda x, y: jnp.pow(x, y))(np.float32(2.0), np.int32(3)))
    assert "pow" in jaxpr and "integer_pow" not in jaxpr
    np.testing.assert_allclose(jnp.power(np.float32(2.0), np.array([0.5, -1.0])), [2**0.5, 0.5])
    np.testing.assert_allclose(jnp.power(np.float32(2.0), np.array([3, -2], np.int32)), [8, 0.25])
    assert jnp.power(True, 3).dtype == np.int32  # bool base becomes an integer
    assert jnp.float_power(3, 2).dtype == np.float32


def test_round_decimals():
    x = np.array([1.2345, -2.5, 0.5, 1.5, 123.456, -0.125], np.float32)
    for decimals in (0, 1, 2, -1, -2):
        np.testing.assert_allclose(jnp.round(x, decimals), np.round(x, decimals), rtol=1e-6)
    np.testing.assert_allclose(jnp.around(x.astype(np.float16), 2),
                               np.round(x.astype(np.float16), 2), rtol=1e-3)  # fmt: skip
    assert jnp.round(np.float32(1.25), 40) == np.float32(1.25)  # beyond float32's range
    np.testing.assert_array_equal(jnp.round(np.array([15, -25], np.int32), 1), [15, -25])
    with pytest.raises(NotImplementedError, match="decimals < 0"):
        jnp.round(np.array([15], np.int32), -1)
    c = np.array([1.26 - 2.54j], np.complex64)
    np.testing.assert_allclose(jnp.round(c, 1), np.round(c, 1), rtol=1e-6)
    np.testing.assert_array_equal(jnp.rint(np.array([0.5, 1.5, -2.5])), [0.0, 2.0, -2.0])
    with pytest.raises(NotImplementedError, match="'out'"):
        jnp.round(x, 0, out=x)


def test_clip():
    x = np.array([-3.0, 0.5, 2.0, np.nan], np.float32)
    np.testing.assert_array_equal(jnp.clip(x, -1, 1), np.clip(x, -1, 1))
    np.testing.assert_array_equal(jnp.clip(x, max=1.0), np.clip(x, None, 1.0))
    np.testing.assert_array_equal(jnp.clip(x, min=np.array([0.0, 1.0, 3.0, 0.0])),
                                  np.clip(x, np.array([0.0, 1.0, 3.0, 0.0]), None))  # fmt: skip
    np.testing.assert_array_equal(jnp.clip(x), x)
    assert jnp.clip(np.array([1, 5], np.int8), 0, 3).dtype == np.int8
    with pytest.raises(ValueError, match="No input"):
        jnp.clip(min=0)
    with pytest.raises(ValueError, match="Complex values have no ordering"):
        jnp.clip(np.array([1j]), 0, 1)
    with pytest.raises(TypeError, match="clip requires ndarray or scalar arguments"):
        jnp.clip([1.0, 2.0], 0, 1)


def test_nan_to_num_frexp_ldexp_modf_spacing():
    x = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0], np.float32)
    np.testing.assert_array_equal(jnp.nan_to_num(x), np.nan_to_num(x))
    np.testing.assert_array_equal(jnp.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
                                  np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0))  # fmt: skip
    c = np.array([complex(np.nan, np.inf)], np.complex64)
    np.testing.assert_array_equal(jnp.nan_to_num(c), np.nan_to_num(c))
    np.testing.assert_array_equal(jnp.nan_to_num(np.array([3], np.int8)), [3])
    y = np.array([0.0, -0.0, 1.0, -12.5, 3e-30, np.inf, -np.inf, 2.0**100], np.float32)
    mantissa, exponent = jnp.frexp(y)
    np_mantissa, np_exponent = np.frexp(y)
    np.testing.assert_array_equal(mantissa, np_mantissa)
    np.testing.assert_array_equal(exponent, np_exponent)
    assert exponent.dtype == np.int32
    # XLA on CPU flushes subnormals: JAX answers (0.5, -149) for them.
    subnormal = np.array([3e-39, np.finfo(np.float32).smallest_subnormal], np.float32)
    np.testing.assert_array_equal(jnp.frexp(subnormal)[0], [0.5, 0.5])
    np.testing.assert_array_equal(jnp.frexp(subnormal)[1], [-149, -149])
    for dtype in (np.float16, ml_dtypes.bfloat16):
        m, e = jnp.frexp(np.array([0.375, -6.0], dtype))
        np.testing.assert_array_equal(np.asarray(m, np.float32), [0.75, -0.75])
        np.testing.assert_array_equal(e, [-1, 3])
    shifts = np.array([0, 1, -1, 5, 40, 3, 1, -20], np.int32)
    np.testing.assert_array_equal(jnp.ldexp(y, shifts), np.ldexp(y, shifts))
    with pytest.raises(ValueError, match="ldexp not supported"):
        jnp.ldexp(np.float32(1.0), np.float32(2.0))
    frac, whole = jnp.modf(np.array([2.5, -2.5, 0.0], np.float32))
    np.testing.assert_array_equal(frac, [0.5, -0.5, 0.0])
    np.testing.assert_array_equal(whole, [2.0, -2.0, 0.0])
    z = np.array([1.0, -1.0, 0.0, -0.0, 1e-40, 3e38, np.inf], np.float32)
    # JAX's spacing(-0.0) is the negative smallest subnormal (NumPy's is positive).
    np.testing.assert_array_equal(
        jnp.spacing(z), np.where(z == 0, np.copysign(1e-45, z), np.spacing(z))
    )
    np.testing.assert_array_equal(jnp.spacing(z[:4].astype(np.float16)),
                                  np.spacing(z[:4].astype(np.float16)))  # fmt: skip
    with pytest.raises(ValueError, match="complex"):
        jnp.spacing(np.complex64(1j))


def test_sign_bits_and_float_neighbours():
    x = np.array([-0.0, 0.0, -np.nan, np.nan, -np.inf, 2.0], np.float32)
    np.testing.assert_array_equal(jnp.signbit(x), np.signbit(x))
    np.testing.assert_array_equal(jnp.signbit(x.astype(ml_dtypes.bfloat16)), np.signbit(x))
    np.testing.assert_array_equal(jnp.signbit(np.array([-3, 4], np.int8)), [True, False])
    y = np.array([1.0, -2.0, -0.0, 0.0, 5.0, -3.0], np.float32)
    np.testing.assert_array_equal(jnp.copysign(y, x), np.copysign(y, x))
    np.testing.assert_array_equal(jnp.nextafter(y, x), np.nextafter(y, x))
    np.testing.assert_array_equal(jnp.heaviside(np.array([-1.0, 0.0, np.nan, 2.0]), 0.5),
                                  np.heaviside(np.array([-1.0, 0.0, np.nan, 2.0]), 0.5))  # fmt: skip
    big = np.array([3e38, 0.0, np.inf, 3.0], np.float32)
    other = np.array([3.3e38, 0.0, np.nan, 4.0], np.float32)
    np.testing.assert_allclose(jnp.hypot(big, other), np.hypot(big.astype(np.float64),
                               other.astype(np.float64)).astype(np.float32), rtol=1e-6)  # fmt: skip
    with pytest.raises(ValueError, match="hypot is not well defined for complex"):
        jnp.hypot(np.complex64(1j), 1.0)
    with pytest.raises(TypeError, match="copysign does not support complex"):
        jnp.copysign(np.complex64(1j), 1.0)


def test_angle_and_unwrap():
    z = np.array([1 + 1j, -1 + 0j, -1j, 0j], np.complex64)
    np.testing.assert_allclose(jnp.angle(z), np.angle(z), rtol=1e-6)
    np.testing.assert_allclose(jnp.angle(z, deg=True), np.angle(z, deg=True), rtol=1e-6)
    assert jnp.angle(np.float16(-2.0)).dtype == np.float32  # a float scalar: default float
    phase = np.array([[0.0, 3.0, 6.5, 0.2, -3.5], [1.0, -2.0, 4.0, 9.0, 2.0]], np.float32)
    for axis, kwargs in ((-1, {}), (0, {}), (1, {"discont": 4.0}), (1, {"period": 5.0})):
        np.testing.assert_allclose(jnp.unwrap(phase, axis=axis, **kwargs),
                                   np.unwrap(phase, axis=axis, **kwargs), rtol=1e-5, atol=1e-5)  # fmt: skip
    ints = np.array([0, 9, 2, 15, 5], np.int32)
    np.testing.assert_array_equal(jnp.unwrap(ints, period=8), np.unwrap(ints, period=8))
    assert jnp.unwrap(ints, period=8).dtype == np.int32
    with pytest.raises(ValueError, match="complex"):
        jnp.unwrap(np.array([1j, 2j]))


# ---------------------------------------------------------------- derivatives


def central_difference(np_fun, x, order):
    h = 1e-4 if order == 1 else 1e-3
    with np.errstate(all="ignore"):
        if order == 1:
            return (np_fun(x + h) - np_fun(x - h)) / (2 * h)
        return (np_fun(x + h) - 2 * np_fun(x) + np_fun(x - h)) / h**2


DIFFERENTIABLE = {
    "sin": (np.sin, None), "cos": (np.cos, None), "tan": (np.tan, None),
    "arcsin": (np.arcsin, None), "arccos": (np.arccos, None), "arctan": (np.arctan, None),
    "sinh": (np.sinh, None), "cosh": (np.cosh, None), "tanh": (np.tanh, None),
    "arcsinh": (np.arcsinh, None), "arctanh": (np.arctanh, None),
    "arccosh": (np.arccosh, "above_one"), "exp": (np.exp, None), "exp2": (np.exp2, None),
    "expm1": (np.expm1, None), "log": (np.log, "positive"), "log2": (np.log2, "positive"),
    "log10": (np.log10, "positive"), "log1p": (np.log1p, None),
    "sqrt": (np.sqrt, "positive"), "cbrt": (np.cbrt, "positive"), "square": (np.square, None),
    "reciprocal": (lambda v: 1 / v, "positive"), "sinc": (np.sinc, None), "i0": (np.i0, None),
    "deg2rad": (np.deg2rad, None), "abs": (np.abs, None), "fabs": (np.fabs, None),
    "nan_to_num": (np.nan_to_num, None),
}  # fmt: skip
DOMAINS = {None: [-0.6, -0.2, 0.35, 0.8], "positive": [0.5, 1.5, 2.5, 3.5],
           "above_one": [1.2, 1.5, 2.5, 3.5]}  # fmt: skip


def test_first_and_second_derivatives_match_numerical():
    points = {n: np.array(DOMAINS[d], np.float32) for n, (_, d) in DIFFERENTIABLE.items()}

    def derivatives(pts):
        out = {}
        for name, x in pts.items():
            f = getattr(jnp, name)
            d1 = api.vmap(api.grad(f))(x)
            d2 = api.vmap(api.grad(api.grad(f)))(x)
            out[name] = (d1, d2)
        return out

    results = api.jit(derivatives)(points)
    for name, (np_fun, _) in DIFFERENTIABLE.items():
        x = points[name].astype(np.float64)
        d1, d2 = results[name]
        np.testing.assert_allclose(d1, central_difference(np_fun, x, 1), rtol=2e-3, atol=2e-3,
                                   err_msg=name)  # fmt: skip
        np.testing.assert_allclose(d2, central_difference(np_fun, x, 2), rtol=2e-2, atol=2e-2,
                                   err_msg=name)  # fmt: skip


def test_custom_derivatives_at_special_points_match_jax():
    grad = api.grad

    def derivatives():
        return [
            grad(jnp.sinc)(0.0),
            grad(grad(jnp.sinc))(0.0),
            grad(grad(grad(jnp.sinc)))(0.0),
            grad(jnp.i0)(0.0),
            *grad(jnp.logaddexp, (0, 1))(0.0, 0.0),
            *grad(jnp.logaddexp, (0, 1))(-np.inf, 1.0),
            *grad(jnp.logaddexp, (0, 1))(np.inf, np.inf),
            *grad(jnp.logaddexp2, (0, 1))(1.0, 3.0),
            *grad(jnp.hypot, (0, 1))(3.0, 4.0),
            *grad(jnp.power, (0, 1))(0.0, 2.0),
            *grad(jnp.power, (0, 1))(2.0, 3.0),
            grad(lambda x: jnp.power(x, 0))(0.0),
            grad(lambda x: jnp.frexp(x)[0])(12.0),
            grad(lambda x: jnp.ldexp(x, 3))(1.5),
            *grad(jnp.copysign, (0, 1))(2.0, -1.0),
            *grad(jnp.fmax, (0, 1))(1.0, 1.0),
            *grad(jnp.fmin, (0, 1))(1.0, np.nan),
            *grad(jnp.remainder, (0, 1))(5.5, 2.0),
            *grad(jnp.heaviside, (0, 1))(0.0, 0.5),
            grad(lambda x: jnp.modf(x)[0])(1.3),
            grad(jnp.round)(1.3),
            grad(jnp.clip)(1.5, 0.0, 1.0),
        ]

    # Recorded from JAX 0.10.2.
    expected = [0.0, -3.2898684, 0.0, 0.0, 0.5, 0.5, 0.0, 1.0, 1.0, 1.0, 0.2, 0.8, 0.6, 0.8,
                0.0, 0.0, 12.0, 5.5451775, 0.0, 0.0625, 8.0, -1.0, 0.0, 0.0, 1.0, 1.0, 0.0,
                1.0, -2.0, 0.0, 1.0, 1.0, 0.0, 0.0]  # fmt: skip
    np.testing.assert_allclose(api.jit(derivatives)(), expected, rtol=1e-6)


def test_check_grads_of_binary_functions():
    x = np.array([0.7, -1.3, 2.1], np.float32)
    y = np.array([1.9, 0.6, -0.8], np.float32)
    combined = api.jit(lambda a, b: jnp.logaddexp(a, b) + jnp.arctan2(a, b) * jnp.hypot(a, b)
                          + jnp.divide(a, b) + jnp.float_power(jnp.abs(b), a))  # fmt: skip
    check_grads(combined, (x, y), order=2, modes=["rev"], atol=3e-2, rtol=3e-2)


# ---------------------------------------------------------------- transformations, errors


def test_vmap_matches_loop():
    x = np.array([[0.5, -1.5, 2.0], [3.0, -0.25, 1.0]], np.float32)
    y = np.array([1.5, -2.0, 0.5], np.float32)
    for fun in (jnp.ldexp,):
        other = y.astype(np.int32) if fun is jnp.ldexp else y
        batched = api.vmap(fun, (0, None))(x, other)
        looped = np.stack([np.asarray(fun(row, other)) for row in x])
        np.testing.assert_array_equal(batched, looped)
    batched = api.vmap(lambda r: jnp.round(r, 1))(x)
    np.testing.assert_array_equal(batched, np.stack([np.asarray(jnp.round(r, 1)) for r in x]))


def test_jit_matches_eager():
    x = np.array([0.3, -2.7, 5.5], np.float32)
    for fun in (jnp.sinc, jnp.i0, jnp.spacing, jnp.cbrt, jnp.rint):
        np.testing.assert_array_equal(api.jit(fun)(x), fun(x))


def test_non_array_arguments_raise_type_error():
    with pytest.raises(
        TypeError,
        match=r"sin requires ndarray or scalar arguments, got <class 'list'> at position 0",
    ):
        jnp.sin([1.0, 2.0])
    with pytest.raises(TypeError, match="power requires ndarray or scalar arguments"):
        jnp.power(2.0, [1, 2])
    with pytest.raises(TypeError, match="arctan2 requires ndarray or scalar arguments"):
        jnp.arctan2(None, 1.0)
    with pytest.raises(TypeError):
        jnp.exp("abc")
    with pytest.raises(TypeError, match="fabs' does not support complex"):
        jnp.fabs(np.complex64(1j))
    with pytest.raises(TypeError, match="add got incompatible shapes for broadcasting"):
        jnp.add(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.add(np.ones(3), np.ones((2, 4)))
