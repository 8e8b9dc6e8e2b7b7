"""The sharding protocol and ``SingleDeviceSharding``."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from jaxlib import xla_client

import lamina.interpreters as li


def test_single_device_sharding():
    device = li.devices()[0]
    s = li.SingleDeviceSharding(device)
    assert isinstance(s, li.Sharding) and type(s) is xla_client.SingleDeviceSharding
    assert repr(s) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    assert s.device_set == {device} and s._device_assignment == (device,)
    assert s.num_devices == 1 and s.memory_kind == "device"
    assert s.is_fully_replicated and s.is_fully_addressable and s.has_addressable_devices
    assert s.addressable_devices == {device}
    assert s.shard_shape((2, 3)) == (2, 3)
    assert s.devices_indices_map((2, 3)) == {device: (slice(None), slice(None))}
    assert s.addressable_devices_indices_map((4,)) == {device: (slice(None),)}
    assert s._to_xla_hlo_sharding(2).is_replicated()
    assert s == li.SingleDeviceSharding(device) and hash(s) == hash(li.SingleDeviceSharding(device))
    assert s != "cpu"
    assert s.is_equivalent_to(li.SingleDeviceSharding(device), 2)
    pinned = s.with_memory_kind("pinned_host")
    assert pinned.memory_kind == "pinned_host" and pinned != s
    assert repr(pinned) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=pinned_host)"


def test_unknown_memory_kind():
    with pytest.raises(ValueError, match="Could not find memory addressable by device cpu"):
        li.SingleDeviceSharding(li.devices()[0], memory_kind="bogus")


def test_protocol_methods_left_to_subclasses():
    class Incomplete(li.Sharding):
        pass

    s = Incomplete()
    for name in ["device_set", "is_fully_replicated", "num_devices", "memory_kind"]:
        with pytest.raises(NotImplementedError, match=f"Incomplete does not implement {name}"):
            getattr(s, name)
    with pytest.raises(NotImplementedError, match="_to_xla_hlo_sharding"):
        s._to_xla_hlo_sharding(1)


# A Python sharding following the protocol, as lamina-sharding's will: jaxlib's device
# put, result arrays and value reads all work through it.
PYTHON_SHARDINGS = """
import numpy as np
import lamina.interpreters as li
from jaxlib import xla_client as xc
li.config.update("jax_num_cpu_devices", 2)
d = li.devices()

class Replicated(li.Sharding):
    def __init__(self, devices):
        super().__init__()
        self._devices = tuple(devices)
        self._list = xc.DeviceList(self._devices)
    device_set = property(lambda s: set(s._devices))
    is_fully_replicated = property(lambda s: True)
    is_fully_addressable = property(lambda s: True)
    num_devices = property(lambda s: len(s._devices))
    memory_kind = property(lambda s: None)
    _device_assignment = property(lambda s: s._devices)
    _internal_device_list = property(lambda s: s._list)
    def _to_xla_hlo_sharding(self, ndim):
        return xc.HloSharding.replicate()

class SplitRows(Replicated):
    is_fully_replicated = property(lambda s: False)
    def _to_xla_hlo_sharding(self, ndim):
        return xc.HloSharding.iota_tile([2] + [1] * (ndim - 1))
    def devices_indices_map(self, shape):
        rest = (slice(None),) * (len(shape) - 1)
        half = shape[0] // 2
        return {self._devices[0]: (slice(0, half), *rest),
                self._devices[1]: (slice(half, None), *rest)}
    def shard_shape(self, shape):
        return (shape[0] // 2, *shape[1:])

r = li.device_put(np.arange(4, dtype=np.float32), Replicated(d))
print(repr(r), len(r.devices()), [s.replica_id for s in r.addressable_shards])
s = li.device_put(np.arange(8, dtype=np.int32).reshape(4, 2), SplitRows(d))
print(np.asarray(s).tolist(), [s_.data.tolist() for s_ in s.addressable_shards])
print([s_.index[0] for s_ in s.addressable_shards], [row.tolist() for row in s])
pieces = [li.device_put(np.full((2, 2), i, np.int32), d[i]) for i in (1, 0)]
t = li.ArrayImpl(s.aval, s.sharding, pieces, committed=True)
print(np.asarray(t).tolist())
try:
    li.ArrayImpl(s.aval, s.sharding, pieces[:1], committed=True)
except ValueError as e:
    print("error:", e)
"""


def test_python_shardings_follow_the_protocol():
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_FLAGS"))}
    clean["JAX_COMPILATION_CACHE_DIR"] = ""  # cache off, as in conftest.py
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PYTHON_SHARDINGS)],
        env=clean, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "Array([0., 1., 2., 3.], dtype=float32) 2 [0, 1]",
        "[[0, 1], [2, 3], [4, 5], [6, 7]] [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]",
        "[slice(0, 2, None), slice(2, None, None)] [[0, 1], [2, 3], [4, 5], [6, 7]]",
        "[[0, 0], [0, 0], [1, 1], [1, 1]]",
        "error: Expected 2 per-device arrays (this is how many devices are addressable by "
        "the sharding), but got 1",
    ]


def test_arrays_report_their_sharding():
    x = li.device_put(np.ones(3, np.float32))
    assert x.sharding is x._sharding and x.sharding.shard_shape(x.shape) == (3,)
    assert np.asarray(x).sum() == 3
