"""multihost_utils in one process with 8 CPU devices; values and messages recorded from
JAX 0.10.2 (jax.experimental.multihost_utils). tests/test_distributed.py runs them
across two processes."""

import numpy as np
import pytest

from lamina.interpreters import device_put, devices
from lamina.sharding import Mesh, NamedSharding, PartitionSpec
from lamina.sharding import distributed as dist
from lamina.sharding import multihost_utils as mhu
from lamina.sharding.global_gather import gather_blocks


def same(actual, expected):
    assert type(actual) is np.ndarray and actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)


def test_gather_blocks_runs_an_all_gather_over_the_devices():
    blocks = {d: np.full((2,), 10 * i, np.float32) for i, d in enumerate(devices())}
    out = gather_blocks(blocks, (2,), np.float32)
    same(out, np.repeat(np.arange(0, 80, 10, dtype=np.float32), 2).reshape(8, 2))
    # Over a subset, in the order given.
    subset = devices()[5:1:-1]
    out = gather_blocks({d: blocks[d] for d in subset}, (2,), np.float32, subset)
    same(out, np.array([[50, 50], [40, 40], [30, 30], [20, 20]], np.float32))


def test_process_allgather_in_one_process():
    # Host values keep their dtype with one process (recorded: int64 stays int64).
    same(mhu.process_allgather(np.arange(3)), np.array([[0, 1, 2]]))
    same(mhu.process_allgather(np.arange(3), tiled=True), np.array([0, 1, 2]))
    same(mhu.process_allgather(5), np.array([5]))
    same(mhu.process_allgather(5, tiled=True), np.array(5))
    out = mhu.process_allgather([np.int64(3), True])
    same(out[0], np.array([3]))
    same(out[1], np.array([True]))
    same(mhu.process_allgather(device_put(np.ones(2, np.float32))), np.ones((1, 2), np.float32))


def test_broadcast_assert_sync_preemption_in_one_process():
    out = mhu.broadcast_one_to_all({"a": np.arange(3.0), "b": 7})
    same(out["a"], np.arange(3.0))
    same(out["b"], np.array(7))
    same(mhu.broadcast_one_to_all(np.float32(2), is_source=False), np.array(2, np.float32))
    mhu.assert_equal(np.arange(3), "m")
    mhu.sync_global_devices("x")
    assert mhu.reached_preemption_sync_point(3) is False
    assert not dist.is_initialized()


def test_host_local_and_global_arrays_in_one_process():
    mesh = Mesh(np.array(devices()).reshape(2, 4), ("a", "b"))
    specs = {"x": PartitionSpec("b"), "y": PartitionSpec()}
    local = {"x": np.arange(8.0).reshape(4, 2), "y": np.arange(4, dtype=np.int64)}
    g = mhu.host_local_array_to_global_array(local, mesh, specs)
    # recorded from JAX 0.10.2: canonical dtypes, the mesh's sharding, shards by "b"
    assert (g["x"].shape, g["x"].dtype, g["y"].dtype) == ((4, 2), np.float32, np.int32)
    assert g["x"].sharding == NamedSharding(mesh, PartitionSpec("b"))
    assert [(s.device.id, s.index) for s in g["x"].addressable_shards][:3] == [
        (0, (slice(0, 1), slice(None))),
        (1, (slice(1, 2), slice(None))),
        (2, (slice(2, 3), slice(None))),
    ]
    assert g["x"].is_fully_addressable
    np.testing.assert_array_equal(g["x"], local["x"])
    np.testing.assert_array_equal(g["y"], local["y"])
    back = mhu.global_array_to_host_local_array(g, mesh, specs)
    assert back["x"] is g["x"]  # already host-local
    same(mhu.process_allgather(g["x"], tiled=True), np.arange(8.0, dtype=np.float32).reshape(4, 2))
    same(mhu.process_allgather(g["x"]), np.arange(8.0, dtype=np.float32).reshape(1, 4, 2))
    # One spec for every leaf.
    g2 = mhu.host_local_array_to_global_array([np.zeros(4), np.ones(8)], mesh, PartitionSpec("b"))
    assert [x.sharding.spec for x in g2] == [PartitionSpec("b")] * 2


def test_errors_in_one_process():
    mesh = Mesh(np.array(devices()), ("x",))
    with pytest.raises(ValueError) as info:
        mhu.host_local_array_to_global_array(np.arange(4), mesh, None)
    assert str(info.value) == (
        "`None` is not a valid input to the pspecs argument. Please use "
        "jax.sharding.PartitionSpec() if you wanted to replicate your input."
    )
    with pytest.raises(RuntimeError) as info, mhu.live_devices(devices()):
        pass
    assert str(info.value) == "Distributed JAX not initialized."
