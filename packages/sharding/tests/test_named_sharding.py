"""NamedSharding: the layout arithmetic against NumPy, XLA shardings and messages
recorded from JAX 0.10.2, and device_put of sharded arrays across 8 CPU devices."""

import pickle

import numpy as np
import pytest

from lamina.interpreters import ArrayImpl, device_put, devices
from lamina.sharding import (
    AxisType,
    DuplicateSpecError,
    IndivisibleError,
    NamedSharding,
    P,
    Sharding,
    make_mesh,
)

MESH = make_mesh((4, 2), ("x", "y"))
AUTO = make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
X = np.arange(32.0, dtype=np.float32).reshape(8, 4)


def test_repr_and_properties():
    s = NamedSharding(MESH, P("x", "y"))
    # recorded from JAX 0.10.2
    assert repr(s) == (
        "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit)), "
        "spec=P('x', 'y'), memory_kind=device)"
    )
    assert isinstance(s, Sharding)
    assert s.mesh is MESH and s.spec == P("x", "y") and s.memory_kind == "device"
    assert s.num_devices == 8 and s.device_set == set(devices())
    assert s._device_assignment == tuple(devices())
    assert s.addressable_devices == set(devices())
    assert s.is_fully_addressable and not s.is_fully_replicated
    assert NamedSharding(MESH, P()).is_fully_replicated
    assert NamedSharding(make_mesh((1, 8), ("a", "b")), P("a")).is_fully_replicated
    assert s._logical_device_ids is None


# XLA shardings recorded from JAX 0.10.2 (NamedSharding._to_xla_hlo_sharding).
HLO = [
    (P("x", "y"), 2, "{devices=[4,2]<=[8]}"),
    (P("x"), 2, "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"),
    (P(None, "x"), 2, "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"),
    (P(("x", "y")), 2, "{devices=[8,1]<=[8]}"),
    (P(("y", "x")), 2, "{devices=[8,1]<=[4,2]T(1,0)}"),
    (P(), 2, "{replicated}"),
    (P("y"), 1, "{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"),
    (P("y", "x"), 2, "{devices=[2,4]<=[4,2]T(1,0)}"),
]


@pytest.mark.parametrize(("spec", "ndim", "text"), HLO)
def test_xla_sharding(spec, ndim, text):
    assert str(NamedSharding(MESH, spec)._to_xla_hlo_sharding(ndim)) == text


def test_abstract_mesh_sharding_has_an_xla_sharding():
    s = NamedSharding(MESH.abstract_mesh, P("x"))
    assert str(s._to_xla_hlo_sharding(1)) == "{devices=[4,2]<=[8] last_tile_dim_replicate}"
    assert s.shard_shape((8,)) == (2,) and s.num_devices == 8
    with pytest.raises(ValueError, match=r"device_set is not implemented for `jax\.sharding"):
        _ = s.device_set


def _reference_blocks(spec, shape):
    """Each device's block, from the device's position in the mesh, by NumPy."""
    ids = np.arange(8).reshape(4, 2)
    blocks = {}
    for (i, j), dev in np.ndenumerate(ids):
        coords = {"x": (i, 4), "y": (j, 2)}
        index = []
        for d, size in enumerate(shape):
            entry = spec[d] if d < len(spec) else None
            names = () if entry is None else (entry if isinstance(entry, tuple) else (entry,))
            block, count = 0, 1
            for n in names:
                block, count = block * coords[n][1] + coords[n][0], count * coords[n][1]
            step = size // count
            index.append(np.arange(block * step, (block + 1) * step))
        blocks[dev] = np.ix_(*index) if index else ()
    return blocks


SPECS = [P("x", "y"), P("x"), P(None, "y"), P(("x", "y")), P(("y", "x")), P("y", "x"), P()]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_devices_indices_map_matches_numpy(spec):
    s = NamedSharding(MESH, spec)
    reference = _reference_blocks(spec, X.shape)
    indices = s.devices_indices_map(X.shape)
    assert list(indices) == devices()
    for device, index in indices.items():
        np.testing.assert_array_equal(X[index], X[reference[device.id]])
        assert X[index].shape == s.shard_shape(X.shape)


def test_devices_indices_map_recorded():
    # recorded from JAX 0.10.2
    indices = NamedSharding(MESH, P(None, "x")).devices_indices_map((3, 4))
    assert indices[devices()[3]] == (slice(None), slice(1, 2))
    assert NamedSharding(MESH, P()).devices_indices_map(())[devices()[5]] == ()
    assert NamedSharding(MESH, P("x")).addressable_devices_indices_map((8,))[devices()[3]] == (
        slice(2, 4),
    )


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_device_put_holds_one_block_per_device(spec):
    s = NamedSharding(MESH, spec)
    a = device_put(X, s)
    assert isinstance(a, ArrayImpl) and a.sharding == s and a.committed
    np.testing.assert_array_equal(np.asarray(a), X)
    shards = a.addressable_shards
    assert [shard.device for shard in shards] == devices()
    for shard in shards:
        np.testing.assert_array_equal(np.asarray(shard.data), X[shard.index])
        assert shard.data.devices() == {shard.device}
    assert a.global_shards[0].index == shards[0].index
    assert a.is_fully_replicated == s.is_fully_replicated


def test_replica_ids():
    # recorded from JAX 0.10.2: P('x') on the 4x2 mesh, each block on two devices
    a = device_put(X, NamedSharding(MESH, P("x")))
    assert [s.replica_id for s in a.addressable_shards] == [0, 1] * 4
    r = device_put(X, NamedSharding(MESH, P()))
    assert [s.replica_id for s in r.addressable_shards] == list(range(8))


