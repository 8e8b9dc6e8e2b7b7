"""Multi-device exports on 8 CPU devices, run in a subprocess by
test_sharded_export.py (the other export tests see one device): prints one JSON line
of what it saw."""

import json
from pathlib import Path

import numpy as np

from lamina import export
from lamina.interpreters import config, device_put, grad, jit
from lamina.lax import reduce_sum, sin
from lamina.sharding import NamedSharding, PartitionSpec, make_mesh, set_mesh

config.update("jax_num_cpu_devices", 8)
DATA = Path(__file__).parent / "data"
seen = {}
P = PartitionSpec
mesh = make_mesh((8,), ("x",))
row = NamedSharding(mesh, P("x"))
x = np.arange(16.0, dtype=np.float32)
y = np.linspace(-1, 1, 16).astype(np.float32)
f = jit(lambda a, b: a * 2 + b, in_shardings=(row, row), out_shardings=row)
xs, ys = device_put(x, row), device_put(y, row)

exp = export.export(f)(xs, ys)
text = exp.mlir_module()
seen["exported"] = {
    "nr_devices": exp.nr_devices,
    "in_shardings_hlo": [repr(s) for s in exp.in_shardings_hlo],
    "out_shardings_hlo": [repr(s) for s in exp.out_shardings_hlo],
    "in_named": [repr(s) for s in exp._in_named_shardings],
    "out_named": [repr(s) for s in exp._out_named_shardings],
    "in_on_mesh": [repr(s) for s in exp.in_shardings_jax(mesh)],
    "num_partitions": "mhlo.num_partitions = 8" in text,
    "arg_sharding": 'mhlo.sharding = "{devices=[8]<=[8]}"' in text,
}
out = exp.call(xs, ys)
seen["call"] = {"value": np.asarray(out).tolist(), "sharding": repr(out.sharding)}
seen["call_in_jit"] = np.asarray(jit(exp.call)(xs, ys)).tolist()
try:
    exp.call(x, y)  # arrays on one device
    seen["one_device"] = None
except ValueError as e:
    seen["one_device"] = str(e)

blob = bytes(exp.serialize())
back = export.deserialize(blob)
seen["round_trip"] = {
    "same_bytes": bytes(back.serialize()) == blob,
    "nr_devices": back.nr_devices,
    "in_shardings_hlo": [repr(s) for s in back.in_shardings_hlo],
    "out_shardings_hlo": [repr(s) for s in back.out_shardings_hlo],
    "in_named": [repr(s) for s in back._in_named_shardings],
    "value": np.asarray(back.call(xs, ys)).tolist(),
}

# the VJP: exported over the same devices, its arguments laid out as the primal's
# arguments and results
g = jit(lambda a, b: sin(a) * b, in_shardings=(row, row), out_shardings=row)
with_vjp = export.deserialize(export.export(g)(xs, ys).serialize(vjp_order=1))
vjp = with_vjp.vjp()
seen["vjp"] = {
    "nr_devices": vjp.nr_devices,
    "in_named": [repr(s) for s in vjp._in_named_shardings],
    "out_named": [repr(s) for s in vjp._out_named_shardings],
}
# the mesh in force: eagerly, as in JAX 0.10.2, grad's seed is laid out over it
with set_mesh(mesh):
    seen["vjp"]["grad"] = np.asarray(
        grad(lambda a: reduce_sum(with_vjp.call(a, ys), (0,)))(xs)
    ).tolist()

theirs_blob = (DATA / "jax_sharded_mlp.bin").read_bytes()
saved = np.load(DATA / "jax_sharded_mlp.npz")
theirs = export.deserialize(theirs_blob)
mesh42 = make_mesh((4, 2), ("x", "y"))
args = [device_put(saved[f"arg{i}"], s) for i, s in enumerate(theirs.in_shardings_jax(mesh42))]
outs = theirs.call(*args)
seen["jax_artifact"] = {
    "same_bytes": bytes(theirs.serialize()) == theirs_blob,
    "nr_devices": theirs.nr_devices,
    "in_shardings_hlo": [repr(s) for s in theirs.in_shardings_hlo],
    "out_shardings_hlo": [repr(s) for s in theirs.out_shardings_hlo],
    "in_named": [repr(s) for s in theirs._in_named_shardings],
    "close": [
        bool(np.allclose(np.asarray(o), saved[f"out{i}"], rtol=1e-6, atol=1e-6))
        for i, o in enumerate(outs)
    ],
    "close_in_jit": [
        bool(np.allclose(np.asarray(o), saved[f"out{i}"], rtol=1e-6, atol=1e-6))
        for i, o in enumerate(jit(theirs.call)(*args))
    ],
    "out_shardings": [repr(o.sharding) for o in outs],
}
print(json.dumps(seen))
