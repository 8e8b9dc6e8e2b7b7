"""``dot_product_attention``: scaled dot-product attention in JAX's BTNH layout
(batch, sequence, heads, head size) computed with XLA ops, with grouped-query heads,
bias and boolean masks, causal and local-window masks, and per-batch sequence lengths.

Grouped heads are computed without repeating keys and values: the N query heads are
viewed as (K, G) (K key/value heads, G query heads per key/value head) and the
products contract with keys and values of shape (B, S, K, H) directly."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import default_backend
from lamina.ir import dtypes
from lamina.nn.axis_functions import logsumexp, softmax
from lamina.nn.cudnn_attention import MaskType, cudnn_dot_product_attention

__all__ = ["dot_product_attention"]


def _attention_cudnn(q, k, v, bias, mask, is_causal, scale, q_lengths, kv_lengths, window,
                     return_residual):  # fmt: skip
    """cuDNN's fused kernel, for the cases lamina builds (see ``cudnn_attention``)."""
    unsupported = {
        "bias": bias is not None,
        "mask": mask is not None,
        "sequence lengths": q_lengths is not None or kv_lengths is not None,
        "return_residual": return_residual,
    }
    missing = [name for name, given in unsupported.items() if given]
    if missing:
        raise NotImplementedError(
            f"lamina: dot_product_attention(implementation='cudnn') with {', '.join(missing)} "
            "is not built; use implementation=None"
        )
    sliding_window = None
    if window is not None:
        left, right = window
        if right != 0 and not is_causal:
            raise ValueError(
                f"cuDNN doesn't support right window: {right} when causal mask is not used."
            )
        sliding_window = left + 1
    mask_type = MaskType.CAUSAL if is_causal else MaskType.NO_MASK
    return cudnn_dot_product_attention(
        q, k, v, scale=scale, mask_type=mask_type, sliding_window_length=sliding_window
    )


def _large_negative(dtype):
    """The fill value of masked logits: far below any logit, yet finite so that a fully
    masked row still normalises to a uniform distribution instead of nan."""
    dtype_max = min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(np.float32).max))
    return jnp.asarray(-0.7 * dtype_max, dtype=dtype)


def _position_mask(T: int, S: int, is_causal: bool, local_window):
    """The (T, S) mask of key positions each query position may see, or None."""
    if not is_causal and local_window is None:
        return None
    query_pos = lax.broadcasted_iota(np.int32, (T, S), 0)
    key_pos = lax.broadcasted_iota(np.int32, (T, S), 1)
    mask = None
    if is_causal:
        mask = key_pos <= query_pos
    if local_window is not None:
        left, right = local_window
        window = (query_pos <= key_pos + left) & (query_pos >= key_pos - right)
        mask = window if mask is None else mask & window
    return mask


def _padding_mask(T: int, S: int, q_seqlen, kv_seqlen):
    """The (B, T, S) mask of valid query/key pairs under the sequence lengths."""
    mask = None
    if q_seqlen is not None:
        mask = lax.broadcasted_iota(np.int32, (1, T, 1), 1) < q_seqlen[:, None, None]
    if kv_seqlen is not None:
        kv_mask = lax.broadcasted_iota(np.int32, (1, 1, S), 2) < kv_seqlen[:, None, None]
        mask = kv_mask if mask is None else mask & kv_mask
    return mask


def _grouped(t, K: int, G: int):
    """A 4-D (B, N, T, S) bias or mask as (B, K, G, T, S), or (B, 1, 1, T, S) when it
    has one head."""
    if t is None:
        return None
    tB, tN, tT, tS = t.shape
    if tN == 1:
        return t[:, :, None]
    if tN != K * G:
        raise AssertionError(f"bias/mask head dimension {tN} must be 1 or {K * G}")
    return jnp.reshape(t, (tB, K, G, tT, tS))


