"""pmap with lamina.numpy and lamina.random inside, over 8 CPU devices. The device
count is fixed when the backend starts, so the program runs in a subprocess."""

import numpy as np

PROGRAM = r"""
import json
import numpy as np
import lamina
lamina.interpreters.config.update("jax_num_cpu_devices", 8)
import lamina.numpy as jnp
from lamina import lax, random
from lamina.sharding.pmap import pmap

x = np.arange(16.0, dtype=np.float32).reshape(8, 2)
out = {}
out["sin_sum"] = pmap(lambda v: jnp.sum(jnp.sin(v)) + lax.psum(jnp.mean(v), "i"), "i")(x)

def loss(w, xb):
    return jnp.mean((xb @ w) ** 2)

w = np.ones((2, 3), np.float32)
xb = np.arange(48.0, dtype=np.float32).reshape(8, 3, 2)
step = lambda w, xb: lax.pmean(lamina.grad(loss)(w, xb), "i")
out["data_parallel_grad"] = pmap(step, "i", in_axes=(None, 0))(w, xb)
keys = random.split(random.key(0), 8)
out["uniform"] = pmap(lambda k: random.uniform(k, (2,)))(keys)
split = pmap(lambda k: random.split(k))(keys)
out["split_dtype"] = str(split.dtype)
out["split_shape"] = split.shape
print(json.dumps({k: np.asarray(v).tolist() if k != "split_dtype" else v
                  for k, v in out.items()}))
"""


def test_pmap_with_numpy_and_random(program_output):
    out = program_output("-c", PROGRAM)
    x = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    np.testing.assert_allclose(out["sin_sum"], np.sin(x).sum(1) + x.mean(1).sum(), rtol=1e-5)
    # The mean over devices of each device's gradient is the gradient over all data.
    w = np.ones((2, 3), np.float32)
    xb = np.arange(48.0, dtype=np.float32).reshape(8, 3, 2)
    grads = [2 * b.T @ (b @ w) / (b @ w).size for b in xb]
    np.testing.assert_allclose(out["data_parallel_grad"], [np.mean(grads, 0)] * 8, rtol=1e-5)
    # recorded from JAX 0.10.2: pmap(uniform)(split(key(0), 8))
    uniform = [
        [0.8423141241073608, 0.18237864971160889],
        [0.007293820381164551, 0.020891189575195312],
        [0.9024494886398315, 0.9122928380966187],
        [0.2669894695281982, 0.7339501380920410],
        [0.15365433692932129, 0.7290053367614746],
        [0.7380603551864624, 0.6253609657287598],
        [0.8776865005493164, 0.16588020324707031],
        [0.4750462770462036, 0.07194721698760986],
    ]
    np.testing.assert_allclose(out["uniform"], uniform, rtol=1e-6)
    assert out["split_dtype"] == "key<fry>"
    assert out["split_shape"] == [8, 2]
