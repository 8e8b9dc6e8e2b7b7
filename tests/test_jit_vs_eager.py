"""Every primitive of issue 3, on every dtype it takes: jitted results equal eager ones
(both are XLA executables; jit fuses, so floats may differ in the last ulp)."""

import ml_dtypes
import numpy as np
import pytest

import lamina as jax
from lamina import lax

rng = np.random.default_rng(0)
FLOATS = [np.float32, np.float16, ml_dtypes.bfloat16]
INTS = [np.int32, np.int8, np.uint8]


def sample(dtype, shape=(3, 4)):
    if np.dtype(dtype) == np.bool_:
        return jax.device_put(rng.random(shape) > 0.5)
    if np.issubdtype(np.dtype(dtype), np.integer):
        return jax.device_put(rng.integers(1, 9, shape).astype(dtype))
    return jax.device_put((rng.random(shape) + 0.5).astype(dtype))


def assert_same(eager, jitted):
    eager, jitted = np.asarray(eager), np.asarray(jitted)
    assert eager.dtype == jitted.dtype and eager.shape == jitted.shape
    if eager.dtype.kind in "biu":
        np.testing.assert_array_equal(eager, jitted)
    else:
        tol = 1e-6 if eager.dtype == np.float32 else 1e-2
        np.testing.assert_allclose(
            eager.astype(np.float64), jitted.astype(np.float64), rtol=tol, atol=tol
        )


def check(fun, *args):
    assert_same(fun(*args), jax.jit(fun)(*args))


UNARY_FLOAT = [lax.sin, lax.cos, lax.exp, lax.log, lax.tanh, lax.sqrt, lax.neg]
BINARY = [lax.add, lax.sub, lax.mul, lax.max, lax.min]
COMPARE = [lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", UNARY_FLOAT, ids=lambda f: f.__name__)
def test_unary(op, dtype):
    check(op, sample(dtype))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("op", [*BINARY, lax.div, *COMPARE], ids=lambda f: f.__name__)
def test_binary_and_comparisons(op, dtype):
    check(op, sample(dtype), sample(dtype))


@pytest.mark.parametrize("dtype", [*FLOATS, *INTS, np.bool_])
def test_select_n_and_convert(dtype):
    which = sample(np.bool_)
    check(lax.select_n, which, sample(dtype), sample(dtype))
    for target in (np.float32, np.int32, ml_dtypes.bfloat16, np.bool_):
        check(lambda x, t=target: lax.convert_element_type(x, t), sample(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, ml_dtypes.bfloat16])
def test_shapes_reductions_and_dot(dtype):
    x = sample(dtype)
    check(lambda a: lax.broadcast_in_dim(a, (2, 3, 4), (1, 2)), x)
    check(lambda a: lax.reshape(a, (4, 3)), x)
    check(lambda a: lax.transpose(a, (1, 0)), x)
    check(lambda a: lax.reduce_sum(a, (1,)), x)
    check(lambda a: lax.reduce_max(a, (0, 1)), x)
    check(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))), x, sample(dtype, (4, 2)))
    check(lambda: lax.iota(dtype, 5))
    check(lambda: lax.broadcasted_iota(dtype, (2, 3), 1))


def test_a_program_mixing_everything_matches_numpy():
    w = rng.standard_normal((4, 3)).astype(np.float32)
    x = rng.standard_normal((5, 4)).astype(np.float32)

    @jax.jit
    def layer(w, x):
        h = lax.dot_general(x, w, (((1,), (0,)), ((), ())))
        h = lax.max(h, 0.0) * 2 + 1
        return lax.reduce_sum(lax.tanh(h), (1,))

    expected = np.tanh(np.maximum(x @ w, 0) * 2 + 1).sum(1)
    np.testing.assert_allclose(np.asarray(layer(w, x)), expected, rtol=1e-5)
    assert layer._cache_size() == 1
