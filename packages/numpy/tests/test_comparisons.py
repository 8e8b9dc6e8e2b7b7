"""lamina.numpy's comparisons and value tests (comparisons.py): equal ... greater_equal
(complex ordering as JAX), isclose/allclose, array_equal/array_equiv, isnan/isinf/
isfinite/isposinf/isneginf/iscomplex/isreal against NumPy, with result dtypes and weak
types as JAX 0.10.2 gives them (recorded below from JAX)."""

import ml_dtypes
import numpy as np
import pytest
from result_types import check_binary, check_unary

import lamina.numpy as jnp
from lamina import interpreters as api

# Result dtypes of JAX 0.10.2 for each input of INPUTS (unary) or pair of PAIRS
# (binary): "~" marks a weak type, "E?" the exception raised.
UNARY = {
    "isfinite": "b b b b b b b b b b~ b b b~",
    "isinf": "b b b b b b b b b b b b b",
    "isnan": "b b b b b b b b b b~ b~ b b~",
    "isposinf": "b b b b b b b b EV b b b EV",
    "isneginf": "b b b b b b b b EV b b b EV",
    "iscomplex": "b b b b b b b b b b~ b~ b b~",
    "isreal": "b b b b b b b b b b~ b~ b b~",
}
BINARY = {
    "equal": "b b~ b b b b b b b b b b~ b~ b b~ b",
    "not_equal": "b b~ b b b b b b b b b b~ b~ b b~ b",
    "less": "b b~ b b b b b b b b b b~ b~ b b~ b",
    "less_equal": "b b~ b b b b b b b b b b~ b~ b b~ b",
    "greater": "b b~ b b b b b b b b b b~ b~ b b~ b",
    "greater_equal": "b b~ b b b b b b b b b b~ b~ b b~ b",
    "isclose": "b b b b b b b b b b b b b b b b",
    "allclose": "b b b b b b b b b b b b b b b b",
    "array_equal": "b b b b b b b b b b b b b b b b",
    "array_equiv": "b b b b b b b b b b b b b b b b",
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_result_types_match_jax(name):
    check_unary(getattr(jnp, name), UNARY[name])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_result_types_match_jax(name):
    check_binary(getattr(jnp, name), BINARY[name])


def test_comparisons_match_numpy():
    x = np.array([[1.0, np.nan, -np.inf, 2.0], [0.0, -0.0, 3.0, np.inf]], np.float32)
    y = np.array([1.0, 1.0, -np.inf, 2.5], np.float32)
    names = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less,
             "less_equal": np.less_equal, "greater": np.greater,
             "greater_equal": np.greater_equal}  # fmt: skip
    results = api.jit(lambda a, b: {n: getattr(jnp, n)(a, b) for n in names})(x, y)
    for name, np_fun in names.items():
        np.testing.assert_array_equal(results[name], np_fun(x, y), err_msg=name)
        assert results[name].dtype == np.bool_
    # Complex numbers compare by real part, then imaginary part (as JAX).
    a = np.array([1 + 2j, 1 + 2j, 2 + 0j, 1 - 1j], np.complex64)
    b = np.array([1 + 3j, 1 + 2j, 1 + 5j, 1 + 0j], np.complex64)
    np.testing.assert_array_equal(jnp.less(a, b), [True, False, False, True])
    np.testing.assert_array_equal(jnp.greater_equal(a, b), [False, True, True, False])
    np.testing.assert_array_equal(jnp.equal(a, b), a == b)
    np.testing.assert_array_equal(jnp.less(np.int8(-1), np.uint8(200)), True)


