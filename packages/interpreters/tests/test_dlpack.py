"""DLPack export (``__dlpack__``) and import (``from_dlpack``), round trips with NumPy."""

import ml_dtypes
import numpy as np
import pytest

import lamina.interpreters as li
from lamina.interpreters.runtime.dlpack import DLDeviceType


def test_dlpack_device():
    assert li.device_put(np.ones(2)).__dlpack_device__() == (DLDeviceType.kDLCPU, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint16, np.bool_, np.complex64])
def test_numpy_reads_arrays_without_copying(dtype):
    x = li.device_put(np.arange(6).reshape(2, 3).astype(dtype))
    host = np.from_dlpack(x)
    assert host.dtype == dtype and host.shape == (2, 3)
    np.testing.assert_array_equal(host, np.asarray(x))
    assert host.ctypes.data == x.unsafe_buffer_pointer()


def test_copy_request_gives_new_memory():
    x = li.device_put(np.arange(4, dtype=np.float32))
    copied = np.from_dlpack(x, copy=True)
    assert copied.ctypes.data != x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(copied, [0, 1, 2, 3])


def test_numpy_cannot_take_bfloat16():
    # NumPy's DLPack import has no bfloat16 (the same happens with JAX).
    with pytest.raises((RuntimeError, BufferError, TypeError)):
        np.from_dlpack(li.device_put(np.ones(2, ml_dtypes.bfloat16)))


def _aligned(n: int) -> np.ndarray:
    raw = np.zeros(4 * n + 64, np.uint8)
    offset = (-raw.ctypes.data) % 64
    out = raw[offset : offset + 4 * n].view(np.float32)
    out[:] = np.arange(n)
    return out


def test_from_dlpack_shares_aligned_numpy_memory():
    host = _aligned(16)
    x = li.from_dlpack(host)
    assert repr(x) == repr(li.device_put(np.arange(16, dtype=np.float32)))
    assert not x.committed and x.devices() == {li.devices()[0]}
    assert x.unsafe_buffer_pointer() == host.ctypes.data
    unaligned = np.arange(17, dtype=np.float32)[1:]  # jaxlib copies what it cannot alias
    np.testing.assert_array_equal(np.asarray(li.from_dlpack(unaligned)), unaligned)


def test_round_trip_through_numpy():
    x = li.device_put(np.arange(12, dtype=np.int32).reshape(3, 4))
    host = np.from_dlpack(x)
    # NumPy will not export the read-only view it got (JAX fails the same way) ...
    with pytest.raises(BufferError, match="Cannot export readonly array"):
        li.from_dlpack(host)
    # ... but a writable copy goes back.
    y = li.from_dlpack(np.array(host))
    assert repr(y) == repr(x)


def test_from_dlpack_canonicalizes_without_x64():
    y = li.from_dlpack(np.arange(3, dtype=np.float64))
    assert y.dtype == np.float32
    with li.enable_x64():
        assert li.from_dlpack(np.arange(3, dtype=np.float64)).dtype == np.float64


def test_from_dlpack_onto_a_device_commits():
    y = li.from_dlpack(np.ones(3, np.float32), device=li.devices()[0])
    assert y.committed


def test_from_dlpack_needs_the_protocol():
    with pytest.raises(TypeError, match="must have __dlpack__ and __dlpack_device__"):
        li.from_dlpack([1, 2, 3])
