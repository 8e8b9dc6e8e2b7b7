"""Every primitive run eagerly (through dispatch) against NumPy, on several dtypes."""

import ml_dtypes
import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import Array, device_put
from lamina.ir import enable_x64

FLOATS = [np.float32, np.float16, ml_dtypes.bfloat16]
NUMERIC = [*FLOATS, np.int32, np.uint8, np.int8]
rng = np.random.default_rng(0)


def sample(shape, dtype, positive=False):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        low = 1 if positive else (0 if dtype.kind == "u" else -5)
        return rng.integers(low, 6, shape).astype(dtype)
    x = rng.uniform(0.5 if positive else -2, 2, shape)
    return x.astype(dtype)


def check(got, want, dtype=None):
    assert isinstance(got, Array)
    want = np.asarray(want)
    dtype = np.dtype(dtype or want.dtype)
    assert got.dtype == dtype, (got.dtype, dtype)
    assert got.shape == want.shape
    tol = {np.dtype(np.float16): 2e-3, np.dtype(ml_dtypes.bfloat16): 2e-2}.get(dtype, 1e-5)
    if dtype.kind in "fV" and dtype != np.bool_:
        np.testing.assert_allclose(
            np.asarray(got, np.float32), want.astype(np.float32), rtol=tol, atol=tol
        )
    else:
        np.testing.assert_array_equal(np.asarray(got), want)


UNARY = {
    "sin": np.sin,
    "cos": np.cos,
    "exp": np.exp,
    "log": np.log,
    "tanh": np.tanh,
    "sqrt": np.sqrt,
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float(name, dtype):
    x = sample((3, 4), dtype, positive=True)
    want = UNARY[name](x.astype(np.float32)).astype(dtype)
    check(getattr(lax, name)(device_put(x)), want, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, ml_dtypes.bfloat16, np.int8])
def test_neg(dtype):
    x = sample((5,), dtype)
    check(lax.neg(device_put(x)), -x)


def _trunc_div(x, y):
    if np.dtype(x.dtype).kind in "iu":
        return (np.trunc(x.astype(np.float64) / y)).astype(x.dtype)
    return (x.astype(np.float32) / y.astype(np.float32)).astype(x.dtype)


BINARY = {
    "add": lambda x, y: (x.astype(np.float64) + y).astype(x.dtype),
    "sub": lambda x, y: (x.astype(np.float64) - y).astype(x.dtype),
    "mul": lambda x, y: (x.astype(np.float64) * y).astype(x.dtype),
    "div": _trunc_div,
    "max": np.maximum,
    "min": np.minimum,
}


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name, dtype):
    x = sample((2, 3), dtype)
    y = sample((2, 3), dtype, positive=True)
    check(getattr(lax, name)(device_put(x), device_put(y)), BINARY[name](x, y), dtype)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_bool(name):
    x, y = sample((4,), bool), sample((4,), bool)
    check(getattr(lax, name)(device_put(x), device_put(y)), getattr(np, name + "imum")(x, y))


def test_binary_size_one_and_scalar_operands():
    x = sample((2, 3), np.float32)
    check(lax.add(device_put(x), device_put(x[:1])), x + x[:1])
    check(lax.mul(device_put(x), device_put(np.float32(3))), x * 3)


def test_weak_python_scalar_operand():
    x = sample((3,), np.int32)
    out = lax.add(device_put(x), 2)
    check(out, x + 2)
    assert not out.weak_type
    both = lax.mul(2.0, 3.0)
    assert both.weak_type and both.dtype == np.float32 and float(both) == 6.0


COMPARISONS = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, bool, ml_dtypes.bfloat16])
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons(name, dtype):
    x, y = sample((6,), dtype), sample((6,), dtype)
    y[:2] = x[:2]
    check(getattr(lax, name)(device_put(x), device_put(y)), COMPARISONS[name](x, y), bool)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, ml_dtypes.bfloat16])
