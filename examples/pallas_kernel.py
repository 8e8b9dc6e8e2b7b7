"""A Pallas kernel, run in interpret mode: a blocked matrix multiply fused with a
row-wise softmax.

``pl.pallas_call`` runs ``kernel`` once per block of the output over a grid; each
invocation reads its blocks of the inputs through ``BlockSpec``s (refs it loads with
``[...]``), computes with ``jax.numpy``, and stores its output block. The rows of a
block are complete, so the softmax of the product is computed in the kernel without a
second pass. ``interpret=True`` runs the kernel on any backend (here the CPU), as the
reference semantics of Pallas. The example checks the result against plain
``jax.numpy`` and NumPy.

Runs unchanged on JAX with ``import jax`` in place of ``import lamina as jax``.

    uv run python examples/pallas_kernel.py [--small]
"""

import argparse
import functools

import numpy as np

import lamina as jax
import lamina.numpy as jnp
from lamina.experimental import pallas as pl


def matmul_softmax_kernel(x_ref, y_ref, o_ref):
    """One block of rows: ``softmax(x_block @ y)`` along each row."""
    logits = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)
    logits = logits - jnp.max(logits, axis=1, keepdims=True)
    weights = jnp.exp(logits)
    o_ref[...] = (weights / jnp.sum(weights, axis=1, keepdims=True)).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames="block_rows")
def matmul_softmax(x, y, block_rows):
    m, k = x.shape
    _, n = y.shape
    return pl.pallas_call(
        matmul_softmax_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(m // block_rows,),
        in_specs=[
            pl.BlockSpec((block_rows, k), lambda i: (i, 0)),  # this block's rows of x
            pl.BlockSpec((k, n), lambda i: (0, 0)),  # all of y, for every block
        ],
        out_specs=pl.BlockSpec((block_rows, n), lambda i: (i, 0)),
        interpret=True,
    )(x, y)


def main(small=False, seed=0):
    m, k, n, block_rows = (32, 16, 8, 8) if small else (512, 128, 256, 64)
    kx, ky = jax.random.split(jax.random.key(seed))
    x = jax.random.normal(kx, (m, k), jnp.float32)
    y = jax.random.normal(ky, (k, n), jnp.float32)
    out = matmul_softmax(x, y, block_rows=block_rows)
    print(f"grid of {m // block_rows} blocks of {block_rows} rows: output {out.shape} {out.dtype}")

    np.testing.assert_allclose(out, jax.nn.softmax(x @ y, axis=1), rtol=1e-5, atol=1e-6)
    logits = np.asarray(x, np.float64) @ np.asarray(y, np.float64)
    expected = np.exp(logits - logits.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.sum(out, axis=1), 1.0, rtol=1e-5)
    print(f"row sums {float(out.sum(1).min()):.6f}..{float(out.sum(1).max()):.6f}")
    print("ok: the kernel matches jax.nn.softmax(x @ y) and NumPy")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="smaller matrices")
    main(small=parser.parse_args().small)
