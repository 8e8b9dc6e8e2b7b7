"""Windowed and cumulative reductions: reduce_window (sum/max/min and general),
cumsum/cumprod/cummax/cummin/cumlogsumexp and the select_and_* gradient primitives,
against a direct NumPy reference, numerical derivatives, Python loops under vmap and
JAX 0.10.2's printed Jaxprs and messages."""

import itertools

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import enable_x64, grad, jit, jvp, make_jaxpr, trace_to_jaxpr, vmap
from lamina.interpreters.test_util import check_grads
from lamina.ir import ShapedArray

RNG = np.random.RandomState(1)


def window_reference(x, init, combine, dims, strides, padding, base_dilation, window_dilation):
    """A direct loop: dilate with ``init`` holes, pad with ``init``, fold each window."""
    shape = [(d - 1) * b + 1 if d else 0 for d, b in zip(x.shape, base_dilation, strict=True)]
    dilated = np.full(shape, init, x.dtype)
    dilated[tuple(slice(None, None, b) for b in base_dilation)] = x
    padded_shape = [s + lo + hi for s, (lo, hi) in zip(shape, padding, strict=True)]
    padded = np.full(padded_shape, init, x.dtype)
    inner = tuple(
        slice(max(lo, 0), max(lo, 0) + s) for s, (lo, _) in zip(shape, padding, strict=True)
    )
    src = tuple(slice(max(-lo, 0), s) for s, (lo, _) in zip(shape, padding, strict=True))
    padded[inner] = dilated[src][tuple(slice(0, i.stop - i.start) for i in inner)]
    out_shape = lax.reduce_window_shape_tuple(
        x.shape, dims, strides, padding, base_dilation, window_dilation
    )
    out = np.empty(out_shape, x.dtype)
    for index in itertools.product(*map(range, out_shape)):
        acc = np.asarray(init, x.dtype)
        for offset in itertools.product(*map(range, dims)):
            pos = tuple(
                i * s + k * w
                for i, s, k, w in zip(index, strides, offset, window_dilation, strict=True)
            )
            acc = combine(acc, padded[pos])
        out[index] = acc
    return out


