"""lamina.numpy reductions against NumPy: sum, prod, max/min (amax/amin), all/any,
mean, var/std, ptp, count_nonzero, argmax/argmin over a deterministic sample of dtypes,
shapes, axes and keepdims; JAX's result dtypes (recorded from JAX 0.10.2), where /
initial / promote_integers / dtype arguments, empty reductions, cumulative reductions,
gradients, vmap, jit and errors."""

import itertools

import ml_dtypes
import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import jit, vmap
from lamina.interpreters.test_util import check_grads

DTYPES = ["bool", "int8", "int32", "uint32", "float16", "bfloat16", "float32", "complex64"]
SHAPES = [(), (0,), (0, 3), (5,), (3, 4), (2, 3, 4)]

# JAX 0.10.2's result dtypes (x64 off), recorded per input dtype.
RESULT_DTYPES = {
    "sum": dict(bool="int32", int8="int32", int32="int32", uint32="uint32"),
    "prod": dict(bool="int32", int8="int32", int32="int32", uint32="uint32"),
    "mean": dict(bool="float32", int8="float32", int32="float32", uint32="float32"),
    "var": dict(
        bool="float32", int8="float32", int32="float32", uint32="float32", complex64="float32"
    ),
    "all": {d: "bool" for d in DTYPES},
    "any": {d: "bool" for d in DTYPES},
    "count_nonzero": {d: "int32" for d in DTYPES},
}
RESULT_DTYPES["std"] = RESULT_DTYPES["var"]


def make(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype[0] in "iu":
        return rng.integers(0 if dtype[0] == "u" else -3, 5, shape).astype(dtype)
    if dtype == "complex64":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np.complex64)
    return rng.normal(size=shape).astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)


def reference_input(x):
    """``x`` in a NumPy dtype wide enough to compute the reference exactly enough."""
    if x.dtype == bool or np.issubdtype(x.dtype, np.integer):
        return x.astype(np.int64) if x.dtype != bool else x
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def expected_dtype(name, dtype):
    return np.dtype(RESULT_DTYPES.get(name, {}).get(dtype, dtype))


def tolerance(dtype):
    return 3e-2 if dtype in ("float16", "bfloat16") else 2e-5


def axes_for(ndim):
    return [None] + ([0, -1] if ndim else []) + ([(0, ndim - 1)] if ndim >= 2 else [])


def sample(names, per_name=8):
    """A deterministic sample of (name, dtype, shape, axis, keepdims) cases covering every
    dtype and shape for each name."""
    combos = list(itertools.product(DTYPES, SHAPES))
    out = []
    for i, name in enumerate(names):
        for j in range(per_name):
            dtype, shape = combos[(7 * j + 5 * i) % len(combos)]
            axes = axes_for(len(shape))
            out.append((name, dtype, shape, axes[(i + j) % len(axes)], bool((i + j) % 2)))
    return out


NUMPY_REFERENCES = {
    "sum": np.sum,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "amax": np.amax,
    "amin": np.amin,
    "all": np.all,
    "any": np.any,
    "mean": np.mean,
    "var": np.var,
    "std": np.std,
    "ptp": np.ptp,
    "count_nonzero": np.count_nonzero,
}


def _has_empty_axis(shape, axis):
    axes = range(len(shape)) if axis is None else np.atleast_1d(axis)
    return any(shape[a] == 0 for a in axes)


@pytest.mark.parametrize("name, dtype, shape, axis, keepdims", sample(list(NUMPY_REFERENCES)))
def test_reduction_matches_numpy(name, dtype, shape, axis, keepdims):
    x = make(dtype, shape, seed=len(name))
    no_identity = name in ("max", "min", "amax", "amin", "ptp")
    if no_identity and _has_empty_axis(shape, axis):
        with pytest.raises(ValueError, match="zero-size array to reduction operation"):
            getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
        return
    if name == "ptp" and dtype == "bool":
        return  # JAX subtracts booleans, which lax refuses (as JAX does)
    got = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
    assert got.dtype == expected_dtype(name, dtype)
    assert not got.weak_type
    with np.errstate(all="ignore"):
        want = NUMPY_REFERENCES[name](reference_input(x), axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(
        np.asarray(got).astype(want.dtype if np.ndim(want) else np.result_type(want)),
        want,
        rtol=tolerance(dtype),
        atol=tolerance(dtype),
    )


def test_where_and_initial():
    x = make("float32", (3, 4), 1)
    mask = np.arange(12).reshape(3, 4) % 3 != 1
    for name, kwargs in [
        ("sum", {}),
        ("prod", {}),
        ("max", dict(initial=-1.0)),
        ("min", dict(initial=5.0)),
        ("mean", {}),
        ("var", {}),
    ]:
        got = getattr(jnp, name)(x, axis=1, where=mask, **kwargs)
        want = getattr(np, name)(x, axis=1, where=mask, **kwargs)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, err_msg=name)
    np.testing.assert_allclose(np.asarray(jnp.sum(x, initial=10.0)), x.sum() + 10, rtol=1e-5)
    assert bool(jnp.all(x > -100, where=mask)) and not bool(jnp.any(x > 100, where=mask))
    got = jnp.max(np.array([1, 7, 3], np.int8), where=np.array([True, False, True]), initial=0)
    assert int(got) == 3 and got.dtype == np.int8
    with pytest.raises(ValueError, match="does not have an identity"):
        jnp.max(x, where=mask)
    with pytest.raises(ValueError, match="where must be None or a boolean array"):
        jnp.sum(x, where=np.ones((3, 4), np.int32))
    with pytest.raises(ValueError, match="initial value must be a scalar"):
        jnp.min(x, initial=np.zeros(2, np.float32))


