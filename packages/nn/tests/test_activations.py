"""The activation functions of lamina.nn: values against float64 NumPy references in
float32, bfloat16 and float16; values and derivatives at special points (infinities,
nan, kinks, signed zeros) and result dtypes against JAX 0.10.2 (recorded in
data/activations_jax.json); numerical derivative checks of orders 1 and 2; jit and
vmap; errors."""

import json
import math
import pathlib

import numpy as np
import pytest

import lamina.interpreters as api
import lamina.nn as nn
import lamina.numpy as jnp
from lamina.interpreters.test_util import check_grads

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "activations_jax.json").read_text())
SPECIAL = np.array([np.nan if v is None else v for v in RECORDED["special_inputs"]], np.float32)
_erf = np.vectorize(math.erf)


def _softplus(x):
    return np.logaddexp(x, 0)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _relu6(x):
    return np.minimum(np.maximum(x, 0), 6)


SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
REFERENCES = {
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    "gelu_exact": lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
    "hard_sigmoid": lambda x: _relu6(x + 3) / 6,
    "hard_silu": lambda x: x * _relu6(x + 3) / 6,
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "identity": lambda x: x,
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "log1mexp": lambda x: np.log(-np.expm1(-x)),
    "log_sigmoid": lambda x: -_softplus(-x),
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "relu": lambda x: np.maximum(x, 0),
    "relu6": _relu6,
    "selu": lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0))),
    "sigmoid": _sigmoid,
    "silu": lambda x: x * _sigmoid(x),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "softplus": _softplus,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "squareplus": lambda x: (x + np.sqrt(x**2 + 4)) / 2,
    "tanh": np.tanh,
}
# Functions with a kink (or a piece boundary) where the numerical derivative is
# meaningless; checked away from these points only.
KINKS = {
    "relu": [0],
    "relu6": [0, 6],
    "hard_tanh": [-1, 1],
    "hard_sigmoid": [-3, 3],
    "hard_silu": [-3, 3],
    "leaky_relu": [0],
    "elu": [0],
    "selu": [0],
    "celu": [0],
    "sparse_plus": [-1, 1],
    "sparse_sigmoid": [-1, 1],
    "soft_sign": [0],
}


def _fn(name):
    if name == "gelu_exact":
        return lambda x: nn.gelu(x, approximate=False)
    return getattr(nn, name)


def _inputs(name, dtype, n=64):
    rng = np.random.default_rng(abs(hash((name, dtype))) % 2**32)
    low = 1e-3 if name == "log1mexp" else -8.0
    return rng.uniform(low, 8.0, n).astype(dtype)


TOLERANCES = {np.float32: 2e-6, jnp.bfloat16: 2e-2, np.float16: 2e-3}


@pytest.mark.parametrize("dtype", [np.float32, jnp.bfloat16, np.float16])
def test_values_against_numpy(dtype):
    names = sorted(REFERENCES)
    inputs = np.stack([_inputs(name, dtype) for name in names])
    # One compiled program for every function in this dtype.
    outs = api.jit(lambda xs: [_fn(name)(x) for name, x in zip(names, xs, strict=True)])(inputs)
    tol = TOLERANCES[dtype]
    for name, x, out in zip(names, inputs, outs, strict=True):
        assert out.dtype == np.dtype(dtype), name
        want = REFERENCES[name](x.astype(np.float64))
        np.testing.assert_allclose(
            np.asarray(out, np.float64), want, rtol=tol, atol=tol, err_msg=name
        )


def _as_float32(values):
    return np.array([np.nan if v is None else v for v in values], np.float32)


def test_special_values_and_derivatives_match_jax():
    names = sorted(RECORDED["values"])

    def values_and_grads(x):
        return [(_fn(n)(x), api.vmap(api.grad(_fn(n)))(x)) for n in names]

    results = api.jit(values_and_grads)(jnp.asarray(SPECIAL))
    for name, (values, grads) in zip(names, results, strict=True):
        want_values = _as_float32(RECORDED["values"][name])
        want_grads = _as_float32(RECORDED["grads"][name])
        np.testing.assert_allclose(values, want_values, rtol=1e-6, equal_nan=True, err_msg=name)
        np.testing.assert_allclose(
            grads, want_grads, rtol=2e-5, atol=1e-7, equal_nan=True, err_msg=name
        )


DTYPE_ARGS = {
    "int32": lambda: jnp.arange(3, dtype=jnp.int32),
    "pyint": lambda: 2,
    "pyfloat": lambda: 2.0,
    "bf16": lambda: jnp.ones(2, jnp.bfloat16),
    "f16": lambda: jnp.ones(2, jnp.float16),
}


@pytest.mark.parametrize("name", sorted(RECORDED["dtypes"]))
def test_result_dtypes_match_jax(name):
    for label, make in DTYPE_ARGS.items():
        want = RECORDED["dtypes"][name][label]
        if want[0] == "error":
            with pytest.raises(TypeError):
                api.eval_shape(_fn(name), make())
            continue
        # Result types are decided while tracing: no need to compile.
        out = api.eval_shape(_fn(name), make())
        assert [str(out.dtype), bool(out.weak_type)] == want, label