CASES = [
    # window, strides, padding, base_dilation, window_dilation
    ((2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ((2, 3), (2, 1), ((1, 0), (1, 2)), (1, 1), (1, 1)),
    ((3, 2), (1, 2), ((0, 1), (1, 0)), (1, 1), (2, 1)),
    ((2, 2), (1, 1), ((1, 1), (0, 1)), (2, 1), (1, 2)),
]


@pytest.mark.parametrize("case", CASES)
def test_monoid_windows_match_reference(case):
    dims, strides, padding, base, wdil = case
    x = RNG.randn(4, 5).astype(np.float32)
    for init, combine, fn in [
        (0.0, np.add, lax.add),
        (-np.inf, np.maximum, lax.max),
        (np.inf, np.minimum, lax.min),
    ]:
        got = lax.reduce_window(x, init, fn, dims, strides, padding, base, wdil)
        want = window_reference(x, init, combine, dims, strides, padding, base, wdil)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    ints = RNG.randint(-9, 9, size=(4, 5)).astype(np.int32)
    got = lax.reduce_window(ints, np.int32(-(2**31)), lax.max, dims, strides, padding, base, wdil)
    want = window_reference(ints, -(2**31), np.maximum, dims, strides, padding, base, wdil)
    np.testing.assert_array_equal(got, want)


def test_general_window_matches_reference_and_prints_like_jax():
    x = RNG.uniform(0.5, 1.5, size=(4, 5)).astype(np.float32)
    dims, strides, padding, base, wdil = CASES[1]
    got = lax.reduce_window(x, 1.0, lax.mul, dims, strides, padding, base, wdil)
    want = window_reference(x, 1.0, np.multiply, dims, strides, padding, base, wdil)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    text = str(
        make_jaxpr(
            lambda x: lax.reduce_window(x, 0.0, lambda a, b: a + 2 * b, (2, 2), (1, 1), "VALID")
        )(x[:2, :3])
    )
    assert text == (
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[1,2] = reduce_window[\n"
        "      base_dilation=(1, 1)\n"
        "      consts=()\n"
        "      jaxpr={ lambda ; c:f32[] d:f32[]. let\n"
        "          e:f32[] = mul 2.0:f32[] d\n"
        "          f:f32[] = add c e\n"
        "        in (f,) }\n"
        "      padding=((0, 0), (0, 0))\n"
        "      window_dilation=(1, 1)\n"
        "      window_dimensions=(2, 2)\n"
        "      window_strides=(1, 1)\n"
        "    ] a 0.0:f32[]\n"
        "  in (b,) }"
    )


def test_general_window_of_two_operands():
    x = RNG.randn(3, 6).astype(np.float32)

    def sum_and_max(a, b):
        return (a[0] + b[0], lax.max(a[1], b[1]))

    s, m = lax.reduce_window((x, x), (0.0, -np.inf), sum_and_max, (1, 3), (1, 2), "SAME")
    padding = lax.padtype_to_pads(x.shape, (1, 3), (1, 2), "SAME")
    np.testing.assert_allclose(
        s, window_reference(x, 0.0, np.add, (1, 3), (1, 2), padding, (1, 1), (1, 1)), rtol=1e-6
    )
    np.testing.assert_allclose(
        m, window_reference(x, -np.inf, np.maximum, (1, 3), (1, 2), padding, (1, 1), (1, 1))
    )


def test_padding_strings_and_shape_tuple():
    assert lax.reduce_window_shape_tuple((5, 6), (2, 3), (1, 2), ((0, 1), (1, 1))) == (5, 3)
    x = RNG.randn(5, 6).astype(np.float32)
    same = lax.reduce_window(x, 0.0, lax.add, (2, 3), (1, 2), "SAME")
    assert same.shape == (5, 3)
    np.testing.assert_allclose(
        same,
        window_reference(x, 0.0, np.add, (2, 3), (1, 2), ((0, 1), (0, 1)), (1, 1), (1, 1)),
        rtol=1e-6,
    )
    assert lax.reduce_window(x, 0.0, lax.add, (2, 3), None, "VALID").shape == (4, 4)


@pytest.mark.parametrize(
    "args,error,message",
    [
        (
            ((2,), (1, 1)),
            TypeError,
            "reduce_window got the wrong number of window_dimensions "
            "for operand: got operand shape (2, 3) with window_dimensions (2,).",
        ),
        (
            ((2, 2), (1,)),
            TypeError,
            "reduce_window got inconsistent window_strides and "
            "window_dimensions: got window_strides (1,) and window_dimensions (2, 2).",
        ),
        (
            ((0, 2), (1, 1)),
            TypeError,
            "reduce_window window_dimensions must have every "
            "element be strictly positive, got (0, 2).",
        ),
        (
            ((1, 2), (0, 1)),
            TypeError,
            "reduce_window window_strides must have every element "
            "be strictly positive, got (0, 1).",
        ),
    ],
)
def test_window_errors_match_jax(args, error, message):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(error) as info:
        lax.reduce_window(x, 0.0, lax.add, *args, "VALID")
    assert str(info.value) == message


@pytest.mark.parametrize("case", CASES)
def test_window_gradients(case):
    *_, base, wdil = case
    x = RNG.randn(4, 5).astype(np.float32)
    check_grads(lambda x: lax.reduce_window(x, 0.0, lax.add, *case), (x,), 2, modes=("fwd", "rev"))
    modes = ("fwd", "rev") if base == (1, 1) and wdil == (1, 1) else ("fwd",)
    for init, fn in [(-np.inf, lax.max), (np.inf, lax.min)]:
        check_grads(lambda x: lax.reduce_window(x, init, fn, *case), (x,), 2, modes=modes)  # noqa: B023
    y = RNG.uniform(0.5, 1.5, size=(4, 5)).astype(np.float32)
    check_grads(lambda y: lax.reduce_window(y, 1.0, lax.mul, *case), (y,), 1, modes=("fwd",))


def test_max_window_gradient_jaxprs_match_jax():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(x):
        return lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID")

    text = str(make_jaxpr(grad(lambda x: lax.reduce_sum(f(x), (0, 1))))(x))
    assert (
        "    d:f32[2,3] = select_and_scatter_add[\n"
        "      padding=((0, 0), (0, 0))\n"
        "      select_prim=ge\n"
        "      window_dimensions=(2, 2)\n"
        "      window_strides=(1, 1)\n"
        "    ] c a\n"
    ) in text
    text = str(make_jaxpr(lambda x, t: jvp(f, (x,), (t,)))(x, x))
    assert (
        "    d:f32[1,2] = select_and_gather_add[\n"
        "      base_dilation=(1, 1)\n"
        "      padding=((0, 0), (0, 0))\n"
        "      select_prim=ge\n"
        "      window_dilation=(1, 1)\n"
        "      window_dimensions=(2, 2)\n"
        "      window_strides=(1, 1)\n"
        "    ] b a\n"
    ) in text
    g = grad(lambda x: lax.reduce_sum(f(x), (0, 1)))(x)
    np.testing.assert_array_equal(g, [[0, 0, 0], [0, 1, 1]])


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_windows_under_vmap(in_axis):
    x = RNG.randn(3, 4, 5).astype(np.float32)
    funs = [
        lambda v: lax.reduce_window(v, 0.0, lax.add, (2, 2), (1, 2), "SAME"),
        lambda v: lax.reduce_window(v, -np.inf, lax.max, (2, 3), (1, 1), "VALID"),
        lambda v: lax.reduce_window(v, 1.0, lax.mul, (2, 1), (1, 1), "VALID"),
        grad(
            lambda v: lax.reduce_sum(
                lax.reduce_window(v, np.inf, lax.min, (2, 2), (1, 1), "VALID"), (0, 1)
            )
        ),
        lambda v: jvp(
            lambda u: lax.reduce_window(u, -np.inf, lax.max, (2, 2), (2, 1), "SAME"), (v,), (v * v,)
        )[1],
    ]
    for fun in funs:
        got = vmap(fun, in_axes=in_axis)(x)
        want = np.stack([fun(np.take(x, i, in_axis)) for i in range(x.shape[in_axis])])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ cumulative reductions


def _accumulate(ufunc, x, axis, reverse):
    if reverse:
        return np.flip(ufunc.accumulate(np.flip(x, axis), axis), axis)
    return ufunc.accumulate(x, axis)


CUMULATIVE = [
    (lax.cumsum, np.add, [np.float32, np.int32, np.uint8]),
    (lax.cumprod, np.multiply, [np.float32, np.int16]),
    (lax.cummax, np.maximum, [np.float32, np.int8, np.uint16]),
    (lax.cummin, np.minimum, [np.float16, np.int32]),
    (lax.cumlogsumexp, np.logaddexp, [np.float32]),
]


@pytest.mark.parametrize("op,ufunc,dtypes", CUMULATIVE, ids=lambda v: getattr(v, "__name__", ""))
def test_cumulative_match_numpy(op, ufunc, dtypes):
    for k, dtype in enumerate(dtypes):
        shape = (3, 4, 2)
        if np.issubdtype(dtype, np.integer):
            x = RNG.randint(1, 4, size=shape).astype(dtype)
        else:
            x = RNG.randn(*shape).astype(dtype)
        axis, reverse = k % 3, k % 2 == 1
        want = _accumulate(ufunc, x, axis, reverse).astype(dtype)
        got = op(x, axis, reverse)
        assert np.asarray(got).dtype == np.dtype(dtype)
        np.testing.assert_allclose(
            np.asarray(got, np.float64), want.astype(np.float64), rtol=2e-3, atol=1e-5
        )
        np.testing.assert_allclose(
            np.asarray(op(x, 2, not reverse), np.float64),
            _accumulate(ufunc, x, 2, not reverse).astype(dtype).astype(np.float64),
            rtol=2e-3,
            atol=1e-5,
        )


def test_cumulative_lowering_and_jaxpr_like_jax():
    x = np.ones((2, 3), np.float32)
    text = jit(lambda x: lax.cumsum(x, 1)).lower(x).as_text()
    assert "stablehlo.reduce_window" in text
    assert "padding = dense<[[0, 0], [2, 0]]> : tensor<2x2xi64>" in text
    assert str(make_jaxpr(lambda x: lax.cumsum(x, 1, reverse=True))(x)) == (
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = cumsum[axis=1 reverse=True] a in (b,) }"
    )
    inf = np.array([-np.inf, -np.inf, np.inf, np.nan], np.float32)
    np.testing.assert_array_equal(lax.cumlogsumexp(inf), [-np.inf, -np.inf, np.inf, np.nan])


def test_cumulative_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="XLA operations do not allow negative axes"):
        lax.cumsum(x, -1)
    with pytest.raises(ValueError) as info:
        lax.cumsum(x, 2)
    assert str(info.value) == "axis 2 is out of bounds for array of shape (2, 3)"
    with pytest.raises(TypeError) as info:
        lax.cumsum(np.ones(2, bool))
    assert str(info.value) == (
        "cumsum does not accept dtype bool. Accepted dtypes are subtypes of number."
    )


@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_gradients(reverse):
    x = RNG.randn(3, 4).astype(np.float32)
    for op in (lax.cumsum, lax.cummax, lax.cummin, lax.cumprod):
        check_grads(lambda x: op(x, 1, reverse), (x,), 2, modes=("fwd", "rev"))  # noqa: B023
    # Its JVP is an associative scan of many small operations: compiled once under jit.
    check_grads(jit(lambda x: lax.cumlogsumexp(x, 1, reverse)), (x,), 1, modes=("fwd", "rev"))
    x[1, 1] = 0.0
    x[2, 0] = x[2, 2] = 0.0
    check_grads(lambda x: lax.cumprod(x, 1, reverse), (x,), 1, modes=("fwd", "rev"))
    # cumsum's transpose is the reversed cumsum.
    g = grad(lambda x: lax.reduce_sum(lax.cumsum(x, 0, reverse), (0,)))(np.ones(4, np.float32))
    np.testing.assert_array_equal(g, [1, 2, 3, 4] if reverse else [4, 3, 2, 1])


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_cumulative_under_vmap(in_axis):
    x = RNG.randn(3, 4, 2).astype(np.float32)
    for op in (lax.cumsum, lax.cummax, lax.cumprod, lax.cumlogsumexp):
        for axis in (0, 1):
            fun = lambda v: op(v, axis, axis == 1)  # noqa: B023, E731
            got = vmap(fun, in_axes=in_axis)(x)
            want = np.stack([fun(np.take(x, i, in_axis)) for i in range(x.shape[in_axis])])
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_cumlogsumexp_gradient_of_far_apart_elements():
    x = np.array([-100.0, 0.0, -50.0, 3.0], np.float32)
    g = grad(jit(lambda x: lax.reduce_sum(lax.cumlogsumexp(x), (0,))))(x)
    y = np.logaddexp.accumulate(x.astype(np.float64))
    want = [sum(np.exp(x[j] - y[i]) for i in range(j, 4)) for j in range(4)]
    np.testing.assert_allclose(g, want, rtol=1e-5)
    _, t = jvp(jit(lambda x: lax.cumlogsumexp(x, 0, True)), (x,), (np.ones(4, np.float32),))
    np.testing.assert_allclose(t, np.ones(4), rtol=1e-6)


def test_general_select_and_scatter_matches_select_and_scatter_add():

    x = RNG.randn(4, 6).astype(np.float32)
    source = RNG.randn(2, 3).astype(np.float32)
    scalar = ShapedArray((), np.dtype(np.float32))
    select, _ = trace_to_jaxpr(lambda a, b: [lax.ge(a, b)], [scalar, scalar])
    scatter, _ = trace_to_jaxpr(lambda a, b: [lax.add(a, b)], [scalar, scalar])
    window = dict(window_dimensions=(2, 2), window_strides=(2, 2), padding=((0, 0), (0, 0)))
    got = lax.select_and_scatter_p.bind(
        x,
        source,
        np.float32(0),
        select_jaxpr=select.jaxpr,
        select_consts=(),
        scatter_jaxpr=scatter.jaxpr,
        scatter_consts=(),
        **window,
    )
    want = lax.select_and_scatter_add_p.bind(source, x, select_prim=lax.ge_p, **window)
    np.testing.assert_array_equal(got, want)
    # Each source value lands on its window's maximum.
    blocks = x.reshape(2, 2, 3, 2).transpose(0, 2, 1, 3).reshape(2, 3, 4)
    np.testing.assert_allclose(np.asarray(got).sum(), source.sum(), rtol=1e-5)
    for i, j in itertools.product(range(2), range(3)):
        k = int(np.argmax(blocks[i, j]))
        assert np.asarray(got)[2 * i + k // 2, 2 * j + k % 2] == source[i, j]


@pytest.mark.parametrize(
    "base_dilation, window", [((2, 1), (3, 2)), ((1, 3), (2, 3)), ((2, 2), (2, 3))]
)
def test_max_and_min_pooling_gradients_with_base_dilation(base_dilation, window):

    x = np.random.default_rng(0).standard_normal((7, 6))
    with enable_x64(True):

        def max_pool(x):
            return lax.reduce_window(x, -np.inf, lax.max, window, (1, 1), ((1, 1), (0, 1)),
                                     base_dilation=base_dilation)  # fmt: skip

        def min_pool(x):
            return lax.reduce_window(x, np.inf, lax.min, window, (2, 1), "VALID",
                                     base_dilation=base_dilation)  # fmt: skip

        check_grads(max_pool, (x,), order=1, modes=("rev",), eps=1e-6)
        check_grads(min_pool, (x,), order=1, modes=("rev",), eps=1e-6)


def test_max_pooling_gradient_with_window_dilation_is_refused_like_jax():
    def pooled_sum(x):
        out = lax.reduce_window(
            x, -np.inf, lax.max, (2, 2), (1, 1), "VALID", window_dilation=(2, 1)
        )
        return lax.reduce_sum(out, (0, 1))

    with pytest.raises(NotImplementedError, match="with window dilation, got window_dilation"):
        grad(pooled_sum)(np.ones((5, 5), np.float32))