def test_dtype_and_promote_integers():
    small = np.array([100, 100, 100], np.int8)
    assert jnp.sum(small).dtype == np.int32 and int(jnp.sum(small)) == 300
    assert jnp.sum(small, promote_integers=False).dtype == np.int8
    assert jnp.prod(np.array([2, 3], np.uint8)).dtype == np.uint32
    assert jnp.sum(np.ones(3, bool)).dtype == np.int32
    assert jnp.sum(np.ones(3, np.float16), dtype=np.int32).dtype == np.int32
    assert jnp.sum(np.ones(3, bool), dtype=bool).dtype == np.bool_
    assert jnp.mean(np.arange(4), dtype=np.float16).dtype == np.float16
    # float16 sums accumulate in float32: 2048 + 1 + 1 + ... is exact.
    halves = np.array([2048] + [1] * 8, np.float16)
    assert float(jnp.sum(halves)) == 2056.0 and jnp.sum(halves).dtype == np.float16
    assert jnp.sum(2.0).dtype == np.float32 and not jnp.sum(2.0).weak_type


def test_empty_reductions():
    empty = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.sum(empty, axis=0)), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(jnp.prod(empty, axis=0)), np.ones(3))
    assert np.isnan(float(jnp.mean(empty)))
    assert jnp.max(empty, axis=1).shape == (0,)
    assert float(jnp.max(empty, initial=-2.0)) == -2.0
    with pytest.raises(ValueError, match="zero-size array to reduction operation max which"):
        jnp.max(empty)
    with pytest.raises(ValueError, match="zero-size array to reduction operation min which"):
        jnp.amin(empty, axis=0)
    assert bool(jnp.all(empty)) and not bool(jnp.any(empty))


def test_var_std_options():
    x = make("float32", (4, 5), 3)
    np.testing.assert_allclose(np.asarray(jnp.var(x, 0, ddof=1)), np.var(x, 0, ddof=1), 1e-5)
    np.testing.assert_allclose(
        np.asarray(jnp.std(x, correction=1.5)), np.std(x, correction=1.5), 1e-5
    )
    mean = x.mean(1, keepdims=True)
    np.testing.assert_allclose(np.asarray(jnp.var(x, 1, mean=mean)), np.var(x, 1), 1e-5)
    z = make("complex64", (6,), 4)
    got = jnp.var(z)
    assert got.dtype == np.float32
    np.testing.assert_allclose(float(got), np.var(z.astype(np.complex128)), 1e-5)
    assert np.isnan(float(jnp.var(np.ones(1, np.float32), ddof=1)))
    assert jnp.std(np.arange(3), dtype=np.float16).dtype == np.float16
    with pytest.raises(ValueError, match="ddof and correction can't be provided"):
        jnp.var(x, ddof=1, correction=1)
    with pytest.raises(ValueError, match="must be inexact"):
        jnp.std(x, dtype=np.int32)
    with pytest.raises(ValueError, match="does not yet support real dtype"):
        jnp.var(z, dtype=np.float32)


WITH_NAN = np.array([[3.0, np.nan, 7.0], [1.0, 9.0, 9.0], [np.nan, np.nan, np.nan]], np.float32)


def test_argmax_argmin():
    for dtype, shape in [
        ("int8", (5,)),
        ("float32", (3, 4)),
        ("bool", (2, 3, 4)),
        ("uint32", (3, 4)),
        ("float16", (2, 3, 4)),
    ]:
        x = make(dtype, shape, 5)
        for axis in [None, 0, -1]:
            for fn in ("argmax", "argmin"):
                got = getattr(jnp, fn)(x, axis=axis, keepdims=True)
                want = getattr(np, fn)(x, axis=axis, keepdims=True)
                assert got.dtype == np.int32 and got.shape == want.shape
                np.testing.assert_array_equal(np.asarray(got), want)
    # A NaN is the maximum and the minimum (its first occurrence), as in JAX and NumPy.
    np.testing.assert_array_equal(np.asarray(jnp.argmax(WITH_NAN, axis=1)), [1, 1, 0])
    np.testing.assert_array_equal(np.asarray(jnp.argmin(WITH_NAN, axis=0)), [2, 0, 2])
    np.testing.assert_array_equal(np.asarray(jnp.nanargmax(WITH_NAN, axis=1)), [2, 1, -1])
    np.testing.assert_array_equal(np.asarray(jnp.nanargmin(WITH_NAN, axis=0)), [1, 1, 0])
    assert jnp.nanargmax(WITH_NAN, axis=0, keepdims=True).shape == (1, 3)
    assert int(jnp.nanargmin(np.array([4, 2, 9]))) == 1
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        jnp.argmax(np.zeros((0,), np.float32))
    with pytest.raises(NotImplementedError, match=r"The 'out' argument to jnp\.argmin"):
        jnp.argmin(np.ones(3), out=np.ones(()))


