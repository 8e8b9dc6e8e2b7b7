"""lamina.nn.scaled_matmul, scaled_dot_general and get_scaled_dot_general_config: the
block-scaled product against a NumPy reference that dequantizes with ml_dtypes; the
MXFP8 and NVFP4 quantization of scaled_dot_general against a NumPy re-implementation of
the formats (power-of-two scales rounded up; float8_e4m3fn block scales); its custom
VJP; the plain dot_general path; errors."""

import ml_dtypes
import numpy as np
import pytest

import lamina.interpreters as api
import lamina.lax as lax
import lamina.nn as nn
import lamina.numpy as jnp

RNG = np.random.default_rng(3)


def _dequantize(x, scales):
    block = x.shape[-1] // scales.shape[-1]
    return x.astype(np.float64) * np.repeat(scales.astype(np.float64), block, axis=-1)


def test_scaled_matmul_against_numpy():
    lhs = RNG.normal(size=(2, 3, 64)).astype(ml_dtypes.float8_e4m3fn)
    rhs = RNG.normal(size=(2, 5, 64)).astype(ml_dtypes.float8_e4m3fn)
    lhs_scales = (2.0 ** RNG.integers(-3, 3, (2, 3, 2))).astype(ml_dtypes.float8_e8m0fnu)
    rhs_scales = (2.0 ** RNG.integers(-3, 3, (2, 5, 2))).astype(ml_dtypes.float8_e8m0fnu)
    want = np.einsum("bmk,bnk->bmn", _dequantize(lhs, lhs_scales), _dequantize(rhs, rhs_scales))
    out = nn.scaled_matmul(lhs, rhs, lhs_scales, rhs_scales)
    assert out.dtype == np.float32 and out.shape == (2, 3, 5)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-5)
    out = api.jit(nn.scaled_matmul, static_argnums=4)(
        lhs, rhs, lhs_scales, rhs_scales, jnp.bfloat16
    )
    assert out.dtype == jnp.bfloat16
    np.testing.assert_allclose(np.asarray(out, np.float32), want, rtol=1e-2, atol=1e-2)


def _quantize_reference(x, mode):
    """Blocks of the last axis of float32 ``x`` quantized as JAX's formats define."""
    block = 32 if mode == "mxfp8" else 16
    blocks = x.reshape(*x.shape[:-1], -1, block)
    amax = np.abs(blocks).max(-1, keepdims=True)
    if mode == "mxfp8":
        scale = (2.0 ** np.ceil(np.log2(amax / np.float32(448)))).astype(np.float32)
        data = np.clip(blocks / scale, -448, 448).astype(ml_dtypes.float8_e4m3fn)
    else:
        scale = np.clip(amax / np.float32(6), 0, 448).astype(ml_dtypes.float8_e4m3fn)
        scale = scale.astype(np.float32)
        data = np.clip(blocks / scale, -6, 6).astype(ml_dtypes.float4_e2m1fn)
    return (data.astype(np.float64) * scale).reshape(x.shape)


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_scaled_dot_general_quantizes_like_the_formats(mode):
    x = RNG.normal(size=(4, 64, 3)).astype(np.float32)  # contracting axis 1
    y = RNG.normal(size=(5, 64)).astype(np.float32)
    config = nn.get_scaled_dot_general_config(mode)
    dims = (((1,), (1,)), ((), ()))
    out = api.jit(lambda x, y: nn.scaled_dot_general(x, y, dims, configs=[config] * 3))(x, y)
    assert out.shape == (4, 3, 5) and out.dtype == np.float32
    xq = _quantize_reference(np.moveaxis(x, 1, -1), mode)  # (4, 3, 64)
    want = np.einsum("ack,nk->acn", xq, _quantize_reference(y, mode))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    # Quantization error is bounded by the formats' precision.
    exact = np.einsum("akc,nk->acn", x, y)
    assert np.abs(out - exact).max() < (2.0 if mode == "mxfp8" else 6.0)


def test_scaled_dot_general_batched_and_output_types():
    x = RNG.normal(size=(2, 3, 32)).astype(np.float32)
    y = RNG.normal(size=(2, 4, 32)).astype(np.float32)
    config = nn.get_scaled_dot_general_config("mxfp8")
    dims = (((2,), (2,)), ((0,), (0,)))
    out = api.jit(
        lambda x, y: nn.scaled_dot_general(x, y, dims, jnp.float16, configs=[config] * 3)
    )(x, y)
    assert out.dtype == np.float16 and out.shape == (2, 3, 4)
    want = np.einsum(
        "bmk,bnk->bmn", _quantize_reference(x, "mxfp8"), _quantize_reference(y, "mxfp8")
    )
    np.testing.assert_allclose(np.asarray(out, np.float32), want, rtol=2e-3, atol=2e-3)


