"""Exports of functions partitioned over 8 CPU devices: fields, calls, serialization in
JAX's format, and a JAX 0.10.2 8-device artifact (data/jax_sharded_mlp.bin, recorded
with tools/export_interop.py record-sharded). The programs run in a subprocess
(sharded_export_program.py), since the other export tests see one device."""

from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).parent
X = np.arange(16.0, dtype=np.float32)
Y = np.linspace(-1, 1, 16).astype(np.float32)
# recorded from JAX 0.10.2
ROW = (
    "NamedSharding(mesh=AbstractMesh('x': 8, axis_types=(Explicit,), device_kind=cpu, "
    "num_cores=None, platform=cpu), spec=P('x',), memory_kind=device)"
)
ROW_ON_MESH = (
    "NamedSharding(mesh=Mesh('x': 8, axis_types=(Explicit,)), spec=P('x',), memory_kind=device)"
)
MESH42 = (
    "AbstractMesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
    "num_cores=None, platform=cpu)"
)


@pytest.fixture(scope="module")
def seen(program_output):
    return program_output(HERE / "sharded_export_program.py")


def test_export_fields(seen):
    exp = seen["exported"]
    # recorded from JAX 0.10.2: the HloShardings are unset at export, the named
    # shardings on the abstract mesh
    assert exp["nr_devices"] == 8
    assert exp["in_shardings_hlo"] == ["None", "None"] and exp["out_shardings_hlo"] == ["None"]
    assert exp["in_named"] == [ROW, ROW] and exp["out_named"] == [ROW]
    assert exp["in_on_mesh"] == [ROW_ON_MESH, ROW_ON_MESH]
    assert exp["num_partitions"] and exp["arg_sharding"]


def test_call_equals_unsharded(seen):
    np.testing.assert_allclose(seen["call"]["value"], X * 2 + Y, rtol=1e-6)
    assert seen["call"]["sharding"] == ROW_ON_MESH
    np.testing.assert_allclose(seen["call_in_jit"], X * 2 + Y, rtol=1e-6)


def test_call_on_one_device_fails(seen):
    # JAX 0.10.2 raises a ValueError too (its avals carry the mesh, so its message
    # speaks of the device assignment and the mesh size)
    assert "exported for 8 devices" in seen["one_device"]
    assert "with 1 devices" in seen["one_device"]


def test_round_trip(seen):
    rt = seen["round_trip"]
    assert rt["same_bytes"] and rt["nr_devices"] == 8
    # recorded from JAX 0.10.2: a deserialized export has HloShardings
    assert rt["in_shardings_hlo"] == ["{devices=[8]<=[8]}"] * 2
    assert rt["out_shardings_hlo"] == ["{devices=[8]<=[8]}"]
    assert rt["in_named"] == [ROW, ROW]
    np.testing.assert_allclose(rt["value"], X * 2 + Y, rtol=1e-6)


def test_jax_artifact(seen):
    art = seen["jax_artifact"]
    assert art["same_bytes"] and art["nr_devices"] == 8
    # recorded from JAX 0.10.2
    assert art["in_shardings_hlo"] == [
        "{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
        "{replicated}",
    ]
    assert art["out_shardings_hlo"] == [
        "{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
        "{devices=[4,2]<=[8] last_tile_dim_replicate}",
    ]
    assert art["in_named"] == [
        f"NamedSharding(mesh={MESH42}, spec=P('x', None), memory_kind=device)",
        f"NamedSharding(mesh={MESH42}, spec=P(), memory_kind=device)",
    ]
    assert art["close"] == [True, True] and art["close_in_jit"] == [True, True]
    assert art["out_shardings"] == [
        "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit)), "
        "spec=P('x', None), memory_kind=device)",
        "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit)), "
        "spec=P('x',), memory_kind=device)",
    ]


def test_vjp(seen):
    vjp = seen["vjp"]
    # recorded from JAX 0.10.2: the VJP takes the primal arguments and the results'
    # cotangents, laid out alike, and gives cotangents laid out as the arguments
    assert vjp["nr_devices"] == 8
    assert vjp["in_named"] == [ROW] * 3 and vjp["out_named"] == [ROW] * 2
    np.testing.assert_allclose(vjp["grad"], np.cos(X) * Y, rtol=1e-5, atol=1e-6)
