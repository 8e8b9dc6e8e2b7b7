"""``jit`` partitioned over 8 CPU devices by XLA's SPMD partitioner, generically over
the ``Sharding`` protocol (jaxlib's ``GSPMDSharding`` here). The calls run in a
subprocess (partitioned_program.py): these tests run with one device by default."""

import pathlib

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent
TILED = "{devices=[4,2]<=[8]}"
ROWS = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"
X = np.arange(32.0, dtype=np.float32).reshape(8, 4)


@pytest.fixture(scope="module")
def seen(program_output):
    return program_output(HERE / "partitioned_program.py", cwd=HERE)


def test_runs_on_eight_devices(seen):
    assert seen["devices"] == 8


def test_lowered_module_carries_gspmd_shardings(seen):
    # recorded from JAX 0.10.2 with jax_use_shardy_partitioner=False: the same jit with
    # NamedShardings of these layouts lowers with these mhlo.sharding attributes
    assert seen["lowered"] == [TILED, "{replicated}", ROWS, TILED]
    assert seen["num_partitions"] == ["8"]


def test_values_equal_the_unpartitioned_computation(seen):
    np.testing.assert_array_equal(seen["values"][0], X + X)
    np.testing.assert_array_equal(seen["values"][1], X * X)
    np.testing.assert_array_equal(seen["from_committed_value"], X * X)
    np.testing.assert_array_equal(seen["eager"][1], X + X)


def test_outputs_are_laid_out_as_asked(seen):
    # the first call (Python path) and the second (jaxlib's C++ fast path) agree
    assert seen["out_hlo"] == [ROWS, TILED, ROWS, TILED]
    assert seen["shard_shapes"] == [[2, 2]]
    assert seen["committed"] == [True, True]


def test_unspecified_shardings_follow_committed_arguments(seen):
    assert seen["from_committed"] == TILED
    assert seen["eager"][0] == TILED  # an eager op on a sharded array stays sharded
    assert seen["eager_compiles"] == 0
    # the executable cache is keyed on the arguments' shardings
    assert seen["by_sharding"] == [ROWS, TILED]


def test_donation(seen):
    assert seen["donated"] == [True, float((2 * X).sum())]


def test_errors(seen):
    # messages recorded from JAX 0.10.2 (NamedShardings there print as such)
    assert seen["incompatible"] == [
        "ValueError",
        "Received incompatible devices for jitted computation. Got argument a of <lambda> "
        "with shape float32[8,4] and with device ids [0, 1, 2, 3] on platform CPU and "
        "argument b of <lambda> with shape float32[8,4] and with device ids "
        "[0, 1, 2, 3, 4, 5, 6, 7] on platform CPU",
    ]
    kind, message = seen["mismatch"]
    assert kind == "ValueError"
    assert message.startswith(
        "Sharding passed to jit does not match the sharding on the respective arg. Got jit "
        f"sharding: GSPMDSharding({TILED}"
    )
    assert message.endswith("for arg type: float32[8,4]")
    assert seen["indivisible"] == [
        "ValueError",
        f"Sharding GSPMDSharding({TILED}, memory_kind=device) implies that array axis 0 is "
        "partitioned 4 times, but the dimension size is 3 (full shape: (3, 4), "
        "per-dimension tiling factors: [4, 2] should evenly divide the shape)",
    ]