def test_select_n(dtype):
    a, b, c = (sample((2, 3), dtype) for _ in range(3))
    pred = sample((2, 3), bool)
    check(lax.select_n(device_put(pred), device_put(a), device_put(b)), np.where(pred, b, a))
    which = rng.integers(0, 3, (2, 3)).astype(np.int32)
    out = lax.select_n(device_put(which), *map(device_put, (a, b, c)))
    check(out, np.choose(which, [a, b, c]))
    check(lax.select_n(device_put(np.True_), device_put(a), device_put(b)), b)
    check(lax.select_n(device_put(which), device_put(a)), a)


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        (np.float32, np.int32),
        (np.int32, np.float32),
        (np.float32, bool),
        (np.int32, bool),
        (bool, np.float32),
        (np.float32, ml_dtypes.bfloat16),
        (np.float16, np.float32),
        (np.uint8, np.int32),
    ],
)
def test_convert_element_type(src, dst):
    x = sample((7,), src)
    x[0] = 0
    want = x.astype(np.float32).astype(dst) if dst is not bool else x != 0
    check(lax.convert_element_type(device_put(x), dst), np.asarray(want).astype(dst), dst)


def test_convert_element_type_of_host_values():
    out = lax.convert_element_type(2.7, np.int32)
    assert out.dtype == np.int32 and int(out) == 2 and not out.weak_type


@pytest.mark.parametrize("dtype", [np.float32, np.int32, bool, ml_dtypes.bfloat16])
def test_shapes(dtype):
    x = sample((2, 3), dtype)
    dx = device_put(x)
    check(lax.broadcast_in_dim(dx, (4, 2, 3), (1, 2)), np.broadcast_to(x, (4, 2, 3)))
    check(lax.broadcast_in_dim(dx, (3, 2), (1, 0)), x.T)
    check(lax.reshape(dx, (3, 2)), x.reshape(3, 2))
    check(lax.reshape(dx, (6,), (1, 0)), x.T.reshape(6))
    check(lax.transpose(dx, (1, 0)), x.T)
    assert lax.transpose(dx, (0, 1)) is dx
    assert lax.reshape(dx, (2, 3)) is dx


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, ml_dtypes.bfloat16])
def test_reductions(dtype):
    x = sample((2, 3, 4), dtype)
    check(lax.reduce_sum(device_put(x), (1,)), x.astype(np.float64).sum(1).astype(dtype))
    check(lax.reduce_sum(device_put(x), ()), x)
    check(lax.reduce_max(device_put(x), (0, 2)), x.max((0, 2)))


def test_reduce_max_bool_and_negative_floats():
    x = sample((3, 4), bool)
    check(lax.reduce_max(device_put(x), (1,)), x.any(1))
    y = -np.ones((2, 2), np.float32) * np.inf
    check(lax.reduce_max(device_put(y), (0, 1)), np.float32(-np.inf))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, ml_dtypes.bfloat16])
def test_dot_general(dtype):
    a, b = sample((4, 2, 3), dtype), sample((4, 3, 5), dtype)
    out = lax.dot_general(device_put(a), device_put(b), (((2,), (1,)), ((0,), (0,))))
    want = np.einsum("bij,bjk->bik", a.astype(np.float64), b.astype(np.float64))
    check(out, want.astype(dtype), dtype)
    m, v = sample((2, 3), dtype), sample((3,), dtype)
    check(lax.dot(device_put(m), device_put(v)), (m.astype(np.float64) @ v).astype(dtype))


def test_dot_general_preferred_and_mixed():
    a = sample((2, 3), ml_dtypes.bfloat16)
    out = lax.dot_general(
        device_put(a), device_put(a.T), (((1,), (0,)), ((), ())), preferred_element_type=np.float32
    )
    af = a.astype(np.float32)
    check(out, af @ af.T, np.float32)
    f, i = sample((2, 3), np.float32), sample((3, 2), np.int32)
    check(lax.dot(device_put(f), device_put(i)), f @ i.astype(np.float32))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8, ml_dtypes.bfloat16])
def test_iota(dtype):
    check(lax.iota(dtype, 5), np.arange(5).astype(dtype))
    want = np.broadcast_to(np.arange(3).astype(dtype), (2, 3))
    check(lax.broadcasted_iota(dtype, (2, 3), 1), want)


def test_x64_variants():

    with enable_x64():
        x = np.arange(4, dtype=np.float64)
        check(lax.mul(device_put(x), device_put(x)), x * x)
        check(lax.iota(np.int64, 3), np.arange(3, dtype=np.int64))
        check(lax.convert_element_type(device_put(x), np.int64), x.astype(np.int64))
