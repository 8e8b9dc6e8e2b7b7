"""device_put / device_get / block_until_ready / live_arrays, against NumPy and JAX
0.10.2's recorded behaviour (dtypes with x64 on and off, weak types, errors)."""

import ml_dtypes
import numpy as np
import pytest

import lamina.interpreters as li
from lamina.ir import dtypes

# Every dtype jaxlib can hold (JAX 0.10.2 rejects the float6 types the same way).
STORABLE = [dt for dt in dtypes.ALL_DTYPES if dt.name not in ("float6_e2m3fn", "float6_e3m2fn")]
WIDE_TO_NARROW = {"int64": "int32", "uint64": "uint32", "float64": "float32",
                  "complex128": "complex64"}  # fmt: skip


def _sample(dt: np.dtype) -> np.ndarray:
    if dt.kind == "c":
        return np.array([1 + 2j, -3.5, 0], dt)
    if dt.kind == "b":
        return np.array([True, False, True])
    return np.array([1, 0, 1, 1], dt)


@pytest.mark.parametrize("dt", STORABLE, ids=str)
@pytest.mark.parametrize("x64", [False, True])
def test_device_put_every_dtype(dt, x64):
    host = _sample(dt)
    with li.enable_x64(x64):
        x = li.device_put(host)
    expected = dt if x64 else np.dtype(WIDE_TO_NARROW.get(dt.name, dt.name))
    assert x.dtype == expected and x.shape == host.shape and not x.weak_type
    assert np.asarray(x).tobytes() == host.astype(expected).tobytes()  # NaN-safe equality


@pytest.mark.parametrize(
    ("value", "x64", "dtype", "weak"),
    [
        (1.5, False, "float32", True),
        (1.5, True, "float64", True),
        (3, False, "int32", True),
        (3, True, "int64", True),
        (1 + 2j, False, "complex64", True),
        (1 + 2j, True, "complex128", True),
        (True, False, "bool", False),
        (np.float64(2.5), False, "float32", False),
        (np.float64(2.5), True, "float64", False),
        (np.int64(7), False, "int32", False),
        (np.float32(2.5), True, "float32", False),
        (np.uint64(2), False, "uint32", False),
    ],
)
def test_device_put_scalars(value, x64, dtype, weak):
    with li.enable_x64(x64):
        x = li.device_put(value)
    assert (x.shape, x.dtype, x.weak_type) == ((), np.dtype(dtype), weak)
    assert x.item() == value


def test_python_int_out_of_range():
    with pytest.raises(OverflowError, match="Python int 2147483648 too large to convert to int32"):
        li.device_put(2**31)
    assert li.device_put(-(2**31)).item() == -(2**31)
    with li.enable_x64():
        assert li.device_put(2**40).item() == 2**40
    # NumPy values wrap silently, as in JAX.
    assert li.device_put(np.int64(2**40)).item() == 0


def test_invalid_values():
    with pytest.raises(
        TypeError, match="Argument 'abc' of type <class 'str'> is not a valid JAX type"
    ):
        li.device_put("abc")
    with pytest.raises(TypeError, match="Cannot interpret value of type <class 'object'>"):
        li.device_put(object())
    with pytest.raises(TypeError, match="Dtype <U1 is not a valid JAX array type"):
        li.device_put(np.array(["a"]))
    with pytest.raises(TypeError, match="Dtype object is not a valid JAX array type"):
        li.device_put(np.array([1, "a"], dtype=object))
    with pytest.raises(TypeError, match="device_put's device must be a Device, a Sharding"):
        li.device_put(1.0, device="cpu")


def test_device_put_pytrees():
    out = li.device_put({"a": [1, np.ones(2)], "b": None, "c": (2.0,)})
    assert out["b"] is None
    assert repr(out["a"][0]) == "Array(1, dtype=int32, weak_type=True)"
    assert repr(out["a"][1]) == "Array([1., 1.], dtype=float32)"
    assert isinstance(out["c"], tuple) and out["c"][0].weak_type
    assert li.device_put(None) is None


def test_committed_and_placement():
    device = li.devices()[0]
    x = li.device_put(np.arange(3.0))
    assert not x.committed
    assert li.device_put(x) is x
    y = li.device_put(x, device)
    assert y is not x and y.committed and y.devices() == {device}
    assert y.unsafe_buffer_pointer() == x.unsafe_buffer_pointer()  # same device: no copy
    assert li.device_put(1.0, device).committed
    z = li.device_put(np.ones(2), li.SingleDeviceSharding(device))
    assert z.committed and z.sharding == li.SingleDeviceSharding(device)


def test_device_put_may_alias_aligned_numpy_memory_like_jax():
    # On CPU jaxlib aliases suitably aligned host memory (JAX does the same).
    raw = np.zeros(4096 + 64, np.uint8)
    offset = (-raw.ctypes.data) % 64
    host = raw[offset : offset + 4096].view(np.float32)
    x = li.device_put(host)
    assert x.unsafe_buffer_pointer() == host.ctypes.data


def test_device_get():
    x = li.device_put(np.array([1.0, 2.0], np.float32))
    out = li.device_get({"a": x, "b": [li.device_put(2.5), 1.0, np.ones(1)]})
    assert type(out["a"]) is np.ndarray and not out["a"].flags.writeable
    np.testing.assert_array_equal(out["a"], [1.0, 2.0])
    assert out["b"][1] == 1.0 and type(out["b"][1]) is float
    assert type(li.device_get(x)) is np.ndarray
    assert li.device_get(3) == 3


def test_block_until_ready_tree():
    tree = {"a": li.device_put(np.ones(3)), "b": [li.device_put(2.0), 1.0, None]}
    assert li.block_until_ready(tree) is tree


def test_live_arrays():
    x = li.device_put(np.full(7, 3.0, np.float32))
    assert any(a is x for a in li.live_arrays())
    assert all(isinstance(a, li.ArrayImpl) for a in li.live_arrays("cpu"))


def test_values_with_jax_array_method_are_refused():
    # JAX 0.10.2 converts __jax_array__ only explicitly (jnp.asarray): device_put refuses
    class Wrapper:
        def __jax_array__(self):
            return np.arange(3, dtype=np.int16)

    with pytest.raises(ValueError, match=r"Triggering __jax_array__\(\) during abstractification"):
        li.device_put(Wrapper())


def test_bfloat16_round_trip():
    host = np.array([0.5, -1.25, 3.0], ml_dtypes.bfloat16)
    np.testing.assert_array_equal(li.device_get(li.device_put(host)), host)