CUMULATIVE = {"cumsum": np.cumsum, "cumprod": np.cumprod}


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
def test_cumulative(name):
    reference = getattr(np, name)
    for dtype, shape, axis in [
        ("int8", (5,), None),
        ("bool", (3, 4), 1),
        ("float32", (3, 4), 0),
        ("uint32", (2, 3, 4), -1),
        ("float16", (), None),
        ("complex64", (0, 3), 1),
    ]:
        x = make(dtype, shape, 6)
        if name.startswith("nan") and dtype == "float32":
            x[0, 1] = np.nan
        got = getattr(jnp, name)(x, axis=axis)
        want_dtype = np.int32 if dtype == "bool" else np.dtype(dtype)
        assert got.dtype == want_dtype, (dtype, got.dtype)
        want = reference(reference_input(x), axis=axis)
        np.testing.assert_allclose(np.asarray(got), want, rtol=tolerance(dtype))
    x = make("int8", (2, 3), 7)
    got = getattr(jnp, name)(x, axis=1, dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), reference(x, axis=1, dtype=np.float32))
    as_bool = getattr(jnp, name)(x, axis=1, dtype=bool)
    assert as_bool.dtype == np.bool_


def test_cumulative_sum_and_prod():
    x = make("int8", (2, 3), 8)
    got = jnp.cumulative_sum(x, axis=1, include_initial=True)
    assert got.dtype == np.int32  # cumulative_sum promotes small integers, cumulative_prod not
    np.testing.assert_array_equal(
        np.asarray(got), np.cumulative_sum(x, axis=1, include_initial=True)
    )
    got = jnp.cumulative_prod(x, axis=0, include_initial=True)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(
        np.asarray(got), np.cumulative_prod(x, axis=0, include_initial=True)
    )
    np.testing.assert_array_equal(np.asarray(jnp.cumulative_sum(np.arange(4))), [0, 1, 3, 6])
    with pytest.raises(ValueError, match="The input must be non-scalar"):
        jnp.cumulative_sum(np.float32(1))
    with pytest.raises(ValueError, match="axis was not set to an explicit value"):
        jnp.cumulative_prod(x)


def test_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(NotImplementedError, match=r"The 'out' argument to jnp\.sum is not"):
        jnp.sum(x, out=np.zeros(()))
    with pytest.raises(NotImplementedError, match=r"The 'out' argument to jnp\.cumsum"):
        jnp.cumsum(x, out=x)
    with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments"):
        jnp.sum([1, 2, 3])
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        jnp.sum(x, axis=(0, -2))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        jnp.mean(x, axis=2)


def test_grads():
    x = make("float32", (3, 4), 9)
    check_grads(lambda x: jnp.sum(x * x, axis=1), (x,), order=2, modes="rev")
    check_grads(lambda x: jnp.prod(x, axis=0), (x,), order=1, modes="rev")
    check_grads(lambda x: jnp.max(x, axis=1), (x,), order=1)
    check_grads(lambda x: jnp.min(x, where=x > 0, initial=5.0), (x,), order=1, modes="rev")
    check_grads(lambda x: jnp.var(x, axis=0, ddof=1), (x,), order=2, modes="rev")
    check_grads(lambda x: jnp.std(x, axis=1) + jnp.mean(x, axis=1), (x,), order=1)
    check_grads(lambda x: jnp.cumsum(x, axis=1) * jnp.cumprod(x, axis=1), (x,), 1, modes="rev")


def test_vmap_matches_loop():
    x = make("float32", (4, 3, 5), 10)
    fns = [
        lambda x: jnp.sum(x, axis=0),
        lambda x: jnp.max(x, axis=1, keepdims=True),
        lambda x: jnp.var(x, axis=-1),
        lambda x: jnp.argmax(x, axis=0),
        lambda x: jnp.cumsum(x, axis=1),
        lambda x: jnp.nanargmin(x),
    ]
    for fn in fns:
        got = vmap(fn)(x)
        want = np.stack([np.asarray(fn(row)) for row in x])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_jit_matches_eager():
    x = make("float32", (3, 4), 11)

    def fn(x):
        return (
            jnp.sum(x, axis=0),
            jnp.mean(x),
            jnp.std(x, axis=1, keepdims=True),
            jnp.argmin(x, axis=1),
            jnp.all(x > 0),
            jnp.count_nonzero(x > 0, axis=0),
            jnp.ptp(x, axis=1),
            jnp.cumulative_sum(x, axis=0, include_initial=True),
        )

    for got, want in zip(jit(fn)(x), fn(x), strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
