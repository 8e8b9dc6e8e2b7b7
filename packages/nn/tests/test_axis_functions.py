"""softmax, log_softmax, logsumexp, logmeanexp, standardize and one_hot beyond the
recorded cases: NumPy references over dtypes and axes, numerical derivatives (orders 1
and 2), vmap against a loop, one_hot over a named vmap axis, and errors."""

import warnings

import numpy as np
import pytest

import lamina.interpreters as api
import lamina.nn as nn
import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(11)
X = RNG.normal(size=(3, 4, 5)).astype(np.float32) * 3


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _logsumexp(x, axis):
    top = x.max(axis, keepdims=True)
    return np.squeeze(np.log(np.exp(x - top).sum(axis, keepdims=True)) + top, axis)


@pytest.mark.parametrize(
    "axis, dtype", [(-1, np.float32), (0, jnp.bfloat16), ((0, 2), np.float16), (1, np.float32)]
)
def test_against_numpy(axis, dtype):
    x = X.astype(dtype)
    x64 = x.astype(np.float64)
    tol = {np.float32: 2e-6, jnp.bfloat16: 2e-2, np.float16: 2e-3}[dtype]

    def check(got, want):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol)

    # 'fast' (E[x^2] - E[x]^2) loses digits in 16-bit types, as in JAX (where
    # standardize of this bfloat16 input gives the same 1.5234375 for 1.41 at [0, 1, 0]).
    algorithm = "fast" if dtype == np.float32 else "stable"

    def all_functions(x):
        return (
            nn.softmax(x, axis=axis),
            nn.log_softmax(x, axis=axis),
            nn.logsumexp(x, axis=axis),
            nn.logmeanexp(x, axis=axis),
            nn.standardize(x, axis=axis, algorithm=algorithm),
        )

    softmax, log_softmax, lse, lme, standardized = api.jit(all_functions)(x)
    check(softmax, _softmax(x64, axis))
    check(log_softmax, np.log(_softmax(x64, axis)))
    check(lse, _logsumexp(x64, axis))
    count = np.prod([x.shape[a] for a in np.atleast_1d(axis)])
    check(lme, _logsumexp(x64, axis) - np.log(count))
    mean = x64.mean(axis, keepdims=True)
    check(standardized, (x64 - mean) / np.sqrt(x64.var(axis, keepdims=True) + 1e-5))


def test_shared_with_scipy_special_through_lamina_numpy():
    # jax.nn.logsumexp is jax.scipy.special.logsumexp; lamina.scipy takes its logsumexp
    # (and the softmax its own softmax calls) from lamina.numpy too.
    assert nn.logsumexp is jnp.logsumexp
    assert nn.softmax is jnp.softmax and nn.log_softmax is jnp.log_softmax


def test_logsumexp_weights_and_sign():
    b = RNG.normal(size=(4, 5)).astype(np.float32)
    out, sign = nn.logsumexp(X, axis=(1, 2), b=b, return_sign=True)
    total = (b * np.exp(X.astype(np.float64))).sum((1, 2))
    np.testing.assert_allclose(out, np.log(np.abs(total)), rtol=1e-5)
    np.testing.assert_array_equal(sign, np.sign(total))
    assert nn.logsumexp(np.float32(1.0)).shape == ()


def test_numerical_derivatives():
    where = RNG.uniform(size=(4, 5)) > 0.3
    b = RNG.uniform(0.5, 2.0, size=(5,)).astype(np.float32)
    kept = np.broadcast_to(where, (2, 4, 5)).ravel()

    def everything(x):
        return jnp.concatenate(
            [
                nn.softmax(x, axis=1).ravel(),
                jnp.where(kept, nn.log_softmax(x, where=where).ravel(), 0.0),
                nn.logsumexp(x, axis=(0, 2), b=b).ravel(),
                nn.logmeanexp(x, axis=-1, where=where).ravel(),
                nn.standardize(x, axis=0).ravel(),
                jnp.where(kept, nn.standardize(x, algorithm="stable", where=where).ravel(), 0.0),
            ]
        )

    x = jnp.asarray(X[:2] / 3)
    check_grads(api.jit(everything), (x,), order=1, modes=["rev"], atol=3e-2, rtol=3e-2)

    def second_order_subset(x):
        return jnp.concatenate([nn.softmax(x).ravel(), nn.logsumexp(x, axis=0, b=b).ravel()])

    check_grads(api.jit(second_order_subset), (x[0],), order=2, modes=["rev"], atol=3e-2, rtol=3e-2)


def test_softmax_custom_jvp_option_has_the_same_derivative():
    x = jnp.asarray(X[0])
    weights = jnp.arange(5.0)
    default = api.grad(lambda x: (nn.softmax(x) * weights).sum())(x)
    with api.softmax_custom_jvp(True):
        custom = api.grad(lambda x: (nn.softmax(x) * weights).sum())(x)
    np.testing.assert_allclose(custom, default, rtol=1e-5, atol=1e-7)


def test_vmap_against_loop():
    where = RNG.uniform(size=(3, 4, 5)) > 0.3

    def f(x, w):
        return nn.softmax(x, where=w) + nn.standardize(x, where=w) + nn.log_softmax(x, axis=0)

    batched = api.jit(api.vmap(f))(X, where)
    looped = np.stack([np.asarray(api.jit(f)(x, w)) for x, w in zip(X, where, strict=True)])
    np.testing.assert_allclose(batched, looped, rtol=1e-5, atol=1e-6)


def test_one_hot():
    labels = np.array([[0, 3], [2, 1]], np.int32)
    out = nn.one_hot(labels, 4)
    np.testing.assert_array_equal(out, np.eye(4, dtype=np.float32)[labels])
    assert out.dtype == np.float32
    moved = nn.one_hot(labels, 4, axis=1, dtype=jnp.int32)
    np.testing.assert_array_equal(moved, np.moveaxis(np.eye(4, dtype=np.int32)[labels], -1, 1))
    looped = np.stack([np.asarray(nn.one_hot(row, 4)) for row in labels])
    np.testing.assert_array_equal(api.vmap(lambda r: nn.one_hot(r, 4))(labels), looped)
    # A named vmap axis: each position is hot at its own index along that axis.
    named = api.vmap(lambda i: nn.one_hot(i, 3, axis="batch"), axis_name="batch")
    np.testing.assert_array_equal(named(jnp.array([0, 2, 2])), [1.0, 0.0, 1.0])
    with api.enable_x64(True):
        assert nn.one_hot(labels, 2).dtype == np.float64


def test_one_hot_errors():
    with pytest.raises(ConcretizationTypeError, match="num_classes"):
        api.jit(lambda n: nn.one_hot(jnp.arange(3), n))(3)
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        nn.one_hot(jnp.arange(3), 3, axis=2)
    with pytest.warns(DeprecationWarning, match="input should be integer-typed; got dtype=float32"):
        nn.one_hot(jnp.array([1.0]), 3)
    with pytest.raises(ValueError, match="Expected num_classes to match the size of axis"):
        api.vmap(lambda i: nn.one_hot(i, 4, axis="b"), axis_name="b")(jnp.arange(3))


def test_errors():
    with pytest.raises(
        ValueError, match=r"Unknown algorithm 'exact'\. Expected 'fast' or 'stable'\."
    ):
        nn.standardize(X, algorithm="exact")
    for f in (nn.softmax, nn.log_softmax, nn.logsumexp, nn.standardize):
        with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
            f([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.one_hot(jnp.arange(3), 3)  # integer input: no warning
