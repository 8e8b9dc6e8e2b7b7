"""GPU benchmarks of issue 21: lamina beside JAX 0.10.2 on one CUDA GPU and jaxlib.

    python benchmarks/gpu.py [--jax-python PATH] [--repeats N]

Needs a CUDA device (jaxlib 0.10.2 with the jax-cuda13 or jax-cuda12 plugin) and exits
with a message otherwise; tools/gpu_check.sh sets up both libraries on a GPU machine
and runs it. Each program is written once against the JAX API and runs with
``import lamina as jax`` and, given ``--jax-python`` (a Python with JAX 0.10.2), with
``import jax``, each probe in a fresh subprocess (benchmarks/harness.py). Figures
(steady state: the best of several waited-for calls):

- ``dispatch``: a jitted ``x + 1`` on a scalar;
- ``matmul``: a 8192×8192 bfloat16 matmul;
- ``mlp``: an MLP training step (1024×4096×4096×1024 float32, batch 512, SGD) — the
  first call (trace, lower, compile, run) and the steady step;
- ``attention``: causal ``dot_product_attention`` forward and backward (batch 8, 2048
  tokens, 16 heads of 64, bfloat16);
- ``rnn``: ``jit(grad)`` of a tanh RNN run by ``lax.scan`` over 200 steps (hidden 512);
- ``linalg``: Cholesky solve (2048), SVD (512), eigh (1024) and QR (2048), float32;
- ``conv+fft``: a 3×3 convolution (32×128×128×64 NHWC, 64 features) then a 2-D FFT;
- ``random``: ``random.normal`` of 10⁸ float32 values.
"""

from __future__ import annotations

import importlib
import itertools
import sys
import time

import harness

PROBES = {
    "dispatch": {"dispatch: jit call": 1.0},
    "matmul": {"matmul bf16 8192: step": 1.0},
    "mlp": {"mlp: first call": 1.0, "mlp: step": 1.0},
    "attention": {"attention fwd+bwd: step": 1.0},
    "rnn": {"rnn grad: step": 1.0},
    "linalg": {
        "cholesky solve 2048": 1.0,
        "svd 512": 1.0,
        "eigh 1024": 1.0,
        "qr 2048": 1.0,
    },
    "conv_fft": {"conv+fft: step": 1.0},
    "random": {"random normal 1e8": 1.0},
}


def _np():
    import numpy as np

    return np


def _rng():
    return _np().random.default_rng(0)


def _gpu(jax):
    return next(d for d in jax.devices() if d.platform in ("gpu", "cuda"))


def _put(jax, *xs):
    return [jax.device_put(x, _gpu(jax)) for x in xs]


def probe_dispatch(jax) -> dict[str, float]:
    f = jax.jit(lambda x: x + 1)
    (x,) = _put(jax, _np().float32(1))
    jax.block_until_ready(f(x))
    return {"dispatch: jit call": harness.best_per_call(jax, lambda: f(x), 2000)}


def probe_matmul(jax) -> dict[str, float]:
    jnp = jax.numpy
    a, b = _put(jax, *(_rng().standard_normal((8192, 8192), _np().float32) for _ in range(2)))
    a, b = a.astype(jnp.bfloat16), b.astype(jnp.bfloat16)
    f = jax.jit(jnp.matmul)
    jax.block_until_ready(f(a, b))
    return {"matmul bf16 8192: step": harness.best_per_call(jax, lambda: f(a, b), 30)}


def _mlp(jax):
    jnp = jax.numpy
    np = _np()
    sizes = (1024, 4096, 4096, 1024)
    rng = _rng()
    params = [
        (rng.standard_normal((m, n), np.float32) / np.sqrt(m), np.zeros(n, np.float32))
        for m, n in itertools.pairwise(sizes)
    ]
    x = rng.standard_normal((512, sizes[0]), np.float32)
    y = rng.standard_normal((512, sizes[-1]), np.float32)

    def loss(params, x, y):
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = params[-1]
        return jnp.mean((x @ w + b - y) ** 2)

    @jax.jit
    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)

    return step, jax.device_put((params, x, y), _gpu(jax))


def probe_mlp(jax) -> dict[str, float]:
    step, (params, x, y) = _mlp(jax)
    start = time.perf_counter()
    jax.block_until_ready(step(params, x, y))
    first = time.perf_counter() - start
    return {
        "mlp: first call": first,
        "mlp: step": harness.best_per_call(jax, lambda: step(params, x, y), 50),
    }