def test_value_classifiers_match_numpy():
    x = np.array([1.0, np.nan, np.inf, -np.inf, -0.0], np.float32)
    c = np.array([1 + 1j, complex(np.nan, 0), complex(0, np.inf), 2 + 0j], np.complex64)
    names = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
             "isposinf": np.isposinf, "isneginf": np.isneginf, "iscomplex": np.iscomplex,
             "isreal": np.isreal}  # fmt: skip
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        values = x.astype(dtype)
        for name, np_fun in names.items():
            np.testing.assert_array_equal(getattr(jnp, name)(values), np_fun(x), err_msg=name)
    for name in ("isnan", "isinf", "isfinite", "iscomplex", "isreal"):
        np.testing.assert_array_equal(getattr(jnp, name)(c), names[name](c), err_msg=name)
    ints = np.array([0, 5], np.int32)
    for name in ("isnan", "isinf", "isposinf", "isneginf", "iscomplex"):
        np.testing.assert_array_equal(getattr(jnp, name)(ints), [False, False], err_msg=name)
    np.testing.assert_array_equal(jnp.isfinite(ints), [True, True])
    with pytest.raises(ValueError, match="not well defined for complex"):
        jnp.isposinf(c)
    with pytest.raises(NotImplementedError, match="'out'"):
        jnp.isneginf(x, out=x)


def test_isclose_and_allclose():
    a = np.array([1.0, 1.0 + 1e-6, np.nan, np.inf, -np.inf, 1e-9, 2.0], np.float32)
    b = np.array([1.0, 1.0, np.nan, np.inf, np.inf, 0.0, 2.1], np.float32)
    np.testing.assert_array_equal(jnp.isclose(a, b), np.isclose(a, b))
    np.testing.assert_array_equal(
        jnp.isclose(a, b, equal_nan=True), np.isclose(a, b, equal_nan=True)
    )
    np.testing.assert_array_equal(
        jnp.isclose(a, b, rtol=0.1, atol=0.0), np.isclose(a, b, rtol=0.1, atol=0.0)
    )
    assert not jnp.allclose(a, b)
    assert jnp.allclose(a[:2], b[:2])
    assert jnp.allclose(a[:3], b[:3], equal_nan=True)
    assert jnp.allclose(np.array([1, 2], np.int32), np.array([1, 2], np.int32))
    c = np.array([1 + 1j, 2 - 1e-7j], np.complex64)
    np.testing.assert_array_equal(jnp.isclose(c, np.array([1 + 1j, 2 + 0j])), [True, True])
    assert jnp.isclose(1, 1.0 + 1e-9).dtype == np.bool_
    # Traced tolerances work: they are arguments of the compiled function.
    close = api.jit(lambda a, b, r: jnp.isclose(a, b, rtol=r))(a, b, np.float32(0.1))
    np.testing.assert_array_equal(close, np.isclose(a, b, rtol=0.1))
    with pytest.raises(TypeError, match="isclose requires ndarray or scalar arguments"):
        jnp.isclose([1.0], 1.0)


def test_array_equal_and_equiv():
    a = np.array([[1.0, np.nan], [3.0, 4.0]], np.float32)
    assert jnp.array_equal(a[:, :1], a[:, :1])
    assert not jnp.array_equal(a, a)
    assert jnp.array_equal(a, a, equal_nan=True)
    assert not jnp.array_equal(a, a[0])  # different shapes: not equal
    assert jnp.array_equal(np.array([1, 2]), np.array([1.0, 2.0]))
    assert jnp.array_equal([1, 2], (1, 2))  # sequences are accepted, as in JAX
    assert jnp.array_equiv(np.array([1, 2]), np.array([[1, 2], [1, 2]]))
    assert not jnp.array_equiv(np.array([1, 2]), np.array([[1, 2], [1, 3]]))
    assert not jnp.array_equiv(np.array([1, 2]), np.ones((2, 3)))  # ranks differ: False
    with pytest.raises(TypeError, match="eq got incompatible shapes"):  # as JAX 0.10.2
        jnp.array_equiv(np.array([1, 2]), np.array([1, 2, 3]))
    assert jnp.array_equal(a, a, equal_nan=True).dtype == np.bool_


def test_vmap_and_jit():
    x = np.array([[1.0, 2.0, np.nan], [4.0, -1.0, 0.0]], np.float32)
    y = np.array([1.0, 3.0, np.nan], np.float32)
    batched = api.vmap(lambda r: jnp.isclose(r, y, equal_nan=True))(x)
    looped = np.stack([np.asarray(jnp.isclose(r, y, equal_nan=True)) for r in x])
    np.testing.assert_array_equal(batched, looped)
    np.testing.assert_array_equal(api.jit(jnp.less_equal)(x, y), x <= y)
    with pytest.raises(TypeError, match="equal requires ndarray or scalar arguments"):
        jnp.equal(None, 1)
