"""make_array_from_callback / _single_device_arrays / _process_local_data, against
NumPy and messages recorded from JAX 0.10.2."""

import numpy as np
import pytest

from lamina.interpreters import device_put, devices
from lamina.sharding import (
    NamedSharding,
    P,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
)

MESH = make_mesh((4, 2), ("x", "y"))
S = NamedSharding(MESH, P("x"))
X = np.arange(32.0, dtype=np.float32).reshape(8, 4)


def _blocks(sharding, x):
    return [
        device_put(x[i], d) for d, i in sharding.addressable_devices_indices_map(x.shape).items()
    ]


def test_from_callback():
    seen = []

    def block(index):
        seen.append(index)
        return X[index]

    a = make_array_from_callback((8, 4), S, block)
    assert a.sharding == S and a.shape == (8, 4) and a.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(a), X)
    assert seen == list(S.devices_indices_map((8, 4)).values())
    # recorded from JAX 0.10.2: the callback's float64 becomes float32
    b = make_array_from_callback((8, 4), S, lambda i: X[i].astype(np.float64))
    assert b.dtype == np.float32
    c = make_array_from_callback((8, 4), NamedSharding(MESH, P("x", "y")), lambda i: X[i])
    for shard in c.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), X[shard.index])


def test_from_callback_errors():
    # messages recorded from JAX 0.10.2 (JAX writes the shape as float32[8@x,4])
    with pytest.raises(
        ValueError,
        match=r"Expected shard shape \(2, 4\) doesn't match the single device array shape "
        r"\(1, 4\)\. Shape of Array is float32\[8,4\] with sharding NamedSharding",
    ):
        make_array_from_callback((8, 4), S, lambda i: X[i][:1])
    with pytest.raises(ValueError, match=r"single device array shape \(\)"):
        make_array_from_callback((8, 4), S, lambda i: np.float32(1))
    with pytest.raises(
        ValueError,
        match=r"If `dtype` is provided to `jax.make_array_from_callback`, it must match the "
        r"dtype of the addressable shards\. Got dtype=int32 and shard dtype=float32`\.",
    ):
        make_array_from_callback((8, 4), S, lambda i: X[i], dtype=np.int32)


def test_from_single_device_arrays():
    blocks = _blocks(S, X)
    a = make_array_from_single_device_arrays((8, 4), S, blocks[::-1])  # any order
    assert a.sharding == S
    np.testing.assert_array_equal(np.asarray(a), X)
    assert [s.device for s in a.addressable_shards] == devices()
    ints = make_array_from_single_device_arrays((8, 4), S, _blocks(S, X.astype(np.int32)))
    assert ints.dtype == np.int32


def test_from_single_device_arrays_errors():
    blocks = _blocks(S, X)
    # messages recorded from JAX 0.10.2
    with pytest.raises(
        ValueError,
        match=r"Expected 8 per-device arrays \(this is how many devices are addressable by "
        r"the sharding\), but got 3",
    ):
        make_array_from_single_device_arrays((8, 4), S, blocks[:3])
    with pytest.raises(ValueError, match=r"Expected shard shape \(2, 5\) doesn't match"):
        make_array_from_single_device_arrays((8, 5), S, blocks)
    with pytest.raises(
        ValueError,
        match=r"the input arrays must be from distinct devices, but got device IDs "
        r"\[0, 0, 0, 0, 0, 0, 0, 0\]",
    ):
        make_array_from_single_device_arrays((8, 4), S, [blocks[0]] * 8)
    with pytest.raises(ValueError, match="If the Array has no addressable shards, `dtype`"):
        make_array_from_single_device_arrays((8, 4), S, [])


def test_devices_missing_from_the_sharding():
    half = NamedSharding(make_mesh((4,), ("x",), devices=devices()[:4]), P("x"))
    x = np.arange(8.0, dtype=np.float32)
    elsewhere = [device_put(x[2 * i : 2 * i + 2], devices()[4 + i]) for i in range(4)]
    # recorded from JAX 0.10.2
    with pytest.raises(
        ValueError,
        match=r"Addressable devices and per-device arrays devices do not match\. Sharding "
        r"contains devices \{0, 1, 2, 3\} that are not present in per-device arrays\. "
        r"Per-device arrays contain devices \{4, 5, 6, 7\} that are not present in the "
        r"sharding\.",
    ):
        make_array_from_single_device_arrays((8,), half, elsewhere)


def test_from_process_local_data():
    a = make_array_from_process_local_data(S, X)
    assert a.sharding == S and a.shape == (8, 4)
    np.testing.assert_array_equal(np.asarray(a), X)
    b = make_array_from_process_local_data(S, X, (8, 4))
    np.testing.assert_array_equal(np.asarray(b), X)
    # messages recorded from JAX 0.10.2
    with pytest.raises(
        ValueError,
        match=r"global_shape should be None or equal to local_data\.shape\.Got "
        r"global_shape=\(16, 4\) and local_data\.shape=\(8, 4\)\.",
    ):
        make_array_from_process_local_data(S, X, (16, 4))
    with pytest.raises(ValueError, match="implies that array axis 0 is partitioned 4 times"):
        make_array_from_process_local_data(S, X[:6])
