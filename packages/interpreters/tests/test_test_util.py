"""test_util's checks as jax.test_util's: signatures, the random directions, central
differences in each value's dtype, tolerances (numbers or per-dtype dicts, scaled by
size), assertion messages, and check_grads's orders and modes. Functions written in NumPy
give bit-identical numbers in JAX, so pass/fail at a tolerance is recorded from JAX 0.10.2.
"""

import functools
import inspect

import custom_prims
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina.interpreters import custom_jvp, custom_vjp, jvp, vjp
from lamina.interpreters.test_util import EPS, check_grads, check_jvp, check_vjp, numerical_jvp
from lamina.interpreters.transformations.ad import defjvp2
from lamina.ir import dtypes

sin, cos, mul, add = custom_prims.sin, custom_prims.cos, custom_prims.mul, custom_prims.add

X = np.linspace(0.1, 2.0, 6, dtype=np.float32)
T = np.random.RandomState(0).randn(6).astype(np.float32)


def exp_jvp(primals, tangents):
    return np.exp(primals[0]), np.exp(primals[0]) * tangents[0]


def exp_vjp(x):
    return np.exp(x), lambda ct: (np.exp(x) * ct,)


def outcome(check) -> str:
    try:
        check()
    except AssertionError as err:
        return str(err).strip().splitlines()[1]  # the line after "Not equal to tolerance"
    return "pass"


def test_signatures_are_jax_ones():
    # recorded from JAX 0.10.2: str(inspect.signature(jax.test_util.check_*))
    assert str(inspect.signature(check_jvp)) == (
        "(f, f_jvp, args, atol=None, rtol=None, eps=0.0001, err_msg='')"
    )
    assert str(inspect.signature(check_vjp)) == (
        "(f, f_vjp, args, atol=None, rtol=None, eps=0.0001, err_msg='')"
    )
    assert str(inspect.signature(check_grads)) == (
        "(f, args, order, modes=('fwd', 'rev'), atol=None, rtol=None, eps=None)"
    )
    assert EPS == 1e-4


def test_numerical_jvp_in_the_dtype_of_the_values():
    # recorded from JAX 0.10.2 (jax._src.public_test_util.numerical_jvp): float32 steps
    got = numerical_jvp(lambda a: np.sin(a) * a, (X,), (T,))
    assert got.dtype == np.float32
    want = [0.35163944959640503, 0.3552436828613281, 1.290738582611084,
            3.0219554901123047, 1.71661376953125, -0.0756978988647461]  # fmt: skip
    assert got.tolist() == want
    got = numerical_jvp(lambda a: np.sin(a) * a, (X.astype(float),), (T.astype(float),), 1e-3)
    want = [0.35163496518043036, 0.3551542018851578, 1.2908950883611658,
            3.0219086383274085, 1.7164916994152346, -0.07525376992689736]  # fmt: skip
    assert got.tolist() == want


def test_numerical_jvp_of_python_scalars_and_infinities_and_trees():
    # recorded from JAX 0.10.2
    assert numerical_jvp(lambda a: a * a, (1.5,), (0.5,)).item() == 1.5000000000031655
    # inf - inf counts as no change
    assert numerical_jvp(lambda a: np.full_like(a, np.inf), (X,), (T,)).tolist() == [0.0] * 6
    got = numerical_jvp(
        lambda d: d["a"] * np.cos(d["b"]),
        ({"a": X, "b": X[::-1]},),
        ({"a": T, "b": T[::-1]},),
    )
    want = [-0.6452388763427734, -0.915238618850708, -1.5050172805786133,
            0.5424022674560547, 1.3571977615356445, -1.3250112533569336]  # fmt: skip
    assert got.tolist() == want


def test_random_tangents_keep_python_scalars_and_draw_real_parts_first():
    seen = []

    def f_jvp(primals, tangents):
        seen.append(tangents)
        return exp_jvp(primals[:1], tangents[:1])

    check_jvp(lambda a, b: np.exp(a), f_jvp, (X, 2.0))
    # recorded from JAX 0.10.2: np.random.RandomState(0).randn, in argument order
    assert isinstance(seen[0], tuple) and type(seen[0][1]) is float
    assert seen[0][1] == 0.9500884175255894
    assert seen[0][0].dtype == np.float32
    np.testing.assert_array_equal(seen[0][0], np.random.RandomState(0).randn(6).astype(np.float32))

    seen.clear()
    z = np.array([1 + 2j, 3 - 1j], np.complex64)

    def product_jvp(primals, tangents):
        seen.append(tangents)
        (a, b), (ta, tb) = primals, tangents
        return a * b, a * tb + ta * b

    check_jvp(lambda a, b: a * b, product_jvp, (z, np.float32(2.0)))
    assert seen[0][0].tolist() == [
        (1.764052391052246 + 0.978738009929657j),
        (0.40015721321105957 + 2.2408931255340576j),
    ]
    assert seen[0][1].dtype == np.float32 and seen[0][1].item() == np.float32(1.867558)


