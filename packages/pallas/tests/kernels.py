"""Kernels the tests run in interpret mode, written as JAX users write them."""

import functools

import numpy as np

import lamina.numpy as jnp
from lamina import lax
from lamina import pallas as pl
from lamina.interpreters import ShapeDtypeStruct


def matmul_kernel(x_ref, y_ref, o_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += x_ref[...] @ y_ref[...]


def matmul(x, y, bm=32, bn=32, bk=32, interpret=True):
    """A blocked matmul accumulating into its output block over the K grid axis."""
    m, k = x.shape
    n = y.shape[1]
    return pl.pallas_call(
        matmul_kernel,
        out_shape=ShapeDtypeStruct((m, n), x.dtype),
        grid=(pl.cdiv(m, bm), pl.cdiv(n, bn), pl.cdiv(k, bk)),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
            pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        interpret=interpret,
    )(x, y)


def flash_attention_kernel(q_ref, k_ref, v_ref, o_ref, *, block_k):
    q = q_ref[...]
    bq, d = q.shape
    scale = np.float32(1 / np.sqrt(d))

    def body(t, carry):
        m, l, acc = carry
        k = k_ref[pl.ds(t * block_k, block_k), :]
        v = v_ref[pl.ds(t * block_k, block_k), :]
        s = (q @ k.T) * scale
        m_new = jnp.maximum(m, s.max(axis=-1))
        p = jnp.exp(s - m_new[:, None])
        corr = jnp.exp(m - m_new)
        return m_new, l * corr + p.sum(axis=-1), acc * corr[:, None] + p @ v

    init = (
        jnp.full((bq,), -jnp.inf, jnp.float32),
        jnp.zeros((bq,), jnp.float32),
        jnp.zeros((bq, d), jnp.float32),
    )
    _, l, acc = lax.fori_loop(0, k_ref.shape[0] // block_k, body, init)
    o_ref[...] = acc / l[:, None]


def flash_attention(q, k, v, block_q=32, block_k=32, interpret=True):
    """Flash-attention forward over (batch*heads, seq, head_dim) arrays."""
    bh, s, d = q.shape
    return pl.pallas_call(
        functools.partial(flash_attention_kernel, block_k=block_k),
        out_shape=ShapeDtypeStruct(q.shape, q.dtype),
        grid=(bh, s // block_q),
        in_specs=[
            pl.BlockSpec((None, block_q, d), lambda b, i: (b, i, 0)),
            pl.BlockSpec((None, s, d), lambda b, i: (b, 0, 0)),
            pl.BlockSpec((None, s, d), lambda b, i: (b, 0, 0)),
        ],
        out_specs=pl.BlockSpec((None, block_q, d), lambda b, i: (b, i, 0)),
        interpret=interpret,
    )(q, k, v)


def attention_reference(q, k, v):
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v
