"""Host callbacks (``jax.debug.print``, ``pure_callback``, ``io_callback``) inside
programs over several devices, as JAX 0.10.2 runs them: once, on the first device, in a
partitioned ``jit``; on every device, each with its block, in ``shard_map`` and ``pmap``.
Also the CPU device count from ``XLA_FLAGS``. The programs run in subprocesses (the
device count is fixed when the backend starts; the other root tests see one device)."""

import json
import os
import subprocess
import sys

import pytest

PROGRAM = r"""
import json
import numpy as np
import lamina as jax
import lamina.numpy as jnp
jax.config.update("jax_num_cpu_devices", 8)
from lamina.sharding import AxisType, NamedSharding, PartitionSpec as P

out = {}
mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
x = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("x")))

def printing(v):
    jax.debug.print("sum {s}", s=v.sum())
    return v * 2

out["jit_print"] = np.asarray(jax.jit(printing)(x)).tolist()
jax.effects_barrier()

def plus_one(v):
    y = jax.pure_callback(lambda a: np.asarray(a) + 1, jax.ShapeDtypeStruct(v.shape, v.dtype), v)
    return y * 2

out["jit_pure"] = np.asarray(jax.jit(plus_one)(x)).tolist()
seen = []

def logging(v):
    jax.experimental.io_callback(lambda a: seen.append(float(a)), None, v.sum())
    return v + 1

jax.jit(logging)(x).block_until_ready()
jax.effects_barrier()
out["jit_io"] = seen[:]
seen.clear()

def block_print(v):
    jax.debug.print("block {b}", b=v)
    return v * 2

jax.jit(jax.shard_map(block_print, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)
jax.effects_barrier()

def times_ten(v):
    like = jax.ShapeDtypeStruct(v.shape, v.dtype)
    return jax.pure_callback(lambda a: np.asarray(a) * 10, like, v)

tens = jax.jit(jax.shard_map(times_ten, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)
out["shmap_pure"] = np.asarray(tens).tolist()

def keep(v):
    jax.experimental.io_callback(lambda a: seen.append(np.asarray(a).tolist()), None, v)
    return v

jax.shard_map(keep, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x).block_until_ready()
jax.effects_barrier()
out["shmap_io"] = sorted(seen)
def per_device(v):
    jax.debug.print("dev {v}", v=v)
    return v

out["pmap"] = np.asarray(jax.pmap(per_device)(jnp.arange(8.0))).tolist()
jax.effects_barrier()
grid = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
try:
    jax.jit(jax.shard_map(times_ten, mesh=grid, in_specs=P("x"), out_specs=P("x"),
                          axis_names={"x"}))(jnp.arange(8.0))
except NotImplementedError as e:
    out["partial"] = str(e)
ordered = []

def in_order(v):
    jax.experimental.io_callback(lambda a: ordered.append(float(a)), None, v.sum(), ordered=True)
    return v + 1

step = jax.jit(in_order)
y = x
for _ in range(3):
    y = step(y)
y = jax.jit(in_order).lower(y).compile()(y)
jax.effects_barrier()
out["ordered_io"] = [ordered, np.asarray(y).tolist()[:3]]

def ordered_print(v):
    jax.debug.print("x {v}", v=v[0], ordered=True)
    return v

try:
    jax.jit(ordered_print)(x)
except ValueError as e:
    out["ordered_print"] = str(e)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def run():
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    return lines[:-1], json.loads(lines[-1])


def test_partitioned_jit_calls_back_once(run):
    printed, out = run
    # recorded from JAX 0.10.2: one call, with the whole value
    assert printed.count("sum 120.0") == 1
    assert out["jit_print"] == [2.0 * i for i in range(16)]
    assert out["jit_pure"] == [2.0 * (i + 1) for i in range(16)]
    assert out["jit_io"] == [120.0]


def test_shard_map_and_pmap_call_back_on_every_device(run):
    printed, out = run
    # recorded from JAX 0.10.2: each device with its own block
    blocks = sorted(line for line in printed if line.startswith("block"))
    assert blocks == sorted(f"block [{2 * i}. {2 * i + 1}.]" for i in range(8))
    assert out["shmap_pure"] == [10.0 * i for i in range(16)]
    assert out["shmap_io"] == [[2.0 * i, 2.0 * i + 1] for i in range(8)]
    devices = sorted(line for line in printed if line.startswith("dev"))
    assert devices == [f"dev {i}.0" for i in range(8)]
    assert out["pmap"] == [float(i) for i in range(8)]


def test_ordered_effects_over_several_devices(run):
    # recorded from JAX 0.10.2: ordered io_callback runs in order; an ordered print
    # is refused (JAX names the effect object)
    assert run[1]["ordered_io"] == [[120.0, 136.0, 152.0, 168.0], [4.0, 5.0, 6.0]]
    assert run[1]["ordered_print"] == (
        "The following ordered effects are not supported for more than 1 device: "
        "[OrderedDebugEffect]"
    )


def test_callbacks_in_partially_manual_shard_map_raise(run):
    # recorded from JAX 0.10.2
    assert run[1]["partial"] == (
        "callbacks are only supported in spmd computations when all mesh axes are "
        "partitioned manually (no partial automatic sharding)."
    )


def test_cpu_device_count_from_xla_flags():
    # As JAX 0.10.2: XLA_FLAGS sets the count unless jax_num_cpu_devices is set.
    program = (
        "import numpy as np, lamina as jax\n"
        "print(jax.device_count(), jax.pmap(lambda v: jax.lax.psum(v, 'i'), 'i')"
        "(np.arange(4.0)).tolist())\n"
    )
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["4", "[6.0,", "6.0,", "6.0,", "6.0]"]
    late = (
        "import os, lamina as jax\n"
        "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=3'\n"
        "print(jax.device_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", late], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.stdout.split() == ["3"]  # read when the backend starts, as chex sets it
    both = (
        "import lamina as jax\n"
        "jax.config.update('jax_num_cpu_devices', 6)\n"
        "print(jax.device_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", both], capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip
    assert done.stdout.split() == ["6"]