def test_tolerances_scale_with_size_and_take_per_dtype_dicts():
    # recorded from JAX 0.10.2: the JVP of exp against central differences, one element
    # and six (tolerances are multiplied by the element count)
    one = lambda tol: outcome(lambda: check_jvp(np.exp, exp_jvp, (X[:1],), tol, tol))  # noqa: E731
    six = lambda tol: outcome(lambda: check_jvp(np.exp, exp_jvp, (X,), tol, tol))  # noqa: E731
    assert (one(None), six(None)) == ("pass", "pass")
    assert (one(2e-4), six(2e-4)) == ("pass", "pass")
    assert (one(1e-4), six(1e-4)) == ("tangent", "pass")
    assert (one(5e-5), six(5e-5)) == ("tangent", "tangent")
    assert (one({np.float32: 1e-4}), six({np.float32: 1e-4})) == ("tangent", "pass")
    assert one({"float32": 1e-5}) == "tangent"
    assert one({np.dtype("float32"): 2e-4}) == "pass"
    # a dict without the values' dtype keeps the default for it
    assert one({np.float64: 1e-9}) == "pass"
    with pytest.raises(AssertionError, match="rtol=6e-05, atol=6e-05"):
        check_jvp(np.exp, exp_jvp, (X,), atol=1e-5, rtol=1e-5)


def test_check_vjp_compares_inner_products():
    # recorded from JAX 0.10.2
    assert outcome(lambda: check_vjp(np.exp, exp_vjp, (X,), atol=1e-5, rtol=1e-5)) == "pass"
    assert outcome(lambda: check_vjp(np.exp, exp_vjp, (X,), atol=1e-6, rtol=1e-6)) == (
        "cotangent projection"
    )
    wrong = lambda x: (np.exp(x), lambda ct: (1.01 * np.exp(x) * ct,))  # noqa: E731
    with pytest.raises(
        AssertionError, match=r"rtol=0\.002, atol=0\.002\nlabel cotangent projection"
    ):
        check_vjp(np.exp, wrong, (X,), err_msg="label")
    with pytest.raises(AssertionError, match="\nprimal\n"):
        check_vjp(np.exp, lambda x: (np.exp(x) + 1, exp_vjp(x)[1]), (X,))


def test_check_jvp_messages_and_dtype_match():
    wrong = lambda p, t: (np.exp(p[0]), 1.1 * np.exp(p[0]) * t[0])  # noqa: E731
    with pytest.raises(AssertionError, match=r"rtol=0\.012, atol=0\.012\nexp tangent"):
        check_jvp(np.exp, wrong, (X,), err_msg="exp")
    with pytest.raises(AssertionError, match="\nprimal\n"):
        check_jvp(np.exp, lambda p, t: (np.exp(p[0]) * 1.1, exp_jvp(p, t)[1]), (X,))
    # the tangent's dtype must be the output's (with x64 off, up to canonicalization)
    as16 = lambda p, t: (np.exp(p[0]), exp_jvp(p, t)[1].astype(np.float16))  # noqa: E731
    with pytest.raises(AssertionError):
        check_jvp(np.exp, as16, (X,))
    as64 = lambda p, t: (np.exp(p[0]), exp_jvp(p, t)[1].astype(np.float64))  # noqa: E731
    with dtypes.enable_x64(False):
        check_jvp(np.exp, as64, (X,))
    with dtypes.enable_x64(True), pytest.raises(AssertionError):
        check_jvp(np.exp, as64, (X,))


bad_cos_p = custom_prims.jit_prims._unary("cos_with_wrong_jvp", hlo.cosine)
defjvp2(bad_cos_p, lambda t, ans, x: mul(t, sin(x)))  # sign dropped on purpose


@custom_jvp
def sin_wrong_rule(x):
    return sin(x)


sin_wrong_rule.defjvp(lambda p, t: (sin(p[0]), mul(mul(np.float32(1.1), cos(p[0])), t[0])))


@custom_jvp
def sin_wrong_second_derivative(x):
    return sin(x)


sin_wrong_second_derivative.defjvp(lambda p, t: (sin(p[0]), mul(bad_cos_p.bind(p[0]), t[0])))


def test_check_grads_catches_a_wrong_custom_jvp_rule():
    check_grads(lambda a: mul(sin(a), cos(a)), (X,), order=2)
    with pytest.raises(AssertionError, match="\nJVP tangent\n"):
        check_grads(sin_wrong_rule, (X,), order=1)
    with pytest.raises(AssertionError, match="\nVJP cotangent projection\n"):
        check_grads(sin_wrong_rule, (X,), order=1, modes=["rev"])
    with pytest.raises(AssertionError, match="\nLIN tangent\n"):
        check_grads(sin_wrong_rule, (X,), order=1, modes=["lin"])
    # right first derivative, wrong second
    check_grads(sin_wrong_second_derivative, (X,), order=1)
    with pytest.raises(AssertionError, match="\nJVP of JVP tangent\n"):
        check_grads(sin_wrong_second_derivative, (X,), order=2, modes="fwd")
    with pytest.raises(AssertionError, match="\nVJP of VJP cotangent projection\n"):
        check_grads(sin_wrong_second_derivative, (X,), order=2, modes="rev")


def test_check_grads_takes_a_list_and_python_scalars():
    check_grads(lambda a, b: add(mul(a, b), sin(a)), [X, X[::-1].copy()], order=2)
    check_grads(lambda a: mul(mul(a, a), a), (1.5,), order=3)


@custom_vjp
def sin_wrong_bwd(x):
    return sin(x)


sin_wrong_bwd.defvjp(lambda x: (sin(x), x), lambda x, ct: (mul(mul(cos(x), ct), 1.1),))


def test_check_vjp_of_custom_vjp_with_the_layer_vjp():
    f = lambda x: mul(sin(x), x)  # noqa: E731
    check_vjp(f, functools.partial(vjp, f), (X,))
    check_jvp(f, functools.partial(jvp, f), (X,))
    with pytest.raises(AssertionError, match="cotangent projection"):
        check_vjp(sin_wrong_bwd, functools.partial(vjp, sin_wrong_bwd), (X,))
