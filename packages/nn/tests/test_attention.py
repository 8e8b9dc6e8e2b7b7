"""lamina.nn.dot_product_attention against a float64 NumPy reference for each option
(grouped-query heads, bias and mask broadcasting, causal and local-window masks,
sequence lengths, 3-D inputs, explicit scale, residuals, bfloat16), against values and
gradients recorded from JAX 0.10.2 (data/attention_jax.json, every option at once,
with a fully masked row), numerical gradients, vmap, and JAX's errors."""

import json
import pathlib

import numpy as np
import pytest

import lamina.interpreters as api
import lamina.nn as nn
import lamina.numpy as jnp
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(7)
B, T, S, N, K, H = 2, 4, 5, 4, 2, 8
Q = RNG.normal(size=(B, T, N, H)).astype(np.float32)
KEY = RNG.normal(size=(B, S, K, H)).astype(np.float32)
V = RNG.normal(size=(B, S, K, H)).astype(np.float32)
BIAS = RNG.normal(size=(B, N, T, S)).astype(np.float32)
MASK = RNG.uniform(size=(1, 1, T, S)) > 0.25
LARGE_NEGATIVE = -0.7 * float(np.finfo(np.float32).max)


def reference(q, k, v, bias=None, mask=None, *, scale=None, is_causal=False, q_len=None,
              kv_len=None, window=None, residual=False):  # fmt: skip
    """Attention in float64 with one loop-free formula per option."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    _, t, n, h = q.shape
    s, kv_heads = k.shape[1], k.shape[2]
    heads = np.arange(n) // (n // kv_heads)
    logits = np.einsum("btnh,bsnh->bnts", q, k[:, :, heads]) * (scale or 1 / np.sqrt(h))
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= mask
    qi, ki = np.arange(t)[:, None], np.arange(s)[None, :]
    if is_causal:
        keep &= ki <= qi
    if window is not None:
        left, right = (window, window) if isinstance(window, int) else window
        keep &= (ki >= qi - left) & (ki <= qi + right)
    if q_len is not None:
        keep &= np.arange(t)[None, None, :, None] < np.asarray(q_len)[:, None, None, None]
    if kv_len is not None:
        keep &= np.arange(s)[None, None, None, :] < np.asarray(kv_len)[:, None, None, None]
    logits = np.where(keep, logits, LARGE_NEGATIVE)
    top = logits.max(-1, keepdims=True)
    weights = np.exp(logits - top)
    lse = np.log(weights.sum(-1)) + top[..., 0]
    out = np.einsum("bnts,bsnh->btnh", weights / weights.sum(-1, keepdims=True), v[:, :, heads])
    if q_len is not None:
        out = out * (np.arange(t)[None, :, None, None] < np.asarray(q_len)[:, None, None, None])
    return (out, lse.transpose(0, 2, 1)) if residual else out


Q_LEN = np.array([3, 4], np.int32)
KV_LEN = np.array([5, 2], np.int32)
OPTIONS = {
    "plain": {},
    "bias": {"bias": BIAS},
    "bias_one_head_3d": {"bias": BIAS[0, :1]},
    "mask_broadcast": {"mask": MASK},
    "mask_per_head": {"mask": np.broadcast_to(MASK, (B, N, T, S)) & (BIAS > -1)},
    "causal": {"is_causal": True},
    "window_int": {"local_window_size": 1},
    "window_causal": {"local_window_size": (2, 0), "is_causal": True},
    "window_asymmetric": {"local_window_size": (0, 2)},
    "seq_lengths": {"query_seq_lengths": Q_LEN, "key_value_seq_lengths": KV_LEN},
    "kv_lengths_causal": {"key_value_seq_lengths": KV_LEN, "is_causal": True},
    "scale": {"scale": 0.3, "bias": BIAS},
    "xla": {"implementation": "xla", "mask": MASK},
}


def _reference_kwargs(kwargs):
    out = dict(kwargs)
    renames = {
        "query_seq_lengths": "q_len",
        "key_value_seq_lengths": "kv_len",
        "local_window_size": "window",
    }
    for old, new in renames.items():
        if old in out:
            out[new] = out.pop(old)
    out.pop("implementation", None)
    return out


def test_forward_against_numpy():
    names = sorted(OPTIONS)

    def every_option(q, k, v):
        return [nn.dot_product_attention(q, k, v, **OPTIONS[name]) for name in names]

    # One compiled program for all the options.
    outs = api.jit(every_option)(Q, KEY, V)
    for name, out in zip(names, outs, strict=True):
        assert out.dtype == np.float32 and out.shape == Q.shape, name
        want = reference(Q, KEY, V, **_reference_kwargs(OPTIONS[name]))
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5, err_msg=name)


def test_gradients_for_every_option():
    """One numerical check covering the options: their outputs concatenated."""

    def all_options(q, k, v, bias):
        outs = []
        for name in ("plain", "mask_per_head", "window_causal", "seq_lengths", "scale"):
            kwargs = {**OPTIONS[name]}
            if "bias" in kwargs:
                kwargs["bias"] = bias
            outs.append(nn.dot_product_attention(q, k, v, **kwargs))
        outs.append(nn.dot_product_attention(q, k, v, bias[:, :1], is_causal=True))
        return jnp.stack(outs)

    args = tuple(jnp.asarray(a) for a in (Q, KEY, V, BIAS))
    check_grads(api.jit(all_options), args, order=1, modes=["rev"], atol=1e-2, rtol=1e-2)


def test_matches_recorded_jax_with_every_option():
    rec = json.loads((pathlib.Path(__file__).parent / "data" / "attention_jax.json").read_text())
    q, k, v, bias = (np.array(rec[n], np.float32) for n in ("q", "k", "v", "bias"))
    mask = np.array(rec["mask"])
    q_len, kv_len = np.array(rec["ql"], np.int32), np.array(rec["kl"], np.int32)
    out, residual = nn.dot_product_attention(
        q, k, v, bias, mask, is_causal=True, query_seq_lengths=q_len,
        key_value_seq_lengths=kv_len, local_window_size=(3, 1), return_residual=True,
    )  # fmt: skip
    np.testing.assert_allclose(out, np.array(rec["out"]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(residual, np.array(rec["residual"]), rtol=1e-6)
    want_out, want_lse = reference(
        q, k, v, bias, mask, is_causal=True, q_len=q_len, kv_len=kv_len, window=(3, 1),
        residual=True,
    )  # fmt: skip
    np.testing.assert_allclose(out, want_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(residual, want_lse, rtol=1e-5)

    def loss(q, k, v, b):
        attended = nn.dot_product_attention(
            q, k, v, b, mask, is_causal=True, key_value_seq_lengths=kv_len
        )
        return (attended**2).sum()

    grads = api.jit(api.grad(loss, argnums=(0, 1, 2, 3)))(q, k, v, bias)
    for got, want in zip(grads, rec["grads"], strict=True):
        np.testing.assert_allclose(got, np.array(want), rtol=1e-4, atol=1e-5)


def test_three_dimensional_inputs_and_residual():
    out, lse = nn.dot_product_attention(Q[0], KEY[0], V[0], return_residual=True)
    want, want_lse = reference(Q[:1], KEY[:1], V[:1], residual=True)
    assert out.shape == (T, N, H) and lse.shape == (T, N)
    np.testing.assert_allclose(out, want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lse, want_lse[0], rtol=1e-5)


def test_bfloat16():
    q, k, v = (jnp.asarray(a, jnp.bfloat16) for a in (Q, KEY, V))
    out = nn.dot_product_attention(q, k, v, is_causal=True)
    assert out.dtype == jnp.bfloat16
    want = reference(*(np.asarray(a, np.float32) for a in (q, k, v)), is_causal=True)
    np.testing.assert_allclose(np.asarray(out, np.float32), want, rtol=3e-2, atol=3e-2)


def test_vmap_against_loop():
    qs = np.stack([Q, Q * 0.5, -Q])
    f = api.jit(api.vmap(lambda q: nn.dot_product_attention(q, KEY, V, is_causal=True)))
    looped = np.stack([reference(q, KEY, V, is_causal=True) for q in qs])
    np.testing.assert_allclose(f(qs), looped, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        ((Q, KEY, V.astype(np.float16)), {}, ValueError, "value dtype should be float32"),
        ((Q, KEY[:, :, :1].repeat(3, 2), V[:, :, :1].repeat(3, 2)), {}, ValueError,
         "The number of query heads must be a multiple of key/value heads, but got 4 vs 3"),
        ((Q, KEY, V[:, :4]), {}, ValueError, "value shape should be"),
        ((Q[..., :4], KEY, V), {}, ValueError, "query shape should be"),
        ((Q, KEY, V, None, MASK.astype(np.int32)), {}, ValueError, "mask dtype should be bool"),
        ((Q, KEY, V), {"query_seq_lengths": Q_LEN.astype(np.float32)}, ValueError,
         "query_seq_lengths dtype should be int32"),
        ((Q, KEY, V), {"key_value_seq_lengths": KV_LEN[:1]}, ValueError,
         "key_value_seq_lengths shape should be"),
        ((Q, KEY, V), {"implementation": "triton"}, ValueError,
         "Unsupported implementation option: triton"),
        ((Q, KEY, V), {"implementation": "cudnn"}, RuntimeError, "cuDNN is not detected"),
    ],
)  # fmt: skip
def test_errors(args, kwargs, error, message):
    if kwargs.get("implementation") == "cudnn" and api.default_backend() == "gpu":
        pytest.skip("a GPU backend runs the 'cudnn' implementation")
    with pytest.raises(error, match=message):
        nn.dot_product_attention(*args, **kwargs)
