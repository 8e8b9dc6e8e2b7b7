"""Partitioned ``jit`` calls on 8 CPU devices, with jaxlib's ``GSPMDSharding`` (any
sharding following lamina's protocol would do); run in a subprocess by
test_partitioned_jit.py, it prints what it saw as JSON."""

import json
import re
import warnings

import numpy as np
from jaxlib import xla_client
from jit_prims import add, mul

from lamina.interpreters import config, device_put, devices, jit
from lamina.interpreters.runtime.executables import _executables

config.update("jax_num_cpu_devices", 8)
HloSharding = xla_client.HloSharding


def gspmd(text):
    return xla_client.GSPMDSharding(tuple(devices()), HloSharding.from_string(text))


def hlo(a):
    return str(a.sharding._to_xla_hlo_sharding(a.ndim))


tiled = gspmd("{devices=[4,2]<=[8]}")
rows = gspmd("{devices=[4,1,2]<=[8] last_tile_dim_replicate}")
everywhere = gspmd("{replicated}")
x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
out = {"devices": len(devices())}

f = jit(lambda a, b: (add(a, b), mul(a, b)), in_shardings=(tiled, everywhere),
        out_shardings=(rows, tiled))  # fmt: skip
text = f.lower(x, x).as_text()
out["lowered"] = re.findall(r'mhlo\.sharding = "([^"]*)"', text)
out["num_partitions"] = re.findall(r"mhlo.num_partitions = (\d+)", text)
first = f(x, x)
second = f(x, x)  # through jaxlib's C++ fast path
out["values"] = [np.asarray(o).tolist() for o in second]
out["out_hlo"] = [hlo(o) for o in first] + [hlo(o) for o in second]
out["shard_shapes"] = sorted({tuple(s.data.shape) for s in second[1].addressable_shards})
out["committed"] = [o._committed for o in second]

xs = device_put(x, tiled)
g = jit(lambda a: mul(a, a))
out["from_committed"] = hlo(g(xs))
out["from_committed_value"] = np.asarray(g(xs)).tolist()
out["eager"] = [hlo(add(xs, xs)), np.asarray(add(xs, xs)).tolist()]
add(xs, np.float32(1))
before = len(_executables)
for _ in range(3):
    add(xs, np.float32(1))  # an uncommitted operand is replicated: compiled once
out["eager_compiles"] = len(_executables) - before
out["by_sharding"] = [hlo(g(device_put(x, rows))), hlo(g(xs))]

d = jit(lambda a: add(a, a), in_shardings=tiled, out_shardings=tiled, donate_argnums=0)
xd = device_put(x, tiled)
with warnings.catch_warnings():
    warnings.simplefilter("error")
    od = d(xd)
out["donated"] = [xd.is_deleted(), float(np.asarray(od).sum())]


def error(name, fn):
    try:
        fn()
        out[name] = None
    except Exception as e:
        out[name] = [type(e).__name__, str(e)]


four = xla_client.GSPMDSharding(
    tuple(devices()[:4]), HloSharding.from_string("{devices=[4,1]<=[4]}")
)
pair = jit(lambda a, b: add(a, b))
error("incompatible", lambda: pair(device_put(x, four), xs))
error("mismatch", lambda: jit(lambda a: a, in_shardings=tiled)(device_put(x, rows)))
error("indivisible", lambda: jit(lambda a: a, in_shardings=tiled)(np.ones((3, 4), np.float32)))
print(json.dumps(out))
