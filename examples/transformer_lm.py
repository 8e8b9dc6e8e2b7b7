"""A small transformer language model trained on a generated corpus.

The corpus is made of sequences that count up by a fixed stride modulo the vocabulary
size, each with its own start and stride, so the next token follows from the ones
before it: a model that reads its context well drives the loss far below
log(vocabulary size), the loss of guessing.

The model is a decoder-only transformer. Its layers' parameters are stacked along a
leading axis and applied with ``lax.scan``; each layer is wrapped in ``jax.checkpoint``
so its activations are recomputed in the backward pass instead of stored; attention is
``jax.nn.dot_product_attention`` with a causal mask. Training uses Adam, written out.

Runs unchanged on JAX with ``import jax`` in place of ``import lamina as jax``.

    uv run python examples/transformer_lm.py [--small] [--steps N]
"""

import argparse
import math
import time

import numpy as np

import lamina as jax
import lamina.numpy as jnp
from lamina import lax


def make_corpus(key, num_sequences, length, vocab):
    """Sequences ``(start + stride * i) % vocab`` with random starts and strides."""
    k_start, k_stride = jax.random.split(key)
    start = jax.random.randint(k_start, (num_sequences, 1), 0, vocab)
    stride = jax.random.randint(k_stride, (num_sequences, 1), 1, 8)
    return (start + stride * jnp.arange(length)) % vocab


def init_params(key, vocab, length, width, heads, layers):
    keys = jax.random.split(key, 7)
    dense = jax.nn.initializers.normal(0.02)

    def stacked(k, shape):
        return dense(k, (layers, *shape))

    return {
        "embed": dense(keys[0], (vocab, width)),
        "position": dense(keys[1], (length, width)),
        "layers": {
            "qkv": stacked(keys[2], (width, 3, heads, width // heads)),
            "out": stacked(keys[3], (heads, width // heads, width)),
            "up": stacked(keys[4], (width, 4 * width)),
            "down": stacked(keys[5], (4 * width, width)),
            "norm1": jnp.ones((layers, width)),
            "norm2": jnp.ones((layers, width)),
        },
        "final_norm": jnp.ones(width),
    }


def rms_norm(x, scale):
    return x * lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * scale


@jax.checkpoint
def block(x, p):
    """One pre-norm transformer layer: causal self-attention, then an MLP."""
    h = rms_norm(x, p["norm1"])
    q, k, v = jnp.unstack(jnp.einsum("btd,dshk->sbthk", h, p["qkv"]), axis=0)
    attended = jax.nn.dot_product_attention(q, k, v, is_causal=True)
    x = x + jnp.einsum("bthk,hkd->btd", attended, p["out"])
    h = rms_norm(x, p["norm2"])
    return x + jax.nn.gelu(h @ p["up"]) @ p["down"]


def logits_fn(params, tokens):
    x = params["embed"][tokens] + params["position"][: tokens.shape[1]]
    x, _ = lax.scan(lambda x, p: (block(x, p), None), x, params["layers"])
    return rms_norm(x, params["final_norm"]) @ params["embed"].T  # tied embeddings


def loss_fn(params, batch):
    logits = logits_fn(params, batch[:, :-1])
    targets = jax.nn.one_hot(batch[:, 1:], logits.shape[-1])
    return -jnp.mean(jnp.sum(targets * jax.nn.log_softmax(logits), axis=-1))


@jax.jit
def generate(params, tokens, prompt_length):
    """Replace ``tokens[:, prompt_length:]`` by the model's greedy predictions, one
    position at a time (the causal mask keeps later positions out of view)."""

    def fill(i, tokens):
        predicted = logits_fn(params, tokens)[:, i - 1].argmax(-1)
        return tokens.at[:, i].set(predicted.astype(tokens.dtype))

    return lax.fori_loop(prompt_length, tokens.shape[1], fill, tokens)


def adam(lr, b1=0.9, b2=0.99, eps=1e-8):
    def init(params):
        zeros = jax.tree.map(jnp.zeros_like, params)
        return {"m": zeros, "v": zeros, "t": jnp.zeros((), jnp.int32)}

    def update(grads, state, params):
        t = state["t"] + 1
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
        step = lr * jnp.sqrt(1 - b2**t) / (1 - b1**t)
        params = jax.tree.map(lambda p, m, v: p - step * m / (jnp.sqrt(v) + eps), params, m, v)
        return params, {"m": m, "v": v, "t": t}

    return init, update


def setup(small=False, seed=0):
    """The sizes, the corpus, the parameters, Adam's state and the jitted training step."""
    vocab, length, batch_size = (32, 16, 16) if small else (64, 32, 32)
    width, heads, layers = (32, 2, 2) if small else (64, 4, 4)
    key_corpus, key_params = jax.random.split(jax.random.key(seed))
    corpus = make_corpus(key_corpus, 4096, length + 1, vocab)
    params = init_params(key_params, vocab, length, width, heads, layers)
    count = sum(x.size for x in jax.tree.leaves(params))
    print(f"transformer: {layers} layers, width {width}, {count:,} parameters, vocab {vocab}")
    opt_init, opt_update = adam(1e-2 if small else 3e-3)

    @jax.jit
    def train_step(params, opt_state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, batch)
        params, opt_state = opt_update(grads, opt_state, params)
        return params, opt_state, loss

    return (vocab, length, batch_size), corpus, params, opt_init(params), train_step


def main(small=False, steps=None, seed=0):
    steps = steps or (150 if small else 300)
    (vocab, length, batch_size), corpus, params, opt_state, train_step = setup(small, seed)
    rng = np.random.default_rng(seed)
    losses = []
    start = time.perf_counter()
    report_every = max(steps // 10, 1)
    for step in range(1, steps + 1):
        batch = corpus[rng.integers(0, corpus.shape[0], batch_size)]
        params, opt_state, loss = train_step(params, opt_state, batch)
        if step == 1:  # the first step includes tracing and compiling
            losses.append(float(loss))
            compiled = time.perf_counter() - start
            print(f"step {step:4d}  loss {losses[-1]:.4f}  (compiled in {compiled:.1f} s)")
            start = time.perf_counter()
        elif step % report_every == 0 or step == steps:
            losses.append(float(loss))
            rate = (step - 1) * batch_size * length / (time.perf_counter() - start)
            print(f"step {step:4d}  loss {losses[-1]:.4f}  {rate:,.0f} tokens/s", flush=True)
    # greedy continuation of prompts: do they keep counting?
    half = length // 2
    tokens = generate(params, corpus[:8, :length], half)
    accuracy = float(jnp.mean(tokens[:, half:] == corpus[:8, half:length]))
    print(f"prompt {corpus[0, :half].tolist()} -> {tokens[0, half:].tolist()}")
    print(f"continuation accuracy {accuracy:.2f}; guessing loss {math.log(vocab):.3f}")
    assert losses[-1] < 0.5 * losses[0], losses
    assert small or accuracy > 0.9, accuracy
    print(f"ok: loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a tiny model, a few steps")
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    main(small=args.small, steps=args.steps)
