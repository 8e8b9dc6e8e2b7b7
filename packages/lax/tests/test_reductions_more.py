"""Reductions beyond sum and max: reduce_prod/min/and/or/xor, argmax/argmin and the
general ``reduce``, against NumPy, numerical derivatives, Python loops under vmap, and
JAX 0.10.2's printed Jaxprs and error messages."""

import ml_dtypes
import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import grad, jit, jvp, make_jaxpr, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.RandomState(0)


def _data(shape, dtype):
    if dtype == np.bool_:
        return RNG.rand(*shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.randint(1, 7, size=shape).astype(dtype)
    return RNG.uniform(0.5, 1.5, size=shape).astype(dtype)


MONOIDS = [
    (lax.reduce_prod, np.prod, [np.float32, np.int32, np.uint8, np.complex64]),
    (lax.reduce_min, np.min, [np.float32, np.int8, np.uint32, np.bool_, ml_dtypes.bfloat16]),
    (lax.reduce_max, np.max, [np.float16, np.int16, np.bool_]),
    (lax.reduce_and, np.bitwise_and.reduce, [np.bool_, np.int32, np.uint8]),
    (lax.reduce_or, np.bitwise_or.reduce, [np.bool_, np.int16, np.uint32]),
    (lax.reduce_xor, np.bitwise_xor.reduce, [np.bool_, np.int8, np.uint16]),
]


@pytest.mark.parametrize("op,ref,dtypes", MONOIDS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("axes", [(0,), (1, 2), (0, 2), ()])
def test_monoid_reductions_match_numpy(op, ref, dtypes, axes):
    for dtype in dtypes:
        x = _data((2, 3, 4), dtype)
        got = op(x, axes)
        wide = x.astype(np.float32) if dtype == ml_dtypes.bfloat16 else x
        want = np.asarray(x if not axes else ref(wide, axis=axes)).astype(dtype)  # wraps
        assert np.asarray(got).dtype == np.dtype(dtype)
        as_wide = np.complex128 if dtype == np.complex64 else np.float64
        np.testing.assert_allclose(np.asarray(got).astype(as_wide), want.astype(as_wide), rtol=1e-2)


def test_min_and_prod_propagate_nan_and_handle_empty_axes():
    x = np.array([[1.0, np.nan], [2.0, 3.0]], np.float32)
    np.testing.assert_array_equal(lax.reduce_min(x, (1,)), [np.nan, 2.0])
    np.testing.assert_array_equal(lax.reduce_prod(np.zeros((0, 2), np.float32), (0,)), [1, 1])
    np.testing.assert_array_equal(lax.reduce_min(np.zeros((0,), np.int32), (0,)), 2**31 - 1)
    np.testing.assert_array_equal(lax.reduce_and(np.zeros((0,), np.uint8), (0,)), 255)


@pytest.mark.parametrize(
    "call,error,message",
    [
        (
            lambda: lax.reduce_and(np.ones(2, np.float32), (0,)),
            TypeError,
            "logical reduction requires operand dtype bool or int, got float32.",
        ),
        (
            lambda: lax.reduce_prod(np.ones(2, bool), (0,)),
            TypeError,
            "reduce_prod does not accept dtype bool. Accepted dtypes are subtypes of number.",
        ),
        (
            lambda: lax.reduce_min(np.ones((2, 3), np.float32), (3,)),
            ValueError,
            "reduction axes (3,) contains out-of-bounds indices for float32[2,3].",
        ),
        (
            lambda: lax.reduce_prod(np.ones((2, 3), np.float32), (0, 0)),
            ValueError,
            "duplicate value in 'axes' of reduction: (0, 0)",
        ),
        (
            lambda: lax.argmax(np.ones((2, 3), np.float32), 1, np.float32),
            TypeError,
            "index_dtype must be an integer type, but got float32",
        ),
        (
            lambda: lax.argmax(np.ones((2, 3), np.float32), 2, np.int32),
            ValueError,
            "Invalid axis 2 for operand shape (2, 3)",
        ),
        (
            lambda: lax.argmin(np.ones((0, 3), np.float32), 0, np.int32),
            ValueError,
            "argmin and argmax require non-empty reduced dimension. operand.shape=(0, 3) axis=0",
        ),
        (
            lambda: lax.argmax(np.ones(2, np.complex64), 0, np.int32),
            TypeError,
            "gt does not accept dtype complex64 at position 0. Accepted dtypes at position 0 "
            "are subtypes of integer, floating, bool.",
        ),
    ],
)
def test_errors_match_jax(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


# ------------------------------------------------------------------ argmax / argmin


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.float16])
def test_argmax_argmin_match_numpy(dtype):
    x = _data((3, 5, 4), dtype)
    if dtype != np.bool_:
        x = np.round(x * 2).astype(dtype)  # ties: the first index wins
    for axis, index_dtype in enumerate((np.int32, np.uint8, np.int16)):
        got = lax.argmax(x, axis, index_dtype)
        assert np.asarray(got).dtype == index_dtype
        np.testing.assert_array_equal(got, np.argmax(x, axis))
        np.testing.assert_array_equal(lax.argmin(x, axis, index_dtype), np.argmin(x, axis))


def test_argmax_picks_the_first_nan_and_handles_infinities():
    x = np.array(
        [
            [1.0, np.nan, 3.0, np.nan],
            [-np.inf, -np.inf, -np.inf, -np.inf],
            [np.inf, 2.0, np.inf, 0.0],
        ],
        np.float32,
    )
    np.testing.assert_array_equal(lax.argmax(x, 1, np.int32), [1, 0, 0])
    np.testing.assert_array_equal(lax.argmin(x, 1, np.int32), [1, 0, 3])
    np.testing.assert_array_equal(lax.argmax(x, 1, np.int32), np.argmax(x, 1))
    np.testing.assert_array_equal(lax.argmin(x, 1, np.int32), np.argmin(x, 1))


def test_argmax_jaxpr_lowering_and_zero_tangent():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    text = str(make_jaxpr(lambda x: lax.argmax(x, 1, np.int32))(x))
    assert text == (
        "{ lambda ; a:f32[2,3]. let\n    b:i32[2] = argmax[axes=(1,) index_dtype=int32] a\n"
        "  in (b,) }"
    )
    lowered = jit(lambda x: lax.argmax(x, 1, np.int32)).lower(x).as_text()
    assert "stablehlo.reduce" in lowered and "stablehlo.iota" in lowered
    out, tangent = jvp(lambda x: lax.argmin(x, 0, np.int32), (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(out, [0, 0, 0])
    assert np.asarray(tangent).dtype == np.dtype([("float0", "V1")]) or tangent.shape == (3,)


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_argmax_and_reductions_under_vmap(in_axis):
    x = _data((3, 4, 5), np.float32)
    b = _data((3, 4, 5), np.bool_)
    for fun, arg in [
        (lambda v: lax.argmax(v, 1, np.int32), x),
        (lambda v: lax.argmin(v, 0, np.int32), x),
        (lambda v: lax.reduce_prod(v, (0,)), x),
        (lambda v: lax.reduce_min(v, (1,)), x),
        (lambda v: lax.reduce_or(v, (0, 1)), b),
    ]:
        got = vmap(fun, in_axes=in_axis)(arg)
        want = np.stack([fun(np.take(arg, i, in_axis)) for i in range(arg.shape[in_axis])])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


# ------------------------------------------------------------------ derivatives


def test_reduce_prod_gradients_with_and_without_zeros():
    x = RNG.randn(3, 4).astype(np.float32)
    check_grads(lambda x: lax.reduce_prod(x, (1,)), (x,), 2, modes=("fwd", "rev"))
    x[0, 1] = 0.0
    check_grads(lambda x: lax.reduce_prod(x, (1,)), (x,), 2, modes=("fwd", "rev"))
    x[0, 3] = 0.0
    check_grads(lambda x: lax.reduce_prod(x, (0, 1)), (x,), 1, modes=("fwd", "rev"))
    # One zero: only its own partial survives, the product of the others.
    y = np.array([2.0, 0.0, 3.0], np.float32)
    _, t = jvp(lambda y: lax.reduce_prod(y, (0,)), (y,), (np.ones(3, np.float32),))
    assert float(t) == 6.0


def test_reduce_min_max_gradients_and_ties():
    x = RNG.randn(3, 4).astype(np.float32)
    check_grads(lambda x: lax.reduce_min(x, (0,)), (x,), 2, modes=("fwd", "rev"))
    check_grads(lambda x: lax.reduce_max(x, (0, 1)), (x,), 2, modes=("fwd", "rev"))
    tied = np.array([1.0, 1.0, 2.0], np.float32)
    _, t = jvp(lambda v: lax.reduce_min(v, (0,)), (tied,), (np.array([1.0, 0.0, 5.0], np.float32),))
    assert float(t) == 0.5  # ties split evenly


def test_reduce_prod_jvp_under_vmap_matches_loop():
    x = RNG.randn(4, 3).astype(np.float32)
    x[1, 2] = 0.0
    t = np.ones_like(x)
    fun = lambda a, b: jvp(lambda v: lax.reduce_prod(v, (0,)), (a,), (b,))[1]  # noqa: E731
    got = vmap(fun)(x, t)
    want = [fun(x[i], t[i]) for i in range(4)]
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)


# ------------------------------------------------------------------ the general reduce

X = np.array([[1.0, 2.0, 3.0], [2.0, 5.0, 5.0]], np.float32)


def test_monoids_become_their_primitives():
    def first_eqn(fun, x=X):
        return make_jaxpr(fun)(x).jaxpr.eqns[0].primitive.name

    assert first_eqn(lambda x: lax.reduce(x, 0.0, lax.add, (0,))) == "reduce_sum"
    assert first_eqn(lambda x: lax.reduce(x, 0, lax.add, (0,))) == "reduce_sum"
    assert first_eqn(lambda x: lax.reduce(x, 1.0, lax.mul, (0,))) == "reduce_prod"
    assert first_eqn(lambda x: lax.reduce(x, -np.inf, lax.max, (0,))) == "reduce_max"
    assert first_eqn(lambda x: lax.reduce(x, np.inf, lax.min, (0,))) == "reduce_min"
    assert first_eqn(lambda x: lax.reduce(x, 1.0, lax.add, (0,))) == "reduce"
    assert first_eqn(lambda x: lax.reduce(x, 0.0, lax.max, (0,))) == "reduce"
    ints = np.array([1, 2], np.int32)
    assert first_eqn(lambda x: lax.reduce(x, np.int32(-(2**31)), lax.max, (0,)), ints) == (
        "reduce_max"
    )
    np.testing.assert_array_equal(lax.reduce(X, 1.0, lax.add, (0,)), [4.0, 8.0, 9.0])
    np.testing.assert_array_equal(lax.reduce(X, 4.0, lax.max, (1,)), [4.0, 5.0])


def test_general_reduce_printed_like_jax():
    text = str(make_jaxpr(lambda x: lax.reduce(x, 0.0, lambda a, b: a + 2 * b, (0,)))(X))
    body = "\n".join(line for line in text.splitlines() if "computation=" not in line)
    assert body == (
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[3] = reduce[\n"
        "      dimensions=(0,)\n"
        "      jaxpr={ lambda ; c:f32[] d:f32[]. let\n"
        "          e:f32[] = mul 2.0:f32[] d\n"
        "          f:f32[] = add c e\n"
        "        in (f,) }\n"
        "    ] a 0.0:f32[]\n"
        "  in (b,) }"
    )
    assert "computation=<function " in text


def test_general_reduce_of_several_operands_and_pytrees():
    s, p = lax.reduce((X, X), (0.0, 1.0), lambda a, b: (a[0] + b[0], a[1] * b[1]), (0,))
    np.testing.assert_allclose(s, X.sum(0))
    np.testing.assert_allclose(p, X.prod(0))
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = lax.reduce(
        {"f": X, "i": ints},
        {"f": 1.0, "i": np.int32(0)},
        lambda a, b: {"f": a["f"] * b["f"] + 0.0, "i": a["i"] | b["i"]},
        (1,),
    )
    np.testing.assert_allclose(out["f"], X.prod(1))
    np.testing.assert_array_equal(out["i"], np.bitwise_or.reduce(ints, 1))

    # The value of largest magnitude, with its sign: an associative selection.
    def by_magnitude(a, b):
        return lax.select_n(lax.gt(a * a, b * b), b, a)

    y = np.array([[1.0, -7.0, 3.0], [-2.0, 5.0, 0.5]], np.float32)
    np.testing.assert_array_equal(lax.reduce(y, 0.0, by_magnitude, (1,)), [-7.0, 5.0])
    np.testing.assert_array_equal(
        jit(lambda y: lax.reduce(y, 0.0, by_magnitude, (0,)))(y), [-2.0, -7.0, 3.0]
    )


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_general_reduce_under_vmap(in_axis):
    x = _data((3, 4, 2), np.float32)

    def fun(v):
        return lax.reduce((v, v), (0.0, 1.0), lambda a, b: (a[0] + b[0], a[1] * b[1]), (1,))

    got = vmap(fun, in_axes=in_axis)(x)
    for k in range(2):
        want = np.stack([fun(np.take(x, i, in_axis))[k] for i in range(x.shape[in_axis])])
        np.testing.assert_allclose(np.asarray(got[k]), want, rtol=1e-6)


def test_general_reduce_derivatives_both_ways():
    # Under jit, so that the pairwise fold of the JVP compiles once per transformation.
    x = RNG.uniform(0.5, 1.5, size=(3, 4, 2)).astype(np.float32)
    check_grads(
        jit(lambda x: lax.reduce(x, 1.0, lambda a, b: a * b, (0, 2))), (x,), 2, modes=("fwd", "rev")
    )

    def sum_and_prod(a, b):
        return (a[0] + b[0], a[1] * b[1])

    check_grads(
        jit(lambda x: lax.reduce((x, x), (0.0, 1.0), sum_and_prod, (1,))[1]),
        (x,),
        1,
        modes=("fwd", "rev"),
    )

    def by_magnitude(a, b):
        return lax.select_n(lax.gt(a * a, b * b), b, a)

    y = np.array([[1.0, -7.0, 3.0]], np.float32)
    g = grad(jit(lambda y: lax.reduce_sum(lax.reduce(y, 0.0, by_magnitude, (1,)), (0,))))(y)
    np.testing.assert_array_equal(g, [[0.0, 1.0, 0.0]])


def test_general_reduce_errors():
    with pytest.raises(ValueError, match="Operands must have the same tree structure"):
        lax.reduce(X, (0.0, 1.0), lax.add, (0,))
    with pytest.raises(TypeError) as info:
        lax.reduce(X, np.float16(1), lambda a, b: a * b + 1, (0,))
    assert str(info.value) == (
        "reduce operand dtypes should match corresponding initial value dtypes, got "
        "operands=[ShapedArray(float32[2,3])] and initial_values=[ShapedArray(float16[])]"
    )
    with pytest.raises(ValueError, match="must produce 2 values"):
        lax.reduce((X, X), (1.0, 2.0), lambda a, b: a[0], (0,))


@pytest.mark.parametrize("op", [lax.cumsum, lax.cumprod, lax.cummax, lax.cummin, lax.cumlogsumexp])
def test_cumulative_ops_over_an_empty_axis(op):
    out = op(np.zeros((0, 3), np.float32), axis=0)
    assert out.shape == (0, 3) and out.dtype == np.float32
    assert op(np.zeros((2, 0), np.float32), axis=1, reverse=True).shape == (2, 0)
