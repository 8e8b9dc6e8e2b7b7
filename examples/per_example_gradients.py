"""Per-example gradients with ``jax.vmap(jax.grad(...))``, and a private training step.

For logistic regression the gradient of one example's loss has a closed form,
``(sigmoid(w . x + b) - y) * x``; the example checks ``vmap(grad)`` against it and
against the batch gradient (their mean). It then trains with differentially private
SGD: each example's gradient is clipped to a maximum norm before averaging, and noise
is added, which needs the gradients one by one.

Runs unchanged on JAX with ``import jax`` in place of ``import lamina as jax``.

    uv run python examples/per_example_gradients.py [--small]
"""

import argparse

import numpy as np

import lamina as jax
import lamina.numpy as jnp


def loss_fn(params, x, y):
    logit = x @ params["w"] + params["b"]
    return jnp.mean(jnp.logaddexp(0.0, logit) - y * logit)  # binary cross-entropy


per_example_grads = jax.jit(jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0)))


def clipped_noisy_mean(grads, key, clip, noise):
    """Clip each example's gradient to norm ``clip``, average, add Gaussian noise."""
    flat = jnp.concatenate([g.reshape(g.shape[0], -1) for g in jax.tree.leaves(grads)], axis=1)
    factor = jnp.minimum(1.0, clip / (jnp.linalg.norm(flat, axis=1) + 1e-12))
    leaves, treedef = jax.tree.flatten(grads)
    keys = jax.random.split(key, len(leaves))
    batch = flat.shape[0]
    mean = [
        jnp.tensordot(factor, g, axes=1) / batch
        + noise * clip / batch * jax.random.normal(k, g.shape[1:])
        for g, k in zip(leaves, keys, strict=True)
    ]
    return jax.tree.unflatten(treedef, mean)


@jax.jit
def private_step(params, key, x, y, lr=0.5, clip=1.0, noise=0.5):
    grads = jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))(params, x[:, None], y[:, None])
    update = clipped_noisy_mean(grads, key, clip, noise)
    return jax.tree.map(lambda p, g: p - lr * g, params, update)


def main(small=False, seed=0):
    n, dim, steps = (256, 8, 100) if small else (4096, 32, 500)
    k_data, k_w, k_train = jax.random.split(jax.random.key(seed), 3)
    x = jax.random.normal(k_data, (n, dim))
    true_w = jax.random.normal(k_w, (dim,))
    y = (x @ true_w > 0).astype(jnp.float32)
    params = {"w": jnp.zeros(dim), "b": jnp.float32(0.0)}

    probe = {"w": 0.1 * true_w, "b": jnp.float32(0.2)}
    grads = per_example_grads(probe, x[:, None], y[:, None])
    residual = jax.nn.sigmoid(x @ probe["w"] + probe["b"]) - y
    np.testing.assert_allclose(grads["w"], residual[:, None] * x, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads["b"], residual, rtol=1e-4, atol=1e-6)
    batch = jax.grad(loss_fn)(probe, x, y)
    np.testing.assert_allclose(grads["w"].mean(0), batch["w"], rtol=1e-4, atol=1e-6)
    print(f"{n} per-example gradients match the closed form; their mean is the batch gradient")
    norms = jnp.linalg.norm(grads["w"], axis=1)
    print(f"per-example gradient norms: min {float(norms.min()):.3f}, max {float(norms.max()):.3f}")

    start = float(loss_fn(params, x, y))
    for step, key in enumerate(jax.random.split(k_train, steps)):
        params = private_step(params, key, x, y)
        if (step + 1) % (steps // 4) == 0:
            print(f"private SGD step {step + 1:4d}  loss {float(loss_fn(params, x, y)):.4f}")
    final = float(loss_fn(params, x, y))
    accuracy = float(jnp.mean((x @ params["w"] + params["b"] > 0) == (y > 0)))
    print(f"loss {start:.4f} -> {final:.4f}, accuracy {accuracy:.3f}")
    assert final < 0.7 * start and accuracy > 0.85
    print("ok: closed form, batch mean, private training converges")
    return final, accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="fewer examples and steps")
    main(small=parser.parse_args().small)