def test_scaled_dot_general_gradients():
    x = RNG.normal(size=(32, 64)).astype(np.float32)
    y = RNG.normal(size=(64, 32)).astype(np.float32)
    w = RNG.normal(size=(32, 32)).astype(np.float32)
    dims = (((1,), (0,)), ((), ()))
    grads = {}
    for mode in ("mxfp8", "nvfp4"):
        config = nn.get_scaled_dot_general_config(mode)

        # Operands are arguments, not constants, which XLA would fold slowly.
        def loss(x, y, w, config=config):
            return (nn.scaled_dot_general(x, y, dims, configs=[config] * 3) * w).sum()

        grads[mode] = api.jit(api.grad(loss, argnums=(0, 1)))(x, y, w)
        assert grads[mode][0].shape == x.shape and grads[mode][1].shape == y.shape
    # MXFP8 quantizes the cotangent and the other operand along the product's axes.
    mx_x, mx_y = grads["mxfp8"]
    np.testing.assert_allclose(
        mx_x, _quantize_reference(w, "mxfp8") @ _quantize_reference(y, "mxfp8").T,
        rtol=1e-5, atol=1e-4,
    )  # fmt: skip
    np.testing.assert_allclose(
        mx_y, _quantize_reference(x.T, "mxfp8") @ _quantize_reference(w.T, "mxfp8").T,
        rtol=1e-5, atol=1e-4,
    )  # fmt: skip
    # NVFP4's backward product is unquantized.
    np.testing.assert_allclose(grads["nvfp4"][0], w @ y.T, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(grads["nvfp4"][1], x.T @ w, rtol=1e-5, atol=1e-4)


def test_without_configs_is_dot_general():
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    dims = (((1,), (0,)), ((), ()))
    out = nn.scaled_dot_general(x, y, dims)
    np.testing.assert_array_equal(
        out, lax.dot_general(x, y, dims, preferred_element_type=np.float32)
    )
    with pytest.warns(DeprecationWarning, match="Backend selector, now ignored"):
        nn.scaled_dot_general(x, y, dims, implementation="cudnn")


def test_configs():
    mx = nn.get_scaled_dot_general_config("mxfp8")
    assert (mx.mode, mx.block_size, mx.global_scale, mx.infer_only) == ("mxfp8", 32, None, False)
    assert mx.data_type == ml_dtypes.float8_e4m3fn and mx.scale_type == ml_dtypes.float8_e8m0fnu
    fp4 = nn.get_scaled_dot_general_config("nvfp4")
    assert (fp4.mode, fp4.block_size) == ("nvfp4", 16)
    assert fp4.data_type == ml_dtypes.float4_e2m1fn and fp4.scale_type == ml_dtypes.float8_e4m3fn
    np.testing.assert_array_equal(fp4.global_scale, np.ones(1, np.float32))
    assert fp4.global_scale.dtype == np.float32
    custom = nn.get_scaled_dot_general_config("nvfp4", global_scale=jnp.array([2.0]))
    np.testing.assert_array_equal(custom.global_scale, [2.0])


def test_errors():
    with pytest.raises(ValueError, match="Unsupported mode: int8"):
        nn.get_scaled_dot_general_config("int8")
    x = jnp.ones((2, 32))
    config = nn.get_scaled_dot_general_config("mxfp8")
    with pytest.raises(TypeError, match="Only support preferred_element_type in"):
        nn.scaled_dot_general(x, x, (((1,), (1,)), ((), ())), jnp.int32, configs=[config] * 3)
    a, s = jnp.ones((1, 2, 32)), jnp.ones((1, 2, 1))
    with pytest.raises(ValueError, match="requires all inputs to be 3-dimensional"):
        nn.scaled_matmul(x, x, s, s)
    with pytest.raises(ValueError, match=r"matching batch \(B\) and contract \(K\) dimensions"):
        nn.scaled_matmul(a, jnp.ones((1, 2, 16)), s, s)
    with pytest.raises(ValueError, match="scales to have matching batch"):
        nn.scaled_matmul(a, a, s, jnp.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="scales to match non-contract dimensions"):
        nn.scaled_matmul(a, a, jnp.ones((1, 3, 1)), s)