def test_device_put_from_a_sharded_array_and_back():
    a = device_put(X, NamedSharding(MESH, P("x", "y")))
    b = device_put(a, NamedSharding(MESH, P("y")))
    assert b.sharding.spec == P("y")
    np.testing.assert_array_equal(np.asarray(b), X)
    c = device_put(b, devices()[3])
    assert c.devices() == {devices()[3]}
    np.testing.assert_array_equal(np.asarray(c), X)


def test_equality_and_hash():
    s = NamedSharding(MESH, P("x"))
    # recorded from JAX 0.10.2
    assert s == NamedSharding(MESH, P("x")) and hash(s) == hash(NamedSharding(MESH, P("x")))
    assert s != NamedSharding(MESH, P("x", None))
    assert s != NamedSharding(AUTO, P("x"))
    assert s.is_equivalent_to(NamedSharding(MESH, P("x", None)), 2)
    assert not s.is_equivalent_to(NamedSharding(MESH, P("y")), 2)
    assert s != s.with_memory_kind("pinned_host")
    assert pickle.loads(pickle.dumps(NamedSharding(MESH.abstract_mesh, P("x")))) == (
        NamedSharding(MESH.abstract_mesh, P("x"))
    )


def test_memory_kind_and_update():
    s = NamedSharding(MESH, P("x"))
    assert repr(s.with_memory_kind("pinned_host")) == (
        "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit)), "
        "spec=P('x',), memory_kind=pinned_host)"
    )
    assert s.update(spec=P("y")).spec == P("y")
    with pytest.raises(
        ValueError,
        match=r"Could not find memory addressable by device cpu\. Device cpu can address the "
        r"following memory kinds: device, pinned_host, unpinned_host\. Got memory kind: bogus",
    ):
        NamedSharding(MESH, P("x"), memory_kind="bogus")


def test_bad_specs():
    # messages recorded from JAX 0.10.2
    with pytest.raises(
        ValueError, match=r"Resource axis: z of P\('z',\) is not found in mesh: \('x', 'y'\)\."
    ):
        NamedSharding(MESH, P("z"))
    with pytest.raises(
        DuplicateSpecError,
        match=r"A single NamedSharding spec specification can map every mesh axis to at most "
        r"one positional dimension, but P\('x', 'x'\) has duplicate entries for `x`",
    ):
        NamedSharding(MESH, P("x", "x"))
    with pytest.raises(DuplicateSpecError, match="duplicate entries for `x`"):
        NamedSharding(MESH, P(("x", "y"), "x"))
    with pytest.raises(AttributeError, match="'tuple' object has no attribute 'partitions'"):
        NamedSharding(MESH, ("x",))
    with pytest.raises(
        ValueError,
        match=r"Unreduced axes q is not found in mesh.axis_names=\('x', 'y'\)\. Got "
        r"pspec=P\('x', unreduced=\{'q'\}\)",
    ):
        NamedSharding(MESH, P("x", unreduced={"q"}))
    with pytest.raises(
        ValueError,
        match=r"P\('x', UNCONSTRAINED\) cannot contain `P.UNCONSTRAINED` when no mesh "
        r"axis_types are `Auto`\. Got mesh axis_types: \(Explicit, Explicit\)",
    ):
        NamedSharding(MESH, P("x", P.UNCONSTRAINED))
    assert NamedSharding(AUTO, P("x", P.UNCONSTRAINED)).shard_shape((8, 2)) == (2, 2)


def test_indivisible_dimensions():
    # recorded from JAX 0.10.2
    s = NamedSharding(MESH, P("x", "y"))
    message = (
        r"Sharding NamedSharding\(mesh=Mesh\('x': 4, 'y': 2, axis_types=\(Explicit, "
        r"Explicit\)\), spec=P\('x', 'y'\), memory_kind=device\) implies that array axis 0 "
        r"is partitioned 4 times, but the dimension size is 3 \(full shape: \(3, 4\), "
        r"per-dimension tiling factors: \[4, 2\] should evenly divide the shape\)"
    )
    with pytest.raises(IndivisibleError, match=message):
        s.shard_shape((3, 4))
    with pytest.raises(IndivisibleError, match=message):
        s.devices_indices_map((3, 4))
    with pytest.raises(ValueError, match="implies that array axis 1 is partitioned 8 times"):
        NamedSharding(MESH, P(None, ("x", "y"))).shard_shape((3, 4))
    with pytest.raises(ValueError, match="implies that array axis 0 is partitioned 4 times"):
        device_put(np.zeros((3, 4)), NamedSharding(MESH, P("x")))


def test_rank_mismatch():
    # recorded from JAX 0.10.2 on a mesh of Auto axes (on Explicit ones JAX's message
    # is an internal tuple, "(1, P('x', 'y'))")
    with pytest.raises(
        ValueError,
        match=r"^One of device_put args is incompatible with its sharding annotation "
        r"NamedSharding\(.*\): Sharding .* is only valid for values of rank at least 2, "
        r"but was applied to a value of rank 1\.$",
    ):
        device_put(np.zeros(8), NamedSharding(MESH, P("x", "y")))
    with pytest.raises(ValueError, match="only valid for values of rank at least 2"):
        NamedSharding(MESH, P("x", "y"))._to_xla_hlo_sharding(1)


def test_devices_missing_from_the_mesh():
    # A mesh over devices 0-3: arrays laid out by it live on those devices only.
    half = make_mesh((4,), ("x",), devices=devices()[:4])
    a = device_put(np.arange(8.0), NamedSharding(half, P("x")))
    assert a.devices() == set(devices()[:4])
    np.testing.assert_array_equal(np.asarray(a), np.arange(8.0))
