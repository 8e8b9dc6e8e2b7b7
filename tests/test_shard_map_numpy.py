"""lamina.shard_map with lamina.numpy inside, over 8 CPU devices, and
lamina.experimental.shard_map. The device count is fixed when the backend starts, so the
program runs in a subprocess."""

import numpy as np

PROGRAM = r"""
import json
import warnings
import numpy as np
import lamina
lamina.config.update("jax_num_cpu_devices", 8)
import lamina.numpy as jnp
from lamina.sharding import Mesh, PartitionSpec as P

mesh = Mesh(np.array(lamina.devices()).reshape(2, 4), ("x", "y"))
x = jnp.arange(32.0).reshape(4, 8)
out = {}
row_sums = lambda a: lamina.lax.psum(jnp.sum(a, axis=1, keepdims=True), "y")
out["row_sums"] = lamina.shard_map(row_sums, mesh=mesh, in_specs=P("x", "y"),
                                   out_specs=P("x"))(x)

def loss(w):
    f = lamina.shard_map(lambda a, w: jnp.tanh(a @ w), mesh=mesh,
                         in_specs=(P("x", None), P()), out_specs=P("x"))
    return jnp.sum(f(x, w))

value, g = lamina.value_and_grad(loss)(jnp.ones((8, 3)) * 0.01)
out["value"], out["grad"] = value, g
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from lamina.experimental.shard_map import shard_map
out["warning"] = [str(w.message) for w in caught]
old = shard_map(lambda a: lamina.lax.pmax(a, "x"), mesh, P("x", "y"), P(None, "y"),
                check_rep=True)
out["pmax"] = old(x)

line = Mesh(np.array(lamina.devices()), ("d",))
dp_loss = lambda w, b: jnp.sum(jnp.tanh(b @ w) ** 2)
dp_step = lamina.shard_map(lambda w, b: lamina.grad(dp_loss)(w, b), mesh=line,
                           in_specs=(P(), P("d")), out_specs=P())
dp_w, dp_x = jnp.arange(12.0).reshape(3, 4) / 10, jnp.arange(48.0).reshape(16, 3) / 10
out["dp_grad"], out["dp_full"] = dp_step(dp_w, dp_x), lamina.grad(dp_loss)(dp_w, dp_x)
print(json.dumps({k: v if k == "warning" else np.asarray(v).tolist() for k, v in out.items()}))
"""


def test_shard_map_with_numpy(program_output):
    out = program_output("-c", PROGRAM)
    x = np.arange(32.0, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(out["row_sums"], x.sum(1, keepdims=True))
    w = np.ones((8, 3), np.float32) * 0.01
    np.testing.assert_allclose(out["value"], np.tanh(x @ w).sum(), rtol=1e-5)
    want = x.T @ (1 - np.tanh(x @ w) ** 2)
    np.testing.assert_allclose(out["grad"], want, rtol=1e-5)
    # recorded from JAX 0.10.2: the column block's maximum over 'x'
    np.testing.assert_array_equal(out["pmax"], x[2:])
    # recorded from JAX 0.10.2: a replicated parameter's gradient in a data-parallel
    # step (check_vma=True) sums the devices' gradients, so out_specs=P() holds it
    want = [
        [1.847407, 1.1349479, 0.7537525, 0.52722657],
        [2.1281548, 1.3611101, 0.94377774, 0.69171405],
        [2.4089026, 1.5872724, 1.133803, 0.85620147],
    ]
    np.testing.assert_allclose(out["dp_grad"], want, rtol=1e-5)
    np.testing.assert_allclose(out["dp_grad"], out["dp_full"], rtol=1e-5)
    assert out["warning"] == [
        "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map instead."
    ]
