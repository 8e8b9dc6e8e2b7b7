"""lamina.shard_map with lamina.numpy inside, over 8 CPU devices, and
lamina.experimental.shard_map. The device count is fixed when the backend starts, so the
program runs in a subprocess."""

import json
import subprocess
import sys

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
print(json.dumps({k: v if k == "warning" else np.asarray(v).tolist() for k, v in out.items()}))
"""


def _run() -> dict:
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_shard_map_with_numpy():
    out = _run()
    x = np.arange(32.0, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(out["row_sums"], x.sum(1, keepdims=True))
    w = np.ones((8, 3), np.float32) * 0.01
    np.testing.assert_allclose(out["value"], np.tanh(x @ w).sum(), rtol=1e-5)
    want = x.T @ (1 - np.tanh(x @ w) ** 2)
    np.testing.assert_allclose(out["grad"], want, rtol=1e-5)
    # recorded from JAX 0.10.2: the column block's maximum over 'x'
    np.testing.assert_array_equal(out["pmax"], x[2:])
    assert out["warning"] == [
        "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map instead."
    ]
