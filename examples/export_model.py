"""A trained model exported with ``jax.export``, saved as bytes and reloaded.

A small regression MLP is trained, then its prediction function is exported for a
batch dimension of any size (a symbolic shape) and serialized to bytes, as one would
write to a file and ship. The bytes are deserialized into a callable that needs none of
the Python code that defined the model; the example checks that it gives the original
function's results for several batch sizes, and that it can be differentiated (the
export keeps the VJP).

Runs unchanged on JAX with ``import jax`` in place of ``import lamina as jax``.

    uv run python examples/export_model.py [--small]
"""

import argparse

import numpy as np

import lamina as jax
import lamina.numpy as jnp
from lamina import export


def predict(params, x):
    for w, b in params[:-1]:
        x = jax.nn.gelu(x @ w + b)
    w, b = params[-1]
    return (x @ w + b)[:, 0]


def train(key, sizes, steps):
    keys = jax.random.split(key, len(sizes))
    params = [
        (jax.random.normal(k, (m, n)) / np.sqrt(m), jnp.zeros(n))
        for k, m, n in zip(keys[1:], sizes[:-1], sizes[1:], strict=True)
    ]
    x = jax.random.uniform(keys[0], (256, sizes[0]), minval=-1, maxval=1)
    y = jnp.sum(jnp.sin(3 * x), axis=1)

    @jax.jit
    def step(params):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean((predict(p, x) - y) ** 2))(params)
        return jax.tree.map(lambda p, g: p - 0.05 * g, params, grads), loss

    for i in range(steps):
        params, loss = step(params)
        if i == 0:
            first = float(loss)
    print(f"trained: loss {first:.4f} -> {float(loss):.4f}")
    assert float(loss) < first
    return params


def main(small=False, seed=0):
    sizes = [3, 16, 1] if small else [3, 64, 64, 1]
    params = train(jax.random.key(seed), sizes, 100 if small else 1000)

    # Export for any batch size: the parameters become constants of the program.
    (batch,) = export.symbolic_shape("batch")

    @jax.jit
    def model(x):
        return predict(params, x)

    exported = export.export(model)(jax.ShapeDtypeStruct((batch, 3), jnp.float32))
    blob = exported.serialize(vjp_order=1)
    print(f"exported {exported.fun_name}: {exported.in_avals} -> {exported.out_avals}")
    print(f"serialized to {len(blob):,} bytes; platforms {exported.platforms}")

    reloaded = export.deserialize(bytearray(blob))
    for n in (1, 7, 64):
        x = np.linspace(-1, 1, 3 * n, dtype=np.float32).reshape(n, 3)
        np.testing.assert_allclose(reloaded.call(x), predict(params, x), rtol=1e-5, atol=1e-6)
    print("reloaded model gives the original results for batches of 1, 7 and 64")

    x = np.full((2, 3), 0.3, np.float32)
    grad = jax.grad(lambda x: reloaded.call(x).sum())(x)
    np.testing.assert_allclose(grad, jax.grad(lambda x: predict(params, x).sum())(x), rtol=1e-5)
    print("ok: results and gradients of the reloaded model match")
    return len(blob)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a smaller model")
    main(small=parser.parse_args().small)
