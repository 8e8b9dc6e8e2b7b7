"""Benchmarks of programs that are large in one direction: a 1,000-leaf pytree argument,
a 12-layer transformer, a 10,000-step loop, a batched while loop.

    uv run python benchmarks/scaling.py [--jax-python PATH] [--repeats N] [--ops]

Each program is written once against the JAX API and runs with ``import lamina as jax``
and, given ``--jax-python`` (a Python with JAX 0.10.2, kept outside this repository),
with ``import jax``. Figures:

- ``pytree dispatch``: a jitted function summing the 1,000 (2,)-float32 leaves of a dict:
  the time per call (best of several runs of many calls, waited for at the end);
- ``transformer``: ``jit`` of an SGD training step of a 12-layer transformer (width 128,
  4 heads, MLP 512, sequence 64, batch 4, vocabulary 256, causal attention, layer norm,
  cross-entropy on the next token): its ``trace``, ``lower``, ``compile`` and first
  run, and their sum (the first call), after a small program went through the stages;
- ``fori_loop``: ``jit`` of a 10,000-step ``lax.fori_loop`` with a small body on (8,)
  float32: the steady-state call;
- ``vmap while``: ``jit(vmap(f))`` over 1,024 starting values where ``f`` runs a
  ``lax.while_loop`` (a Collatz-like count with a data-dependent number of steps): the
  first call (trace to result) and the steady-state call.

Each probe runs in a fresh subprocess; with ``--repeats N`` lamina's and JAX's runs
alternate N times and the best of each figure is shown.
"""

from __future__ import annotations

import importlib
import time

import harness
import numpy as np

LEAVES = 1000
LAYERS, WIDTH, HEADS, HIDDEN, LENGTH, BATCH, VOCAB = 12, 128, 4, 512, 64, 4, 256
FORI_STEPS = 10_000
VMAP_SIZE = 1024
PROBES = {
    "pytree": {"pytree dispatch (1000 leaves)": 0.5},
    "transformer": {
        "transformer: trace": 0.5,
        "transformer: lower": 0.5,
        "transformer: compile": 0.95,
        "transformer: first call": 0.95,
    },
    "fori": {"fori_loop 10k: step": 0.95},
    "vmap_while": {"vmap while: first call": 0.95, "vmap while: step": 0.95},
}


# --------------------------------------------------------------------------- programs


def pytree(jax):
    """A jitted sum of a 1,000-leaf dict, and that dict."""
    leaves = {f"p{i:04d}": jax.device_put(np.full(2, i, np.float32)) for i in range(LEAVES)}

    def total(tree):
        out = 0.0
        for leaf in tree.values():
            out = out + leaf
        return out

    return jax.jit(total), (leaves,)


def _transformer_loss(jax, params, tokens):
    jnp, nn = jax.numpy, jax.nn
    embed, layers = params["embed"], params["layers"]
    x = embed[tokens[:, :-1]]
    length = x.shape[1]
    mask = jnp.tril(jnp.ones((length, length), bool))

    def norm(h, scale):
        mean = h.mean(-1, keepdims=True)
        var = ((h - mean) ** 2).mean(-1, keepdims=True)
        return (h - mean) * jax.lax.rsqrt(var + 1e-5) * scale

    for layer in layers:
        h = norm(x, layer["ln1"])
        q, k, v = (
            (h @ layer[name]).reshape(h.shape[0], length, HEADS, -1) for name in ("wq", "wk", "wv")
        )
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
        scores = jnp.where(mask, scores, -1e9)
        attended = jnp.einsum("bhqk,bkhd->bqhd", nn.softmax(scores, axis=-1), v)
        x = x + attended.reshape(x.shape) @ layer["wo"]
        h = norm(x, layer["ln2"])
        x = x + nn.gelu(h @ layer["w1"]) @ layer["w2"]
    logits = x @ embed.T
    targets = nn.one_hot(tokens[:, 1:], embed.shape[0])
    return -(nn.log_softmax(logits) * targets).sum() / targets.shape[0]


