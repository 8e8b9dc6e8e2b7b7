"""Block-scaled matrix products of ``jax.nn``: ``scaled_matmul`` (a batched product of
low-precision operands, each block of ``block_size`` entries along the contracting axis
multiplied by its own scale), ``scaled_dot_general`` (``dot_general`` whose operands
are quantized to the MXFP8 or NVFP4 formats first, with a custom VJP that quantizes the
cotangent too), and ``get_scaled_dot_general_config``.

JAX runs the product as a cuDNN custom call and has no CPU kernel for it; here it is
computed with XLA ops: the operands and their scales are widened to float32 (exact for
these formats), multiplied, and contracted with float32 accumulation."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import custom_vjp
from lamina.ir import dtypes

__all__ = [
    "BlockScaleConfig",
    "get_scaled_dot_general_config",
    "scaled_dot_general",
    "scaled_matmul",
]

_OUTPUT_TYPES = (np.dtype("float32"), np.dtype(dtypes.bfloat16), np.dtype("float16"))


@dataclass(slots=True)
class BlockScaleConfig:
    """How one operand is quantized: ``mode`` ('mxfp8' or 'nvfp4'), ``block_size``
    entries per scale, the element ``data_type`` and ``scale_type``, an optional float32
    ``global_scale`` (NVFP4), and ``infer_only``."""

    mode: str
    block_size: int
    data_type: object
    scale_type: object
    global_scale: object | None
    infer_only: bool


def get_scaled_dot_general_config(mode, global_scale=None):
    """The ``BlockScaleConfig`` of ``mode``: 'mxfp8' (float8_e4m3fn data in blocks of 32
    with float8_e8m0fnu power-of-two scales) or 'nvfp4' (float4_e2m1fn data in blocks of
    16 with float8_e4m3fn scales and a float32 global scale, 1 unless given)."""
    if mode == "nvfp4":
        one = jnp.ones((1,), dtype=np.float32)
        return BlockScaleConfig(
            mode="nvfp4",
            block_size=16,
            data_type=dtypes.float4_e2m1fn,
            scale_type=dtypes.float8_e4m3fn,
            global_scale=one if global_scale is None else global_scale,
            infer_only=False,
        )
    if mode == "mxfp8":
        return BlockScaleConfig(
            mode="mxfp8",
            block_size=32,
            data_type=dtypes.float8_e4m3fn,
            scale_type=dtypes.float8_e8m0fnu,
            global_scale=None,
            infer_only=False,
        )
    raise ValueError(f"Unsupported mode: {mode}")


def _dequantized(x, scales):
    """(B, R, C) ``x`` times its (B, R, C // block) ``scales``, in float32."""
    B, R, C = x.shape
    blocks = scales.shape[-1]
    wide_scales = lax.broadcast_in_dim(
        scales.astype(np.float32), (B, R, blocks, C // blocks), (0, 1, 2)
    )
    return x.astype(np.float32) * jnp.reshape(wide_scales, (B, R, C))


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """``out[b, m, n] = sum_k lhs[b, m, k] * lhs_scales[b, m, k // block] *
    rhs[b, n, k] * rhs_scales[b, n, k // block]``: all four arguments are 3-D, ``rhs`` is
    (B, N, K) (contracted on its last axis), and the scales have K // block columns."""
    if not all(x.ndim == 3 for x in (lhs, rhs, lhs_scales, rhs_scales)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    B_a, M_a, K_a = lhs.shape
    B_b, N_b, K_b = rhs.shape
    if K_a != K_b or B_a != B_b:
        raise ValueError(
            "scaled_matmul requires inputs a and b to have matching batch (B) and contract "
            f"(K) dimensions, but got shapes {lhs.shape} and {rhs.shape}"
        )
    B_as, M_as, K_as = lhs_scales.shape
    B_bs, N_bs, K_bs = rhs_scales.shape
    if K_as != K_bs or B_as != B_bs:
        raise ValueError(
            "scaled_matmul requires scales to have matching batch (B) and contract (K) "
            f"dimensions, but got shapes {lhs_scales.shape} and {rhs_scales.shape}"
        )
    if M_as != M_a or N_bs != N_b:
        raise ValueError(
            "scaled_matmul requires scales to match non-contract dimensions of inputs, but "
            f"got shapes a: {lhs.shape}, b: {rhs.shape}, a_scales: {lhs_scales.shape}, "
            f"b_scales: {rhs_scales.shape}"
        )
    if K_as == 0 or K_a % K_as != 0:
        raise ValueError(
            f"scaled_matmul requires the contract dimension {K_a} to be a multiple of the "
            f"scales' contract dimension {K_as}"
        )
    out_type = dtypes.canonicalize_dtype(np.dtype(preferred_element_type))
    product = lax.dot_general(
        _dequantized(lhs, lhs_scales),
        _dequantized(rhs, rhs_scales),
        (((2,), (2,)), ((0,), (0,))),
        preferred_element_type=np.float32,
    )
    return product.astype(out_type)


def _to_3d(x, contracting, batch):
    """``x`` transposed to (batch..., kept..., contracting...) and flattened to 3-D."""
    kept = [d for d in range(x.ndim) if d not in contracting and d not in batch]
    batch_order = sorted(batch)
    contract_order = sorted(contracting)
    t = jnp.transpose(x, batch_order + kept + contract_order)
    sizes = [math.prod(x.shape[d] for d in group) for group in (batch_order, kept, contract_order)]
    return jnp.reshape(t, sizes)


def _output_shape(lhs_shape, rhs_shape, lhs_dims, rhs_dims):
    (lhs_contract, lhs_batch), (rhs_contract, rhs_batch) = lhs_dims, rhs_dims
    batch = [n for i, n in enumerate(lhs_shape) if i in lhs_batch]
    lhs_kept = [n for i, n in enumerate(lhs_shape) if i not in lhs_contract + lhs_batch]
    rhs_kept = [n for i, n in enumerate(rhs_shape) if i not in rhs_contract + rhs_batch]
    return tuple(batch + lhs_kept + rhs_kept)


def _e8m0_rounded_up(x):
    """float32 ``x`` (positive) as the biased exponent of the smallest power of two at
    least ``x``, as uint8: the MX scale encoding."""
    bits = lax.bitcast_convert_type(x.astype(np.float32), np.uint32)
    exponent = bits >> 23
    mantissa = bits & 0x7FFFFF
    # Round up unless x is a power of two already, the exponent is saturated, or x is a
    # subnormal at most half the smallest normal (which rounds to 2**-127 exactly).
    round_up = (mantissa > 0) & (exponent != 254) & ~((exponent == 0) & (mantissa <= 0x400000))
    return jnp.where(round_up, exponent + 1, exponent).astype(np.uint8)


def _e8m0_value(exponents, dtype):
    value = lax.bitcast_convert_type(exponents.astype(np.uint32) << 23, np.float32)
    tiny = 2.0**-15 if dtype == np.float16 else 2.0**-127
    return jnp.where(value == 0, jnp.array(tiny, np.float32), value).astype(dtype)


def _quantize(x, config):
    """(B, R, C) ``x`` as ``config.data_type`` values and their per-block scales."""
    shape = x.shape
    block = config.block_size
    if not (shape[-1] >= block and shape[-1] % block == 0):
        raise ValueError(
            f"scaled_dot_general requires the contracting size {shape[-1]} to be a positive "
            f"multiple of the block size {block}"
        )
    x = jnp.reshape(x, (*shape[:-1], shape[-1] // block, block))
    data_max = np.array(dtypes.finfo(config.data_type).max).astype(x.dtype)

    def block_scales(values):
        return jnp.max(jnp.abs(values), axis=-1, keepdims=True) / data_max

    if config.mode == "mxfp8":
        scales = _e8m0_rounded_up(block_scales(x))
        scaled_x = x / _e8m0_value(scales, x.dtype)
        scales = lax.bitcast_convert_type(scales, config.scale_type)
    elif config.mode == "nvfp4":
        scale_max = np.array(dtypes.finfo(config.scale_type).max).astype(x.dtype)
        x = x / config.global_scale
        scales = jnp.clip(block_scales(x), 0, scale_max)
        scales = lax.optimization_barrier(scales.astype(config.scale_type))
        scaled_x = x / scales.astype(np.float32)
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    x_q = jnp.clip(scaled_x, -data_max, data_max).astype(config.data_type)
    return jnp.reshape(x_q, shape), jnp.reshape(scales, scales.shape[:-1])


def _scaled_product(lhs, rhs, lhs_dims, rhs_dims, out_type, lhs_config, rhs_config):
    lhs_q, lhs_scales = _quantize(_to_3d(lhs, *lhs_dims), lhs_config)
    rhs_q, rhs_scales = _quantize(_to_3d(rhs, *rhs_dims), rhs_config)
    nvfp4 = lhs_config.mode == "nvfp4"
    out = scaled_matmul(lhs_q, rhs_q, lhs_scales, rhs_scales, np.float32 if nvfp4 else out_type)
    if nvfp4:
        out = (out * (lhs_config.global_scale * rhs_config.global_scale)).astype(out_type)
    return jnp.reshape(out, _output_shape(lhs.shape, rhs.shape, lhs_dims, rhs_dims))


def _cotangent_product(g, y, x_ndim, x_dims, y_dims, out_type, configs, swap_ans):
    """The cotangent of ``x`` in ``out = dot_general(x, y)`` (or of ``y`` in
    ``dot_general(y, x)`` when ``swap_ans``): ``g`` contracted with ``y`` over the other
    operand's kept axes, then transposed into ``x``'s axis order."""
    (x_contract, x_batch), (y_contract, y_batch) = x_dims, y_dims
    x_kept = [d for d in range(x_ndim) if d not in x_contract and d not in x_batch]
    y_kept = [d for d in range(y.ndim) if d not in y_contract and d not in y_batch]
    nb = len(x_batch)
    g_batch = list(range(nb))
    if swap_ans:
        g_y = list(range(nb, nb + len(y_kept)))
    else:
        g_y = list(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    x_contract_by_y = list(np.take(x_contract, np.argsort(y_contract)))
    out_axes = tuple(int(a) for a in np.argsort(list(x_batch) + x_kept + x_contract_by_y))
    g_dims, y_dims_kept = (tuple(g_y), tuple(g_batch)), (tuple(y_kept), tuple(y_batch))
    g_3d, y_3d = _to_3d(g, *g_dims), _to_3d(y, *y_dims_kept)
    if configs[0].mode != "nvfp4":
        g_q, g_scales = _quantize(g_3d, configs[0])
        y_q, y_scales = _quantize(y_3d, configs[1])
        out = scaled_matmul(g_q, y_q, g_scales, y_scales, out_type)
    else:
        out = jnp.matmul(g_3d, jnp.transpose(y_3d, (0, 2, 1)), preferred_element_type=out_type)
    out = jnp.reshape(out, _output_shape(g.shape, y.shape, g_dims, y_dims_kept))
    return lax.transpose(out, out_axes)


def _scaled_dot_general_fn(dimension_numbers, out_type, configs):
    """The quantized product as a function of ``(lhs, rhs)`` with its VJP: the
    cotangent is quantized with ``configs[2]`` and contracted with each operand."""
    (lc, rc), (lb, rb) = dimension_numbers

    @custom_vjp
    def product(lhs, rhs):
        return _scaled_product(lhs, rhs, (lc, lb), (rc, rb), out_type, configs[0], configs[1])

    def fwd(lhs, rhs):
        return product(lhs, rhs), (lhs, rhs)

    def bwd(residuals, g):
        lhs, rhs = residuals
        grad_lhs = _cotangent_product(
            g, rhs, lhs.ndim, (lc, lb), (rc, rb), out_type, [configs[2], configs[1]], False
        )
        grad_rhs = _cotangent_product(
            g, lhs, rhs.ndim, (rc, rb), (lc, lb), out_type, [configs[2], configs[0]], True
        )
        if configs[2].mode == "nvfp4":
            # Entries beyond the largest representable scaled value were clipped forward.
            data_max = np.array(dtypes.finfo(configs[0].data_type).max).astype(lhs.dtype)
            scale_max = np.array(dtypes.finfo(configs[0].scale_type).max).astype(lhs.dtype)
            limit = data_max * scale_max
            grad_lhs = jnp.where(jnp.abs(lhs) <= configs[0].global_scale * limit, grad_lhs, 0)
            grad_rhs = jnp.where(jnp.abs(rhs) <= configs[1].global_scale * limit, grad_rhs, 0)
        return grad_lhs, grad_rhs

    product.defvjp(fwd, bwd)
    return product


def scaled_dot_general(
    lhs, rhs, dimension_numbers, preferred_element_type=np.float32, configs=None,
    implementation=None,
):  # fmt: skip
    """``lax.dot_general`` of ``lhs`` and ``rhs`` quantized blockwise along their
    contracting axis per ``configs`` ([lhs, rhs, cotangent] ``BlockScaleConfig``s, see
    ``get_scaled_dot_general_config``); without ``configs``, plain ``dot_general``."""
    if implementation is not None:
        warnings.warn(
            "Backend selector, now ignored. The system chooses the backend automatically.",
            DeprecationWarning,
            stacklevel=2,
        )
    if configs is None:
        return lax.dot_general(
            lhs, rhs, dimension_numbers, preferred_element_type=preferred_element_type
        )
    if np.dtype(preferred_element_type) not in _OUTPUT_TYPES:
        raise TypeError(
            "Only support preferred_element_type in (f32, bf16, f16), but got "
            f"{preferred_element_type}"
        )
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) for d in dims) for dims in (lc, rc, lb, rb))
    needs_batch = not lb
    if needs_batch:
        # A unit batch axis at the end of each operand; the product's leading one is dropped.
        lhs, rhs = jnp.expand_dims(lhs, lhs.ndim), jnp.expand_dims(rhs, rhs.ndim)
        lb, rb = (lhs.ndim - 1,), (rhs.ndim - 1,)
    product = _scaled_dot_general_fn(
        ((lc, rc), (lb, rb)), np.dtype(preferred_element_type), list(configs)
    )
    out = product(lhs, rhs)
    return jnp.squeeze(out, axis=0) if needs_batch else out