def probe_attention(jax) -> dict[str, float]:
    jnp = jax.numpy
    q, k, v = _put(jax, *(_rng().standard_normal((8, 2048, 16, 64), _np().float32) for _ in "qkv"))
    q, k, v = (t.astype(jnp.bfloat16) for t in (q, k, v))

    def loss(q, k, v):
        out = jax.nn.dot_product_attention(q, k, v, is_causal=True)
        return jnp.sum(out.astype(jnp.float32) ** 2)

    f = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
    jax.block_until_ready(f(q, k, v))
    return {"attention fwd+bwd: step": harness.best_per_call(jax, lambda: f(q, k, v), 20)}


def probe_rnn(jax) -> dict[str, float]:
    lax, jnp = jax.lax, jax.numpy
    np = _np()
    rng = _rng()
    hidden, features, batch, steps = 512, 256, 64, 200
    params = (
        rng.standard_normal((hidden, hidden), np.float32) / np.sqrt(hidden),
        rng.standard_normal((features, hidden), np.float32) / np.sqrt(features),
        np.zeros(hidden, np.float32),
    )
    xs = rng.standard_normal((steps, batch, features), np.float32)
    params, xs = jax.device_put((params, xs), _gpu(jax))

    def loss(params, xs):
        w, u, b = params

        def cell(h, x):
            h = jnp.tanh(h @ w + x @ u + b)
            return h, h

        _, hs = lax.scan(cell, jnp.zeros((batch, hidden), np.float32), xs)
        return jnp.sum(hs**2)

    g = jax.jit(jax.grad(loss))
    jax.block_until_ready(g(params, xs))
    return {"rnn grad: step": harness.best_per_call(jax, lambda: g(params, xs), 20)}


def probe_linalg(jax) -> dict[str, float]:
    jnp = jax.numpy
    sl = importlib.import_module(f"{jax.__name__}.scipy.linalg")
    np = _np()
    rng = _rng()

    def spd(n):
        a = rng.standard_normal((n, n), np.float32)
        return a @ a.T + n * np.eye(n, dtype=np.float32)

    a2048, b = _put(jax, spd(2048), rng.standard_normal((2048, 16), np.float32))
    a512, a1024 = _put(jax, rng.standard_normal((512, 512), np.float32), spd(1024))
    (g2048,) = _put(jax, rng.standard_normal((2048, 2048), np.float32))
    programs = {
        "cholesky solve 2048": (
            jax.jit(lambda a, b: sl.cho_solve(sl.cho_factor(a), b)),
            (a2048, b),
        ),
        "svd 512": (jax.jit(jnp.linalg.svd), (a512,)),
        "eigh 1024": (jax.jit(jnp.linalg.eigh), (a1024,)),
        "qr 2048": (jax.jit(jnp.linalg.qr), (g2048,)),
    }
    figures = {}
    for name, (f, args) in programs.items():
        jax.block_until_ready(f(*args))
        figures[name] = harness.best_per_call(jax, lambda f=f, args=args: f(*args), 10)
    return figures


def probe_conv_fft(jax) -> dict[str, float]:
    lax, jnp = jax.lax, jax.numpy
    rng = _rng()
    np = _np()
    x, w = _put(
        jax,
        rng.standard_normal((32, 128, 128, 64), np.float32),
        rng.standard_normal((3, 3, 64, 64), np.float32) / 24,
    )

    def f(x, w):
        y = lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        return jnp.abs(jnp.fft.fft2(y, axes=(1, 2)))

    g = jax.jit(f)
    jax.block_until_ready(g(x, w))
    return {"conv+fft: step": harness.best_per_call(jax, lambda: g(x, w), 20)}


def probe_random(jax) -> dict[str, float]:
    key = jax.device_put(jax.random.key(0), _gpu(jax))
    f = jax.jit(lambda k: jax.random.normal(k, (100_000_000,)))
    jax.block_until_ready(f(key))
    return {"random normal 1e8": harness.best_per_call(jax, lambda: f(key), 20)}


def _has_gpu() -> bool:
    lamina = importlib.import_module("lamina")
    try:
        return any(d.client.platform == "cuda" for d in lamina.devices())
    except RuntimeError:
        return False


if __name__ == "__main__":
    if "--measure" not in sys.argv and not _has_gpu():
        sys.exit(
            "benchmarks/gpu.py needs a CUDA GPU (jaxlib 0.10.2 with jax-cuda13-plugin or "
            "jax-cuda12-plugin) and found none; on a GPU machine run tools/gpu_check.sh"
        )
    harness.main(__file__, __doc__, PROBES, globals(), width=28)