# Points away from every kink and piece boundary (-3, -1, 0, 1, 3, 6), where the
# numerical derivative means nothing.
SMOOTH_POINTS = np.array([-2.3, -0.7, 0.4, 1.3, 2.1, 4.5], np.float32)


def _all_activations(x):
    """Every activation of ``x`` side by side (log1mexp on a positive shift of ``x``),
    so that one derivative check covers them all with a few compiled programs."""
    outs = []
    for name in sorted(REFERENCES):
        arg = jnp.abs(x) + 0.1 if name == "log1mexp" else x
        outs.append(_fn(name)(arg))
    return jnp.stack(outs)


@pytest.mark.parametrize("order, modes", [(1, ["fwd"]), (2, ["rev"])])
def test_numerical_derivatives(order, modes):
    f = api.jit(_all_activations)
    x = jnp.asarray(SMOOTH_POINTS)
    check_grads(f, (x,), order=order, modes=modes, atol=2e-2, rtol=2e-2, eps=1e-3)


def test_custom_jvp_kinks_are_zero():
    for f, points in ((nn.relu, [0.0]), (nn.relu6, [0.0, 6.0])):
        for p in points:
            assert float(api.grad(f)(p)) == 0.0
    assert float(api.grad(nn.relu)(1e-20)) == 1.0
    assert float(api.grad(api.grad(nn.relu))(1.0)) == 0.0


def test_parametrized_activations():
    x = np.array([-3.0, -0.5, 0.0, 2.0], np.float32)
    np.testing.assert_allclose(nn.elu(x, alpha=0.5), np.where(x > 0, x, 0.5 * np.expm1(x)), 1e-6)
    np.testing.assert_allclose(
        nn.celu(x, alpha=2.0), np.maximum(x, 0) + 2 * np.expm1(np.minimum(x, 0) / 2), 1e-6
    )
    np.testing.assert_allclose(nn.leaky_relu(x, negative_slope=0.2), np.where(x >= 0, x, 0.2 * x))
    np.testing.assert_allclose(nn.squareplus(x, b=1.0), (x + np.sqrt(x**2 + 1)) / 2, 1e-6)
    # A traced parameter works too (JAX treats it as an array argument).
    grad_alpha = api.grad(lambda a: nn.elu(-1.0, a))(2.0)
    np.testing.assert_allclose(grad_alpha, np.expm1(-1.0), rtol=1e-6)


def test_glu():
    x = np.arange(24, dtype=np.float32).reshape(2, 6, 2) / 10 - 1
    for axis in (1, -2):
        a, b = np.split(x, 2, axis)
        np.testing.assert_allclose(nn.glu(jnp.asarray(x), axis=axis), a / (1 + np.exp(-b)), 1e-6)
    looped = np.stack([np.asarray(nn.glu(row, axis=0)) for row in x])
    np.testing.assert_allclose(api.vmap(lambda r: nn.glu(r, axis=0))(x), looped, 1e-6)
    check_grads(api.jit(lambda v: nn.glu(v, axis=1)), (jnp.asarray(x),), order=1, modes=["rev"])
    with pytest.raises(AssertionError, match="axis size must be divisible by 2"):
        nn.glu(jnp.ones((3, 5)))


def test_jit_vmap_and_weak_types():
    x = np.linspace(-4, 4, 12).astype(np.float32).reshape(3, 4)

    def some_activations(x):
        return jnp.stack([nn.gelu(x), nn.silu(x), nn.log_sigmoid(x), nn.hard_silu(x), nn.mish(x)])

    eager = np.asarray(some_activations(jnp.asarray(x)))
    np.testing.assert_allclose(api.jit(some_activations)(x), eager, rtol=1e-6)
    looped = np.stack([np.asarray(api.jit(_all_activations)(row)) for row in x], axis=1)
    np.testing.assert_allclose(api.vmap(_all_activations, out_axes=1)(x), looped, rtol=1e-6)
    # gelu's constants are typed NumPy scalars, so a Python float gives a strong float32.
    out = nn.gelu(1.0, approximate=False)
    assert out.dtype == np.float32 and not out.weak_type
    assert nn.relu(1.0).weak_type and not nn.relu(np.float32(1.0)).weak_type
    assert nn.gelu(jnp.bfloat16(1.5)).dtype == jnp.bfloat16
    with api.enable_x64(True):
        assert nn.gelu(np.float64(0.3)).dtype == np.float64
        assert nn.sigmoid(np.ones(2)).dtype == np.float64


@pytest.mark.parametrize("name", ["identity", "silu", "soft_sign", "sparse_plus", "elu"])
def test_lists_are_rejected(name):
    with pytest.raises(TypeError, match=f"{name} requires ndarray or scalar arguments"):
        _fn(name)([1.0, 2.0])
