"""One process of the two that tests/test_distributed.py launches:
``python distributed_worker.py PROCESS_ID COORDINATOR_ADDRESS``. Joins the run with 4 CPU
devices, exercises the global device set, multihost_utils, pmap, sharded jit and shard_map,
and prints its findings as one line ``RESULT <json>``."""

import json
import sys

import numpy as np

import lamina
import lamina.distributed
import lamina.numpy as jnp
from lamina import lax
from lamina.experimental import mesh_utils, multihost_utils
from lamina.sharding import Mesh, NamedSharding, PartitionSpec

pid, address = int(sys.argv[1]), sys.argv[2]
lamina.config.update("jax_num_cpu_devices", 4)
lamina.distributed.initialize(address, 2, pid, initialization_timeout=60)
r = {"initialized": lamina.distributed.is_initialized()}

r["devices"] = [[d.id, d.process_index] for d in lamina.devices()]
r["local"] = [d.id for d in lamina.local_devices()]
r["other"] = [d.id for d in lamina.local_devices(process_index=1 - pid)]
r["counts"] = [
    lamina.process_index(),
    lamina.process_count(),
    lamina.process_indices(),
    lamina.device_count(),
    lamina.local_device_count(),
]
r["mesh"] = [[d.id for d in row] for row in mesh_utils.create_device_mesh((2, 4))]
hybrid = mesh_utils.create_hybrid_device_mesh((2, 2), (2, 1), process_is_granule=True)
r["hybrid"] = [[d.id for d in row] for row in hybrid]

# A local computation still runs on this process's devices.
r["jit"] = float(lamina.jit(lambda x: x * 2 + 1)(np.float32(pid)))

# Data between the processes, through a compiled all-gather over all 8 devices.
gathered = multihost_utils.process_allgather(np.arange(3) + pid)
r["allgather"] = [gathered.tolist(), str(gathered.dtype)]
r["allgather_tiled"] = multihost_utils.process_allgather(np.float32(pid), tiled=True).tolist()
out = multihost_utils.broadcast_one_to_all({"a": np.arange(3.0) + pid})
r["broadcast"] = [out["a"].tolist(), str(out["a"].dtype)]
out = multihost_utils.broadcast_one_to_all(np.int32(pid + 5), is_source=pid == 1)
r["broadcast_from_1"] = [out.tolist(), type(out).__name__, str(out.dtype)]
try:
    multihost_utils.assert_equal(np.arange(2) + pid, "bad")
except AssertionError as e:
    r["assert_equal"] = str(e)
multihost_utils.sync_global_devices("done with the host values")

# A global array: 4 elements from each process, one per device.
mesh = Mesh(np.array(lamina.devices()), ("x",))
spec = PartitionSpec("x")
g = multihost_utils.host_local_array_to_global_array(np.arange(4.0) + 10 * pid, mesh, spec)
r["global"] = [list(g.shape), g.is_fully_addressable]
r["shards"] = [[s.device.id, s.index[0].start, float(s.data[0])] for s in g.addressable_shards]
local = multihost_utils.global_array_to_host_local_array(g, mesh, spec)
r["back"] = [list(local.shape), np.asarray(local).tolist()]
r["whole"] = multihost_utils.process_allgather(g, tiled=True).tolist()
try:
    multihost_utils.process_allgather(g)
except ValueError as e:
    r["untiled"] = str(e)
r["preemption"] = multihost_utils.reached_preemption_sync_point(1)

# pmap: each process maps its 4 values over its own devices; the program spans all 8.
x = np.arange(4.0) + 10 * pid
out = lamina.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(x)
r["pmap_psum"] = [list(out.shape), str(out.dtype), np.asarray(out).tolist()]
r["pmap_shards"] = [[s.device.id, s.index[0].start] for s in out.addressable_shards]
r["pmap_addressable"] = out.is_fully_addressable
out = lamina.pmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(x)
r["pmap_all_gather"] = [list(out.shape), np.asarray(out).tolist()]
out = lamina.pmap(lambda v: lax.axis_index("i"), axis_name="i")(x)
r["pmap_axis_index"] = np.asarray(out).tolist()
ring = [(j, (j + 1) % 8) for j in range(8)]
out = lamina.pmap(lambda v: lax.ppermute(v, "i", ring), axis_name="i")(x)
r["pmap_ppermute"] = np.asarray(out).tolist()
out = lamina.pmap(lambda v, w: v * w + lax.pmean(v, "i"), "i", in_axes=(0, None))(x, 2.0)
r["pmap_pmean"] = np.asarray(out).tolist()
local = lamina.pmap(lambda v: lax.psum(v, "i"), "i", devices=lamina.local_devices())(x)
r["pmap_local_devices"] = np.asarray(local).tolist()
try:
    lamina.pmap(lambda v: v)(np.arange(8.0))