def transformer(jax, layers=LAYERS, width=WIDTH, length=LENGTH):
    """``jit`` of an SGD step of the transformer, and its arguments."""
    importlib.import_module(f"{jax.__name__}.nn")
    rng = np.random.default_rng(0)

    def weight(*shape):
        return jax.device_put(rng.standard_normal(shape).astype(np.float32) / np.sqrt(shape[0]))

    params = {
        "embed": weight(VOCAB, width),
        "layers": [
            {
                **{name: weight(width, width) for name in ("wq", "wk", "wv", "wo")},
                "w1": weight(width, HIDDEN),
                "w2": weight(HIDDEN, width),
                "ln1": jax.device_put(np.ones(width, np.float32)),
                "ln2": jax.device_put(np.ones(width, np.float32)),
            }
            for _ in range(layers)
        ],
    }
    tokens = jax.device_put(rng.integers(0, VOCAB, (BATCH, length + 1)).astype(np.int32))

    def step(params, tokens):
        grads = jax.grad(lambda p: _transformer_loss(jax, p, tokens))(params)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

    return jax.jit(step), (params, tokens)


def fori(jax):
    """``jit`` of a 10,000-step ``fori_loop``, and its argument."""
    lax = jax.lax

    def run(x):
        return lax.fori_loop(0, FORI_STEPS, lambda i, v: v * 0.999 + lax.sin(v) * 1e-3, x)

    return jax.jit(run), (jax.device_put(np.linspace(0, 1, 8, dtype=np.float32)),)


def vmap_while(jax):
    """``jit(vmap)`` of a while loop with a data-dependent trip count, and its argument."""
    lax = jax.lax

    def steps(n):
        def body(carry):
            value, count = carry
            odd = lax.rem(value, 2) == 1
            return lax.select(odd, 3 * value + 1, value // 2), count + 1

        return lax.while_loop(lambda c: c[0] > 1, body, (n, 0))[1]

    start = jax.device_put(np.arange(1, VMAP_SIZE + 1, dtype=np.int32))
    return jax.jit(jax.vmap(steps)), (start,)


# --------------------------------------------------------------------------- probes


def probe_pytree(jax) -> dict[str, float]:
    jitted, (tree,) = pytree(jax)
    jax.block_until_ready(jitted(tree))
    best = float("inf")
    for _ in range(10):
        start = time.perf_counter()
        for _ in range(50):
            out = jitted(tree)
        best = min(best, (time.perf_counter() - start) / 50)
        jax.block_until_ready(out)
    return {"pytree dispatch (1000 leaves)": best}


def probe_transformer(jax) -> dict[str, float]:
    small, small_args = transformer(jax, layers=1, width=8, length=4)  # warm-up
    jax.block_until_ready(small.trace(*small_args).lower().compile()(*small_args))
    step, args = transformer(jax)
    start = time.perf_counter()
    traced = step.trace(*args)
    traced_at = time.perf_counter()
    lowered = traced.lower()
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    compiled_at = time.perf_counter()
    jax.block_until_ready(compiled(*args))
    ran_at = time.perf_counter()
    return {
        "transformer: trace": traced_at - start,
        "transformer: lower": lowered_at - traced_at,
        "transformer: compile": compiled_at - lowered_at,
        "transformer: first call": ran_at - start,
    }


def probe_fori(jax) -> dict[str, float]:
    jitted, args = fori(jax)
    jax.block_until_ready(jitted(*args))
    return {"fori_loop 10k: step": harness.best_per_call(jax, lambda: jitted(*args), 20)}


def probe_vmap_while(jax) -> dict[str, float]:
    jitted, args = vmap_while(jax)
    start = time.perf_counter()
    jax.block_until_ready(jitted(*args))
    first = time.perf_counter() - start
    return {
        "vmap while: first call": first,
        "vmap while: step": harness.best_per_call(jax, lambda: jitted(*args), 20),
    }


def probe_ops(jax) -> dict[str, dict[str, int]]:
    return {
        name: harness.count_ops(program.trace(*args).lower().as_text())
        for name, (program, args) in (
            ("transformer", transformer(jax)),
            ("fori_loop", fori(jax)),
            ("vmap while", vmap_while(jax)),
        )
    }


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=32)
