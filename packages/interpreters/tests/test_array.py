"""``Array`` properties, conversions and their errors, iteration, pickling, deletion.
Expected errors and messages are JAX 0.10.2's."""

import pickle
import weakref

import ml_dtypes
import numpy as np
import pytest

import lamina.interpreters as li
from lamina.interpreters.runtime.transfer import device_put_value

vector = lambda: li.device_put(np.array([1.0, 2.0], np.float32))  # noqa: E731
scalar = lambda: li.device_put(np.float32(2.5))  # noqa: E731
integer = lambda: li.device_put(np.int32(3))  # noqa: E731
matrix = lambda: li.device_put(np.arange(6, dtype=np.int32).reshape(2, 3))  # noqa: E731


def test_isinstance_and_type():
    x = vector()
    assert isinstance(x, li.Array)
    assert isinstance(x, li.ArrayImpl)
    assert type(x) is li.ArrayImpl
    assert not isinstance(np.ones(2), li.Array)
    assert not isinstance(1.0, li.Array)
    assert li.Array.__module__ == "lamina"


def test_properties():
    x, m = vector(), matrix()
    assert (x.shape, x.dtype, x.ndim, x.size, x.nbytes) == ((2,), np.float32, 1, 2, 8)
    assert (m.shape, m.dtype, m.ndim, m.size, m.nbytes) == ((2, 3), np.int32, 2, 6, 24)
    s = scalar()
    assert (s.shape, s.ndim, s.size) == ((), 0, 1)
    assert li.device_put(np.zeros(3, ml_dtypes.int4)).nbytes == 3
    assert not x.weak_type and li.device_put(1.0).weak_type
    assert x.is_fully_addressable and x.is_fully_replicated
    assert not x.committed
    assert x.block_until_ready() is x
    assert x.is_ready()
    assert x.platform() == "cpu"
    assert x.on_device_size_in_bytes() == 8


def test_devices_sharding_and_shards():
    x = vector()
    device = li.devices()[0]
    assert x.devices() == {device}
    assert x.device == device
    assert x.sharding == li.SingleDeviceSharding(device)
    assert repr(x.sharding) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    (shard,) = x.addressable_shards
    assert shard.device == device
    assert shard.index == (slice(None),)
    assert shard.replica_id == 0
    assert repr(shard.data) == "Array([1., 2.], dtype=float32)"
    assert repr(shard) == (
        "Shard(device=CpuDevice(id=0), index=(slice(None, None, None),), replica_id=0, "
        "data=[1. 2.])"
    )
    assert matrix().addressable_shards[0].index == (slice(None), slice(None))
    assert repr(x.addressable_data(0)) == "Array([1., 2.], dtype=float32)"
    assert x.global_shards[0].device == device


def test_array_protocol_is_zero_copy_on_cpu():
    x = li.device_put(np.arange(1000, dtype=np.float32))
    view = np.asarray(x)
    assert view.ctypes.data == x.unsafe_buffer_pointer()  # no copy
    assert not view.flags.writeable
    np.testing.assert_array_equal(view, np.arange(1000, dtype=np.float32))
    assert np.array(x).flags.writeable  # np.array copies
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(x.__array__(copy=False), view)


def test_item_tolist_tobytes():
    assert scalar().item() == 2.5
    assert vector().item(1) == 2.0
    with pytest.raises(ValueError, match="can only convert an array of size 1"):
        vector().item()
    assert matrix().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert scalar().tolist() == 2.5
    assert vector().tobytes() == np.array([1.0, 2.0], np.float32).tobytes()


def test_scalar_conversions():
    s = scalar()
    assert (float(s), int(s), bool(s), complex(s)) == (2.5, 2, True, 2.5 + 0j)
    i = integer()
    assert i.__index__() == 3 and hex(i) == "0x3" and list(range(i)) == [0, 1, 2]
    assert bool(li.device_put(np.array([1.5], np.float32)))
    assert not bool(li.device_put(0))


@pytest.mark.parametrize("convert", [float, int, complex])
def test_non_scalar_conversion_errors(convert):
    msg = "Only scalar arrays can be converted to Python scalars; got arr.ndim=1"
    with pytest.raises(TypeError, match=msg):
        convert(vector())
    with pytest.raises(TypeError, match=r"got arr\.ndim=2"):
        convert(matrix())