except ValueError as e:
    r["pmap_too_many"] = type(e).__name__


def shards(a) -> list:
    """This process's blocks of ``a``: device id, where the block starts, its values."""
    return [
        [s.device.id, s.index[0].start, np.asarray(s.data).tolist()] for s in a.addressable_shards
    ]


# Sharded jit over all 8 devices: process p holds [10p, 10p+1, 10p+2, 10p+3].
by_x = NamedSharding(mesh, spec)
g = lamina.make_array_from_process_local_data(by_x, np.arange(4.0) + 10 * pid)
r["spmd_global"] = [list(g.shape), g.is_fully_addressable, g.sharding.spec == spec]
r["spmd_input_shards"] = shards(g)
singles = [
    lamina.device_put(np.float32([10 * pid + i, -i]), d)
    for i, d in enumerate(lamina.local_devices())
]
pairs = lamina.make_array_from_single_device_arrays((16,), by_x, singles)
r["spmd_singles"] = [
    list(pairs.shape),
    [np.asarray(s.data).tolist() for s in pairs.addressable_shards],
]
out = lamina.jit(lambda x: x.sum())(g)
r["spmd_sum"] = [list(out.shape), str(out.dtype), out.is_fully_replicated, float(out)]
r["spmd_sum16"] = float(lamina.jit(lambda x: (x * x).sum())(pairs))
out = lamina.jit(lambda x: x * 2, out_shardings=by_x)(g)
r["spmd_double"] = [list(out.shape), out.is_fully_addressable, shards(out)]
out = lamina.jit(jnp.cumsum, out_shardings=NamedSharding(mesh, PartitionSpec()))(g)
r["spmd_cumsum"] = [list(out.shape), out.is_fully_replicated, [s[::2] for s in shards(out)]]

# The same over a 2 x 4 mesh: dimension 0 split within each process, 1 across them.
mesh2 = Mesh(np.array(lamina.devices()).reshape(2, 4), ("p", "d"))
block = np.arange(12.0).reshape(4, 3) + 100 * pid
h = lamina.make_array_from_process_local_data(NamedSharding(mesh2, PartitionSpec("d", "p")), block)
out = lamina.jit(lambda x: x.sum(0), out_shardings=NamedSharding(mesh2, PartitionSpec()))(h)
starts = [[s.index[0].start, s.index[1].start] for s in h.addressable_shards]
r["spmd_2d"] = [list(h.shape), starts, np.asarray(out).tolist()]

# shard_map: collectives across the 8 devices of both processes.
out = lamina.shard_map(
    lambda x: lax.psum(x, "x"), mesh=mesh, in_specs=spec, out_specs=PartitionSpec()
)(g)
r["spmd_psum"] = [
    list(out.shape),
    out.is_fully_replicated,
    [np.asarray(s.data).tolist() for s in out.addressable_shards],
]
gather = lamina.shard_map(
    lambda x: lax.all_gather(x, "x", tiled=True), mesh=mesh, in_specs=spec, out_specs=spec
)
out = gather(g)
r["spmd_all_gather"] = [list(out.shape), [s[1:] for s in shards(out)]]
gather = lamina.shard_map(
    lambda x: lax.all_gather(x, "x") * 1, mesh=mesh, in_specs=spec, out_specs=spec
)
out = lamina.jit(gather)(pairs)
r["spmd_all_gather_untiled"] = [list(out.shape), [s[1:] for s in shards(out)[:2]]]

lamina.distributed.shutdown()
r["after_shutdown"] = lamina.distributed.is_initialized()
print("RESULT " + json.dumps(r), flush=True)
