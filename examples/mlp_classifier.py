"""An MLP classifier trained with Adam written by hand (no optax) on generated data.

The data are two interleaved spirals of points in the plane, one per class, with some
noise. A two-hidden-layer MLP learns to tell them apart; the example checks that the
loss falls and that the accuracy on held-out points is high.

Runs unchanged on JAX with ``import jax`` in place of ``import lamina as jax``.

    uv run python examples/mlp_classifier.py [--small]
"""

import argparse

import lamina as jax
import lamina.numpy as jnp


def spirals(key, n):
    """``n`` points on each of two spirals, labelled 0 and 1."""
    k_radius, k_noise = jax.random.split(key)
    radius = jax.random.uniform(k_radius, (n,), minval=0.1, maxval=1.0)
    angle = 3 * jnp.pi * radius
    arm = jnp.stack([radius * jnp.cos(angle), radius * jnp.sin(angle)], axis=1)
    x = jnp.concatenate([arm, -arm]) + 0.03 * jax.random.normal(k_noise, (2 * n, 2))
    y = jnp.concatenate([jnp.zeros(n, jnp.int32), jnp.ones(n, jnp.int32)])
    return x, y


def init_mlp(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    init = jax.nn.initializers.he_normal()
    return [
        {"w": init(k, (fan_in, fan_out)), "b": jnp.zeros(fan_out)}
        for k, fan_in, fan_out in zip(keys, sizes[:-1], sizes[1:], strict=True)
    ]


def predict(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    log_probs = jax.nn.log_softmax(predict(params, x))
    return -jnp.mean(jnp.take_along_axis(log_probs, y[:, None], axis=1))


def adam_init(params):
    zeros = jax.tree.map(jnp.zeros_like, params)
    return zeros, zeros, jnp.zeros((), jnp.int32)


def adam_update(params, grads, state, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    m, v, t = state
    t += 1
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g**2, v, grads)
    m_hat = jax.tree.map(lambda m: m / (1 - b1**t), m)
    v_hat = jax.tree.map(lambda v: v / (1 - b2**t), v)
    params = jax.tree.map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + eps), params, m_hat, v_hat)
    return params, (m, v, t)


@jax.jit
def train_step(params, state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params, state = adam_update(params, grads, state)
    return params, state, loss


def accuracy(params, x, y):
    return float(jnp.mean(predict(params, x).argmax(axis=1) == y))


def main(small=False, seed=0):
    n, hidden, steps = (200, 32, 300) if small else (1000, 64, 1000)
    k_train, k_test, k_init = jax.random.split(jax.random.key(seed), 3)
    x, y = spirals(k_train, n)
    x_test, y_test = spirals(k_test, n)
    params = init_mlp(k_init, [2, hidden, hidden, 2])
    state = adam_init(params)
    losses = []
    for step in range(steps):
        params, state, loss = train_step(params, state, x, y)
        losses.append(float(loss))
        if step % (steps // 5) == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {losses[-1]:.4f}")
    train_acc, test_acc = accuracy(params, x, y), accuracy(params, x_test, y_test)
    print(f"accuracy: train {train_acc:.3f}, test {test_acc:.3f}")
    assert losses[-1] < 0.25 * losses[0], (losses[0], losses[-1])
    assert test_acc > 0.9, test_acc
    print(f"ok: loss {losses[0]:.4f} -> {losses[-1]:.4f}, test accuracy {test_acc:.3f}")
    return losses[-1], test_acc


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="fewer points and steps")
    main(small=parser.parse_args().small)