def test_bool_and_index_errors():
    with pytest.raises(ValueError, match=r"more than one element is ambiguous\. Use a\.any"):
        bool(vector())
    with pytest.raises(ValueError, match="truth value of an empty array is ambiguous"):
        bool(li.device_put(np.zeros(0, np.float32)))
    msg = "Only integer scalar arrays can be converted to a scalar index."
    with pytest.raises(TypeError, match=msg):
        scalar().__index__()
    with pytest.raises(TypeError, match=msg):
        vector().__index__()
    with pytest.raises(TypeError, match=msg):
        li.device_put(True).__index__()


def test_len_and_iteration():
    assert len(vector()) == 2 and len(matrix()) == 2
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(scalar())
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(scalar())
    rows = list(matrix())
    assert [repr(r) for r in rows] == [
        "Array([0, 1, 2], dtype=int32)",
        "Array([3, 4, 5], dtype=int32)",
    ]
    assert all(isinstance(r, li.ArrayImpl) and not r.committed for r in rows)
    assert [repr(e) for e in vector()] == [
        "Array(1., dtype=float32)",
        "Array(2., dtype=float32)",
    ]
    weak = list(device_put_value(np.array([1, 2], np.int32), weak_type=True))
    assert all(r.weak_type for r in weak)


def test_iterating_more_rows_than_one_chunk():
    x = li.device_put(np.arange(250 * 2, dtype=np.float32).reshape(250, 2))
    rows = list(x)
    assert len(rows) == 250
    np.testing.assert_array_equal(np.stack([np.asarray(r) for r in rows]), np.asarray(x))


def test_hash_and_weakref():
    with pytest.raises(TypeError, match="unhashable type"):
        hash(vector())
    x = vector()
    assert weakref.ref(x)() is x
    assert li.ArrayImpl.__array_priority__ == 100


@pytest.mark.parametrize(
    "value",
    [np.array([1.0, 2.0], np.float32), 1.0, 3, np.arange(6).reshape(2, 3), np.bool_(False)],
)
def test_pickle_round_trip(value):
    x = li.device_put(value)
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is li.ArrayImpl
    assert (y.shape, y.dtype, y.weak_type) == (x.shape, x.dtype, x.weak_type)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    assert repr(y) == repr(x)


def test_deleted_array():
    x = li.device_put(np.ones(3, np.float32))
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted()
    x.delete()  # deleting twice is fine
    msg = "Array has been deleted with shape=float32\\[3\\]."
    uses = [
        repr, str, np.asarray, pickle.dumps, np.from_dlpack, list,
        lambda a: a.devices(), lambda a: a.addressable_shards, lambda a: a.item(),
        lambda a: a.copy_to_host_async(), lambda a: li.device_put(a, li.devices()[0]),
    ]  # fmt: skip
    for use in uses:
        with pytest.raises(RuntimeError, match=msg):
            use(x)
    with pytest.raises(RuntimeError, match="deleted or donated buffer"):
        x.block_until_ready()
    assert x.shape == (3,) and len(x) == 3  # metadata outlives the buffer
    assert repr(x.sharding).startswith("SingleDeviceSharding(")


def test_copy_to_host_async_then_read():
    x = vector()
    assert x.copy_to_host_async() is None
    np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])


def test_operator_extension_point():
    li.set_array_attribute("_lamina_test_double", lambda self: np.asarray(self) * 2)
    try:
        np.testing.assert_array_equal(vector()._lamina_test_double(), [2.0, 4.0])
    finally:
        delattr(li.ArrayImpl, "_lamina_test_double")


def test_registered_tracer_class_counts_as_array():
    class FakeTracer:
        def __init__(self, is_array):
            self.is_array = is_array

        def _is_traced_array(self):
            return self.is_array

    li.register_tracer_class(FakeTracer)
    try:
        assert isinstance(FakeTracer(True), li.Array)
        assert not isinstance(FakeTracer(False), li.Array)
        assert not isinstance(FakeTracer(True), li.ArrayImpl)
    finally:
        li.register_tracer_class(type("NoTracer", (), {}))  # jaxlib cannot unset it
    assert not isinstance(FakeTracer(True), li.Array)
