"""``dot_product_attention(implementation="cudnn")`` lowered for CUDA on a machine
without a GPU: the cuDNN custom calls (target, backend config, operand and result
layouts) and transposes against JAX 0.10.2's, recorded with JAX's cuDNN version and
compute-capability checks stubbed (data/cudnn_attention_ops.json); and what lamina
refuses. The values are checked on a GPU by tests/test_gpu.py."""

import json
import pathlib
import re

import numpy as np
import pytest

import lamina.nn as nn
import lamina.nn.attention
import lamina.numpy as jnp
from lamina.interpreters import grad, jit, vmap

RECORDED = json.loads(
    (pathlib.Path(__file__).parent / "data" / "cudnn_attention_ops.json").read_text()
)["ops"]


@pytest.fixture(autouse=True)
def a_gpu_is_assumed(monkeypatch):
    # The cuDNN path checks for a GPU backend first; lowering itself needs none.
    monkeypatch.setattr(lamina.nn.attention, "default_backend", lambda: "gpu")


def attn(**kw):
    return lambda q, k, v: nn.dot_product_attention(q, k, v, implementation="cudnn", **kw)


def grad_of(f):
    return grad(lambda q, k, v: jnp.sum(f(q, k, v).astype(jnp.float32)), argnums=(0, 1, 2))


BF = np.zeros((2, 128, 4, 64), jnp.bfloat16)
F16 = np.zeros((1, 256, 2, 128), np.float16)
KV = np.zeros((1, 64, 2, 128), np.float16)
WINDOW = {"is_causal": True, "local_window_size": (16, 0), "scale": 0.5}
CASES = {
    "causal": (attn(is_causal=True), (BF, BF, BF)),
    "causal_grad": (grad_of(attn(is_causal=True)), (BF, BF, BF)),
    "no_mask_f16_cross": (attn(), (F16, KV, KV)),
    "no_mask_f16_cross_grad": (grad_of(attn()), (F16, KV, KV)),
    "window_scale": (attn(**WINDOW), (BF, BF, BF)),
    "window_scale_grad": (grad_of(attn(**WINDOW)), (BF, BF, BF)),
}


def _cuda(fun, args):
    return jit(fun).trace(*args).lower(lowering_platforms=("cuda",)).as_text()


def _ops(text):
    return [
        re.sub(r"%[\w#]+", "%_", line.strip().split("= ", 1)[1])
        for line in text.splitlines()
        if "custom_call" in line or "transpose" in line
    ]


@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_lowering_is_jaxs(name):
    fun, args = CASES[name]
    assert _ops(_cuda(fun, args)) == RECORDED[name]


def test_vmap_merges_into_the_batch_axis():
    q = np.zeros((3, 2, 128, 4, 64), jnp.bfloat16)
    text = _cuda(vmap(attn(is_causal=True)), (q, q, q))
    merged = "tensor<6x128x4x64xbf16>"
    assert f"({merged}, {merged}, {merged}) -> (tensor<6x4x128x64xbf16>, tensor<0xui8>)" in text


def test_there_is_no_cuDNN_on_the_cpu():
    with pytest.raises(NotImplementedError, match="dot_product_attention_fwd_wrapper"):
        jit(attn()).trace(BF, BF, BF).lower(lowering_platforms=("cpu",))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"bias": np.zeros((2, 4, 128, 128), jnp.bfloat16)}, "with bias is not built"),
        ({"mask": np.ones((2, 4, 128, 128), bool)}, "with mask is not built"),
        ({"query_seq_lengths": np.full(2, 128, np.int32)}, "with sequence lengths"),
    ],
)
def test_cases_lamina_does_not_build(kwargs, message):
    with pytest.raises(NotImplementedError, match=message):
        nn.dot_product_attention(BF, BF, BF, implementation="cudnn", **kwargs)


def test_float32_and_head_size_are_refused():
    x = np.zeros((1, 8, 2, 64), np.float32)
    with pytest.raises(NotImplementedError, match="float16 or bfloat16"):
        nn.dot_product_attention(x, x, x, implementation="cudnn")
    y = np.zeros((1, 8, 2, 12), jnp.bfloat16)
    with pytest.raises(NotImplementedError, match="multiple of 8, but got 12"):
        nn.dot_product_attention(y, y, y, implementation="cudnn")


def test_right_window_needs_the_causal_mask():
    # Recorded from JAX 0.10.2.
    with pytest.raises(ValueError, match="cuDNN doesn't support right window: 2"):
        nn.dot_product_attention(BF, BF, BF, implementation="cudnn", local_window_size=(2, 2))