def _attention_xla(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen,
                   local_window, return_residual):  # fmt: skip
    B, T, N, H = query.shape
    _, S, K, _ = key.shape
    G = N // K
    query = jnp.reshape(query, (B, T, K, G, H))
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    # Low-precision products accumulate in float32, as JAX asks XLA to.
    logits = jnp.einsum("BTKGH,BSKH->BKGTS", query, key, preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    bias, mask = _grouped(bias, K, G), _grouped(mask, K, G)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)

    combined = None if mask is None else jnp.broadcast_to(mask, logits.shape)
    position = _position_mask(T, S, is_causal, local_window)
    if position is not None:
        combined = position if combined is None else combined & position
    padding = _padding_mask(T, S, q_seqlen, kv_seqlen)
    if padding is not None:
        padding = padding[:, None, None]
        combined = padding if combined is None else combined & padding
    if combined is not None:
        combined = jnp.broadcast_to(combined, logits.shape)
        logits = jnp.where(combined, logits, _large_negative(logits.dtype))

    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("BKGTS,BSKH->BTKGH", probs, value)
    if q_seqlen is not None:
        valid = lax.broadcasted_iota(np.int32, (1, T), 1) < q_seqlen[:, None]
        encoded = encoded * valid[:, :, None, None, None].astype(encoded.dtype)
    encoded = jnp.reshape(encoded, (B, T, N, H))
    if not return_residual:
        return encoded
    residual = logsumexp(logits, axis=-1).astype(key.dtype)  # (B, K, G, T)
    residual = jnp.reshape(jnp.moveaxis(residual, 3, 1), (B, T, N))
    return encoded, lax.stop_gradient(residual)


def _ensure_4d(t):
    t = jnp.asarray(t)
    if t.ndim < 4:
        return jnp.expand_dims(t, tuple(range(4 - t.ndim)))
    return t


def _check_shape_and_dtype(t, shape: Sequence[int], dtype, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for i in range(t.ndim):
        if shape[i] != -1 and t.shape[i] != shape[i]:
            raise ValueError(f"{name} shape should be {shape}: but got {t.shape}")


def dot_product_attention(
    query,
    key,
    value,
    bias=None,
    mask=None,
    *,
    scale=None,
    is_causal=False,
    query_seq_lengths=None,
    key_value_seq_lengths=None,
    local_window_size=None,
    implementation=None,
    return_residual=False,
):
    """``softmax(scale * Q K^T + bias, masked) V`` per batch and head.

    ``query`` is (B, T, N, H), ``key`` and ``value`` (B, S, K, H) with N a multiple of
    K (grouped-query attention); the leading B may be dropped (3-D inputs). ``bias`` and
    the boolean ``mask`` broadcast to (B, N, T, S). ``is_causal`` lets query t see keys
    s <= t; ``local_window_size`` (left, right) lets it see t-left <= s <= t+right;
    sequence lengths (int32, shape (B,)) mask padded positions, and padded queries give
    zeros. ``scale`` defaults to 1/sqrt(H). With ``return_residual`` the pair
    ``(output, logsumexp of the masked logits)``, the latter of shape (B, T, N).
    ``implementation`` is None or 'xla' (XLA operations), or 'cudnn' (cuDNN's fused
    kernel, on a GPU; without bias, mask, sequence lengths or residual)."""
    output_shape = jnp.asarray(query).shape
    query_arr, key_arr, value_arr = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    if query_seq_lengths is not None:
        query_seq_lengths = jnp.asarray(query_seq_lengths)
    if key_value_seq_lengths is not None:
        key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)

    B, S, K, H = key_arr.shape
    _check_shape_and_dtype(value_arr, [B, S, K, H], key_arr.dtype, "value")
    _check_shape_and_dtype(query_arr, [B, -1, -1, H], key_arr.dtype, "query")
    _check_shape_and_dtype(mask, [-1] * 4, np.dtype(bool), "mask")
    _check_shape_and_dtype(bias, [-1] * 4, None, "bias")
    _check_shape_and_dtype(query_seq_lengths, [B], np.dtype("int32"), "query_seq_lengths")
    _check_shape_and_dtype(key_value_seq_lengths, [B], np.dtype("int32"), "key_value_seq_lengths")
    if query_arr.shape[-2] % K != 0:
        raise ValueError(
            "The number of query heads must be a multiple of key/value heads, but got "
            f"{query_arr.shape[-2]} vs {K}"
        )
    scale_val = 1.0 / np.sqrt(H) if scale is None else scale

    if implementation == "cudnn" and default_backend() != "gpu":
        raise RuntimeError("cuDNN is not detected.")
    if implementation not in (None, "xla", "cudnn"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    if implementation == "cudnn":
        out = _attention_cudnn(
            query_arr, key_arr, value_arr, bias, mask, is_causal, scale_val,
            query_seq_lengths, key_value_seq_lengths, local_window_size, return_residual,
        )  # fmt: skip
        return jnp.reshape(out, output_shape)
    out = _attention_xla(
        query_arr,
        key_arr,
        value_arr,
        bias,
        mask,
        is_causal,
        scale_val,
        query_seq_lengths,
        key_value_seq_lengths,
        local_window_size,
        return_residual,
    )
    if return_residual:
        encoded, residual = out
        return jnp.reshape(encoded, output_shape), jnp.reshape(residual, output_shape[:-1])
    return jnp.reshape(out, output_shape)
