"""A data-parallel training step with ``jax.shard_map`` on 8 CPU devices.

The batch is split over a one-dimensional mesh of 8 devices; each device computes the
loss of its shard, ``lax.pmean`` averages it across devices, and the gradient of that
average reaches every device's copy of the parameters summed over devices (shard_map's
default ``check_vma=True``), so every device applies the same update. The example checks that
a step gives the same parameters as the same step on one device over the whole batch,
and that training lowers the loss.

Runs unchanged on JAX with ``import jax`` in place of ``import lamina as jax``.

    uv run python examples/data_parallel.py [--small]
"""

import argparse
from functools import partial

import numpy as np

import lamina as jax

jax.config.update("jax_num_cpu_devices", 8)  # before the first use of a device

import lamina.numpy as jnp  # noqa: E402
from lamina import lax  # noqa: E402
from lamina.sharding import NamedSharding  # noqa: E402
from lamina.sharding import PartitionSpec as P  # noqa: E402


def init(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [
        (jax.random.normal(k, (m, n)) / np.sqrt(m), jnp.zeros(n))
        for k, m, n in zip(keys, sizes[:-1], sizes[1:], strict=True)
    ]


def loss_fn(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)


def sgd(params, grads, lr=0.1):
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def make_parallel_step(mesh):
    # The parameters are replicated (P()) and the batch split: inside the body the
    # parameters are invariant across 'data' and the loss varies. Averaging the loss
    # with pmean makes it invariant again, and differentiating through that (check_vma,
    # the default) sums the devices' gradient contributions: the gradient of the loss
    # over the whole batch, the same on every device, as out_specs=P() requires.
    specs = {"in_specs": (P(), P("data"), P("data")), "out_specs": (P(), P())}

    @jax.jit
    @partial(jax.shard_map, mesh=mesh, **specs)
    def step(params, x, y):
        def global_loss(params):
            return lax.pmean(loss_fn(params, x, y), axis_name="data")

        loss, grads = jax.value_and_grad(global_loss)(params)
        return sgd(params, grads), loss

    return step


@jax.jit
def single_device_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return sgd(params, grads), loss


def main(small=False, seed=0):
    batch, sizes, steps = (64, [4, 32, 1], 50) if small else (1024, [16, 256, 256, 1], 300)
    mesh = jax.make_mesh((8,), ("data",))
    print(f"{len(jax.devices())} devices, mesh {dict(mesh.shape)}")
    k_x, k_w, k_init = jax.random.split(jax.random.key(seed), 3)
    x = jax.random.normal(k_x, (batch, sizes[0]))
    y = jnp.sin(x @ jax.random.normal(k_w, (sizes[0], 1)))
    x, y = jax.device_put((x, y), NamedSharding(mesh, P("data")))
    print("batch shards:", [s.data.shape for s in x.addressable_shards][:3], "...")
    params = init(k_init, sizes)
    step = make_parallel_step(mesh)

    parallel_params, _ = step(params, x, y)
    reference_params, _ = single_device_step(params, np.asarray(x), np.asarray(y))
    for a, b in zip(*map(jax.tree.leaves, (parallel_params, reference_params)), strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)
    print("one parallel step == one single-device step over the whole batch")

    losses = []
    for i in range(steps):
        params, loss = step(params, x, y)
        losses.append(float(loss))
        if i % (steps // 5) == 0 or i == steps - 1:
            print(f"step {i:4d}  loss {losses[-1]:.5f}")
    assert losses[-1] < 0.5 * losses[0], (losses[0], losses[-1])
    print(f"ok: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    return losses[-1]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a smaller model and batch")
    main(small=parser.parse_args().small)
