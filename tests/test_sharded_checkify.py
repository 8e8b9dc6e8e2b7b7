"""checkify over pmap and shard_map on 8 CPU devices: each device's failure reported
at its mapped index, as JAX 0.10.2 does. Runs in a subprocess (the device count is
fixed when the backend starts; the other root tests see one device)."""

PROGRAM = r"""
import json
import numpy as np
import lamina as jax
import lamina.numpy as jnp
from lamina.experimental import checkify
jax.config.update("jax_num_cpu_devices", 8)
P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
out = {}

def f(v):
    checkify.check(jnp.all(v < 5), "too big {v}", v=v.sum())
    return jax.lax.pmean(v, "i") * 2

err, values = checkify.checkify(jax.pmap(f, axis_name="i"))(jnp.arange(8.0) + 3)
out["pmap"] = [err.get(), np.asarray(values).tolist()]
err, _ = checkify.checkify(jax.pmap(f, axis_name="i"))(jnp.arange(8.0) - 8)
out["pmap_ok"] = err.get()

def h(v):
    checkify.check(jnp.all(v < 5), "block {v}", v=v.sum())
    return v

g = checkify.checkify(jax.jit(jax.shard_map(h, mesh=mesh, in_specs=P("x"), out_specs=P("x"))))
out["shard_map"] = g(jnp.arange(16.0) - 10)[0].get()
print(json.dumps(out))
"""


def test_checkify_reports_each_device(program_output):
    out = program_output("-c", PROGRAM)
    # recorded from JAX 0.10.2
    failures = "\n".join(
        f"at mapped index {i}: too big {i + 3}.0 (`check` failed)" for i in range(2, 8)
    )
    assert out["pmap"] == [failures, [13.0] * 8]
    assert out["pmap_ok"] is None
    assert out["shard_map"] == "at mapped index 7: block 9.0 (`check` failed)"
