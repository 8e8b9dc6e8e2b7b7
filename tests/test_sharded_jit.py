"""``jit`` with ``NamedSharding`` s, ``lax.with_sharding_constraint`` and ``reshard`` on
8 CPU devices: values and gradients equal to the unsharded computation, shardings and
messages as JAX 0.10.2 gives them. The calls run in a subprocess
(sharded_jit_program.py), since the other root tests see one device."""

import pathlib

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent
X = np.arange(32.0, dtype=np.float32).reshape(8, 4)
MESH = "Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))"


@pytest.fixture(scope="module")
def seen(program_output):
    return program_output(HERE / "sharded_jit_program.py")


def test_lowered_shardings(seen):
    # recorded from JAX 0.10.2 with jax_use_shardy_partitioner=False (GSPMD); by
    # default JAX emits the same layouts as Shardy's sdy.sharding attributes
    assert seen["lowered_shardings"] == [
        "{devices=[4,2]<=[8]}",
        "{replicated}",
        "{devices=[4,2]<=[8]}",
        "{replicated}",
        "{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
    ]
    assert seen["num_partitions"] == ["8"]


def test_values_and_shardings(seen):
    np.testing.assert_array_equal(seen["values"][0], 3 * X)
    assert seen["values"][1] == X.sum()
    # recorded from JAX 0.10.2
    assert seen["out_specs"] == ["P('x', 'y')", "P()"]
    assert seen["shards"] == [[2, 2]] * 8


def test_gradients_equal_the_unsharded_ones(seen):
    # loss(a, b) = sum(sin(2a + b) * b)
    ga, gb = (np.asarray(g) for g in seen["grad"])
    np.testing.assert_allclose(ga, 2 * np.cos(3 * X) * X, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(gb, np.cos(3 * X) * X + np.sin(3 * X), rtol=1e-5, atol=1e-4)
    assert seen["grad_spec"] == "P('x', 'y')"  # recorded from JAX 0.10.2


def test_data_parallel_gradient(seen):
    # recorded from JAX 0.10.2
    expected = [
        [-0.3334612, -0.2649396, -0.1078768],
        [-0.3565726, -0.2838639, -0.1185494],
        [-0.379684, -0.3027881, -0.129222],
        [-0.4027954, -0.3217124, -0.1398946],
    ]
    np.testing.assert_allclose(seen["dp_grad"], expected, rtol=1e-5)
    np.testing.assert_allclose(seen["dp_grad"], seen["dp_grad_unsharded"], rtol=1e-6)


def test_shardings_xla_chooses(seen):
    # recorded from JAX 0.10.2
    assert seen["sum_spec"] == "P('y',)"
    assert seen["reshard_spec"] == "P(None, 'y')"
    np.testing.assert_array_equal(seen["reshard_values"], 2 * X)
    assert seen["unspecified_from_committed"] == "P('x', 'y')"
    assert seen["in_none"] == "P()"
    assert seen["cache_by_sharding"] == ["P('x', 'y')", "P('y',)"]


def test_donation_and_vmap(seen):
    assert seen["donated_deleted"] is True
    assert seen["donated_value"] == (X + 1).sum()
    # recorded from JAX 0.10.2: a buffer laid out unlike every result is not donated
    assert seen["donation_warning"] == [
        "Some donated buffers were not usable: float32[2,2].\n"
        "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation."
    ]
    assert seen["vmap"] == [192.0, [3, 8, 4]]
    assert seen["vmap_spec"] == "P(None, 'x', 'y')"  # recorded from JAX 0.10.2


def test_constraint_gradient(seen):
    # the cotangent of a constrained value is constrained alike; recorded from JAX 0.10.2
    assert seen["wsc_grad"] == ["P('x', 'y')", True]


def test_nested_jit_and_compiled_shardings(seen):
    # recorded from JAX 0.10.2
    assert seen["nested"][0] == "P()"
    np.testing.assert_array_equal(seen["nested"][1], 2 * X + 1)
    assert seen["compiled_shardings"] == [
        f"(({XY}, {_named('P()')}), {{}})",
        f"({XY}, {_named('P()')})",
    ]


def test_prng_keys(seen):
    # recorded from JAX 0.10.2: the draws of keys split over devices, laid out as them
    assert seen["keys"] == ["P('x',)", True]


def _named(spec):
    return f"NamedSharding(mesh={MESH}, spec={spec}, memory_kind=device)"


XY, Y = _named("P('x', 'y')"), _named("P('y',)")


def test_errors(seen):
    # every message recorded from JAX 0.10.2
    assert seen["err_committed_mismatch"] == [
        "ValueError",
        "Sharding passed to jit does not match the sharding on the respective arg. Got jit "
        f"sharding: {XY},\narg sharding: {Y} for arg "
        "type: float32[8,4]",
    ]
    devices = "Received incompatible devices for jitted computation. Got argument a of "
    assert seen["err_devices"] == [
        "ValueError",
        devices + "<lambda> with shape float32[8,4] and with device ids [0, 1, 2, 3] on "
        "platform CPU and argument b of <lambda> with shape float32[8,4] and with device ids "
        "[0, 1, 2, 3, 4, 5, 6, 7] on platform CPU",
    ]
    assert seen["err_single_device"] == [
        "ValueError",
        devices + "<lambda> with shape float32[8,4] and with device ids [1] on platform CPU "
        "and argument b of <lambda> with shape float32[8,4] and with device ids "
        "[0, 1, 2, 3, 4, 5, 6, 7] on platform CPU",
    ]
    assert seen["err_length"] == [
        "ValueError",
        "pjit in_shardings specification must be a tree prefix of the positional arguments "
        "tuple. In particular, pjit in_shardings must either be a Sharding, a PartitionSpec, "
        "or a tuple of length equal to the number of positional arguments. But pjit "
        "in_shardings is the wrong length: got a tuple or list of length 3 for an args tuple "
        "of length 2.",
    ]
    kind, message = seen["err_prefix"]
    assert kind == "ValueError"
    assert message.startswith(
        "Mismatch details (1 found):\npytree structure error: different types at key path\n"
        "    pjit in_shardings[0]\nAt that key path, the prefix pytree pjit in_shardings has a "
        "subtree of type\n    <class 'dict'>\nbut at the same key path the full pytree has a "
        "subtree of different type\n"
    )
    assert message.endswith("PytreeLeaf'>.")
    assert seen["err_kwargs"] == [
        "ValueError",
        "pjit does not support kwargs when in_shardings is specified.",
    ]
    assert seen["err_indivisible"] == [
        "IndivisibleError",
        f"Sharding {XY} implies that array axis 0 is partitioned 4 "
        "times, but the dimension size is 3 (full shape: (3, 4), per-dimension tiling "
        "factors: [4, 2] should evenly divide the shape)",
    ]
    assert seen["err_rank"] == [
        "ValueError",
        "One of pjit arguments with pytree key path a is incompatible with its sharding "
        f"annotation {XY}: Sharding {XY} is only "
        "valid for values of rank at least 2, but was applied to a value of rank 1.",
    ]
