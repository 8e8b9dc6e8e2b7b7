"""lamina.numpy's bitwise, shift, logical and integer functions (bitwise_and ...
bitwise_count, left_shift/right_shift, logical_*, gcd, lcm) against NumPy, with result
dtypes and weak types as JAX 0.10.2 gives them (recorded below from JAX)."""

import numpy as np
import pytest
from result_types import check_binary, check_unary

import lamina.numpy as jnp
from lamina import interpreters as api

# Result dtypes of JAX 0.10.2 for each input of INPUTS (unary) or pair of PAIRS
# (binary): "~" marks a weak type, "E?" the exception raised.
UNARY = {
    "bitwise_count": "u8 u8 u8 u8 u8 ET ET ET ET ET u8 u8 ET",
    "bitwise_invert": "b i8 i32 u8 u32 ET ET ET ET ET i32~ b ET",
    "bitwise_not": "b i8 i32 u8 u32 ET ET ET ET ET i32~ b ET",
    "invert": "b i8 i32 u8 u32 ET ET ET ET ET i32~ b ET",
    "logical_not": "b b b b b b b b b b~ b~ b b~",
}
BINARY = {
    "bitwise_and": "b ET i16 i8 ET u32 i32 ET ET ET ET ET i32~ ET ET i32",
    "bitwise_or": "b ET i16 i8 ET u32 i32 ET ET ET ET ET i32~ ET ET i32",
    "bitwise_xor": "b ET i16 i8 ET u32 i32 ET ET ET ET ET i32~ ET ET i32",
    "bitwise_left_shift": "i32 ET i16 i8 ET u32 i32 ET ET ET ET ET i32~ ET ET i32",
    "bitwise_right_shift": "i32 ET i16 i8 ET u32 i32 ET ET ET ET ET i32~ ET ET i32",
    "left_shift": "i32 ET i16 i8 ET u32 i32 ET ET ET ET ET i32~ ET ET i32",
    "right_shift": "i32 ET i16 i8 ET u32 i32 ET ET ET ET ET i32~ ET ET i32",
    "gcd": "EV EV i16 i8 EV u32 i32 EV EV EV EV EV i32~ EV EV i32",
    "lcm": "EV EV i16 i8 EV u32 i32 EV EV EV EV EV i32~ EV EV i32",
    "logical_and": "b b b b b b b b b b b b~ b~ b b b",
    "logical_or": "b b b b b b b b b b b b~ b~ b b b",
    "logical_xor": "b b b b b b b b b b b b~ b~ b b b",
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_result_types_match_jax(name):
    check_unary(getattr(jnp, name), UNARY[name])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_result_types_match_jax(name):
    check_binary(getattr(jnp, name), BINARY[name])


INT_DTYPES = [np.int8, np.int32, np.uint8, np.uint32]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_bitwise_values_match_numpy(dtype):
    info = np.iinfo(dtype)
    x = np.array([[0, 1, 5, info.max], [info.min, 7, 12, 3]], dtype)
    y = np.array([[3, 1, 2, 1], [6, 0, 7, 3]], dtype)
    names = {
        "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
        "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift,
        "bitwise_left_shift": np.left_shift, "right_shift": np.right_shift,
        "bitwise_right_shift": np.right_shift, "logical_and": np.logical_and,
        "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    }  # fmt: skip
    unary = {"invert": np.invert, "bitwise_not": np.bitwise_not, "bitwise_invert": np.invert,
             "bitwise_count": np.bitwise_count, "logical_not": np.logical_not}  # fmt: skip
    results = api.jit(
        lambda a, b: (
            {n: getattr(jnp, n)(a, b) for n in names},
            {n: getattr(jnp, n)(a) for n in unary},
        )
    )(x, y)
    for name, np_fun in names.items():
        np.testing.assert_array_equal(results[0][name], np_fun(x, y), err_msg=name)
        assert results[0][name].dtype == np_fun(x, y).dtype, name
    for name, np_fun in unary.items():
        np.testing.assert_array_equal(results[1][name], np_fun(x), err_msg=name)
        assert results[1][name].dtype == np_fun(x).dtype, name


def test_shifts_past_the_width_and_of_negative_numbers():
    x = np.array([-16, 16, -1, 1], np.int32)
    # Arithmetic shift for signed integers, logical for unsigned; shifting by the
    # width or more gives 0 (or -1 for negative numbers shifted right), as in JAX.
    np.testing.assert_array_equal(jnp.right_shift(x, 2), [-4, 4, -1, 0])
    np.testing.assert_array_equal(jnp.right_shift(x, 40), [-1, 0, -1, 0])
    np.testing.assert_array_equal(jnp.left_shift(x, 40), [0, 0, 0, 0])
    np.testing.assert_array_equal(jnp.right_shift(x.astype(np.uint32), 28), [15, 0, 15, 0])
    np.testing.assert_array_equal(jnp.bitwise_count(np.array([-1, -8, 7], np.int8)), [1, 1, 3])
    assert jnp.left_shift(True, True).dtype == np.int32  # bools become integers


def test_bools_and_logical_truth():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(jnp.bitwise_and(a, b), a & b)
    np.testing.assert_array_equal(jnp.invert(a), ~a)
    f = np.array([0.0, -0.5, np.nan, 2.0], np.float32)
    np.testing.assert_array_equal(jnp.logical_and(f, a), np.logical_and(f, a))
    np.testing.assert_array_equal(jnp.logical_xor(f, 1j), np.logical_xor(f, 1j))
    np.testing.assert_array_equal(jnp.logical_not(f), np.logical_not(f))


def test_gcd_lcm_match_numpy():
    x = np.array([[12, -18, 0, 7], [0, 35, -48, 1]], np.int32)
    y = np.array([8, 27, 0, -21], np.int32)
    np.testing.assert_array_equal(jnp.gcd(x, y), np.gcd(x, y))
    np.testing.assert_array_equal(jnp.lcm(x, y), np.lcm(x, y))
    u = np.array([250, 12, 0], np.uint8)
    np.testing.assert_array_equal(jnp.gcd(u, np.uint8(10)), np.gcd(u, np.uint8(10)))
    assert jnp.gcd(u, 10).dtype == np.uint8
    with pytest.raises(ValueError, match="must be integers"):
        jnp.gcd(1.5, 2)
    with pytest.raises(ValueError, match="must be integers"):
        jnp.lcm(np.float32(3), 2)
    batched = api.vmap(jnp.gcd, (0, None))(x, y)
    np.testing.assert_array_equal(batched, np.stack([np.gcd(row, y) for row in x]))
    traced = api.jit(jnp.lcm)(x, y)
    np.testing.assert_array_equal(traced, np.lcm(x, y))


def test_errors():
    with pytest.raises(TypeError):
        jnp.bitwise_and(1.5, 2)
    with pytest.raises(TypeError):
        jnp.left_shift(np.float32(1), 2)
    with pytest.raises(TypeError, match="invert requires ndarray or scalar arguments"):
        jnp.invert([1, 2])
    # A string is not a valid argument of the compiled function (JAX's message).
    with pytest.raises(TypeError, match="Error interpreting argument"):
        jnp.bitwise_count("1")
