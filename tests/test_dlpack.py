"""lamina.dlpack: arrays exchanged with NumPy through DLPack (`jax.dlpack`)."""

import ml_dtypes
import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import dlpack


def test_round_trip_with_numpy():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = dlpack.from_dlpack(x)
    assert isinstance(y, jax.Array) and y.shape == (2, 3) and y.dtype == np.float32
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(np.from_dlpack(y), x)
    z = jnp.arange(4, dtype=jnp.int16) * 3
    np.testing.assert_array_equal(np.from_dlpack(z), [0, 3, 6, 9])
    np.testing.assert_array_equal(dlpack.from_dlpack(z) + 1, [1, 4, 7, 10])


def test_supported_dtypes():
    # Recorded from JAX 0.10.2.
    supported = [np.float32, np.float64, np.int8, np.uint64, np.bool_, np.complex64,
                 np.float16, ml_dtypes.bfloat16, "float32", np.dtype("int16")]  # fmt: skip
    assert all(dlpack.is_supported_dtype(t) for t in supported)
    unsupported = [ml_dtypes.float8_e4m3fn, ml_dtypes.int4, jax.dtypes.float0]
    assert not any(dlpack.is_supported_dtype(t) for t in unsupported)
    with pytest.raises(TypeError, match="Expected a string or dtype-like object; got dtype=None"):
        dlpack.is_supported_dtype(None)


def test_bad_input():
    # Message recorded from JAX 0.10.2.
    with pytest.raises(TypeError, match="must have __dlpack__ and __dlpack_device__ methods"):
        dlpack.from_dlpack(3)
