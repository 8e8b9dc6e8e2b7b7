"""mesh_utils on the 8 CPU devices of one process; values and messages recorded from
JAX 0.10.2 (jax.experimental.mesh_utils)."""

import numpy as np
import pytest

from lamina.interpreters import devices
from lamina.sharding.mesh_utils import create_device_mesh, create_hybrid_device_mesh


def ids(mesh):
    return np.vectorize(lambda d: d.id, otypes=[int])(mesh).tolist()


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ((2, 4), [[0, 1, 2, 3], [4, 5, 6, 7]]),
        ([8], [0, 1, 2, 3, 4, 5, 6, 7]),
        ((np.int64(4), 2), [[0, 1], [2, 3], [4, 5], [6, 7]]),
    ],
)
def test_create_device_mesh(shape, expected):
    mesh = create_device_mesh(shape)
    assert mesh.dtype == object and ids(mesh) == expected
    assert all(isinstance(d, type(devices()[0])) for d in mesh.flat)


def test_create_device_mesh_of_given_devices():
    assert ids(create_device_mesh((2, 2), devices()[4:])) == [[4, 5], [6, 7]]
    mesh = create_device_mesh((2, 4), contiguous_submeshes=True)
    assert ids(mesh) == [[0, 1, 2, 3], [4, 5, 6, 7]]


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ((3, 3), "Number of devices 8 must equal the product of mesh_shape (3, 3)"),
        (
            ("a", 2),
            "`mesh_shape` passed to `create_device_mesh` should be a sequence of ints. "
            "Got ('a', 2)",
        ),
    ],
)
def test_create_device_mesh_errors(shape, message):
    with pytest.raises(ValueError) as info:
        create_device_mesh(shape)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("shape", "dcn", "expected"),
    [
        ((2, 4), (1,), [[0, 1, 2, 3], [4, 5, 6, 7]]),
        ((2, 4), (1, 1), [[0, 1, 2, 3], [4, 5, 6, 7]]),
    ],
)
def test_create_hybrid_device_mesh(shape, dcn, expected):
    assert ids(create_hybrid_device_mesh(shape, dcn, process_is_granule=True)) == expected


def test_create_hybrid_device_mesh_of_given_devices():
    mesh = create_hybrid_device_mesh((2, 2), (1,), devices()[2:6], process_is_granule=True)
    assert ids(mesh) == [[2, 3], [4, 5]]


def test_create_hybrid_device_mesh_errors():
    with pytest.raises(ValueError) as info:
        create_hybrid_device_mesh((4,), (2,), process_is_granule=True)
    assert str(info.value) == "Number of slices 1 must equal the product of dcn_mesh_shape (2,)"
    # CPU devices have no slice index.
    with pytest.raises(ValueError) as info:
        create_hybrid_device_mesh((2, 4), (1,))
    assert str(info.value) == (
        "Device cpu:0 does not have attribute slice_index. See `process_is_granule` option."
    )
