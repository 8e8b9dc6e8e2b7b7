"""Explicit sharding through the NumPy API on 8 CPU devices: a typed MLP training step
and an attention block give JAX's types and layouts and the unsharded values; the
creation functions take ``out_sharding=``; JAX's errors where JAX refuses. The program
runs in a subprocess (explicit_types_program.py), since the other root tests see one
device. Types, layouts and messages recorded from JAX 0.10.2."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent
MESH = (
    "AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit), device_kind=cpu, "
    "num_cores=None, platform=cpu)"
)
# recorded from JAX 0.10.2

STEP_TYPES = [
    "float32[]",
    "float32[16,32@y]",
    "float32[32@y]",
    "float32[32,8]",
    "float32[16,32@y]",
    "float32[32@y]",
    "float32[32,8]",
]
STEP_SPECS = [
    "P()",
    "P(None, 'y')",
    "P('y',)",
    "P(None, None)",
    "P(None, 'y')",
    "P('y',)",
    "P(None, None)",
]
ATTENTION_PARTS = [
    "float32[8@x,4,16]",
    "float32[4,4]",
    "float32[8@x,16,4]",
    "float32[8@x,64]",
]
MADE_TYPES = {
    "zeros": "float32[8@x,4]",
    "ones": "int32[8@x,4@y]",
    "full": "~float32[8,4@y]",
    "full_array": "float32[8@x,4]",
    "empty": "float32[8,4@y]",
    "arange": "int32[8@x]",
    "arange_step": "int32[8@x]",
    "array": "float32[8@x,4]",
    "zeros_like": "float32[8@x,16]",
    "ones_like_spec": "float32[8,16@y]",
    "full_like_dtype": "int32[8@x,16]",
    "plain_zeros": "float32[8,4]",
}
MADE_SPECS = {
    "zeros": "P('x', None)",
    "ones": "P('x', 'y')",
    "full": "P(None, 'y')",
    "full_array": "P('x', None)",
    "empty": "P(None, 'y')",
    "arange": "P('x',)",
    "arange_step": "P('x',)",
    "array": "P('x', None)",
    "zeros_like": "P('x',)",
    "ones_like_spec": "P(None, 'y')",
    "full_like_dtype": "P('x',)",
}
TRACED_TYPES = [
    "float32[8@x,4]",
    "int32[8@y]",
    "float32[8@x,16]",
    "float32[4]",
]
SHAPED_TYPES = [
    "float32[4@x,32]",
    "float32[8@x,4@y,16]",
    "float32[8@x]",
    "float32[8@x,8]",
    "float32[8,8@y]",
    "int32[8@x,16]",
    "float32[8@x,4]",
    "float32[12@x,16]",
    "float32[8@x]",
    "float32[8@x,16]",
]
JAXPR_ZEROS = "{ lambda ; . let a:f32[8@x,4] = broadcast_in_dim 0.0:f32[] in (a,) }"
ERRORS = {
    "both": (
        "ValueError: Only one of `device` or `out_sharding` can be set. Got "
        "device=CpuDevice(id=0) and out_sharding=P('x',)"
    ),
    "not_a_spec": (
        "TypeError: `out_sharding` argument of jnp.zeros only supports instances of "
        "`NamedSharding` or `PartitionSpec`. Got x of type: <class 'str'>"
    ),
    "indivisible": (
        "ValueError: Sharding spec ('x',) implies that array axis 0 is partitioned 2 "
        "times, but does not evenly divide the dimension size 7. Got shape: (7, 4) "
        f"and sharding NamedSharding(mesh={MESH}, spec=P('x', None))"
    ),
    "unknown_axis": "ValueError: Resource axis: z of P('z',) is not found in mesh: ('x', 'y').",
    "cumsum": (
        "ShardingTypeError: Input should be unsharded over the axis being reduced. "
        "Got input type=float32[8@x,16] and axis=0"
    ),
    "repeat": "ValueError: Please pass sharding to `jnp.repeat` via `out_sharding` parameter.",
    "tile": (
        "ShardingTypeError: Operand cannot be sharded on dimension 0 when the tiling "
        "is non-trivial. Got input type: float32[8@x,16] with reps: (2, 1)"
    ),
    "embedding": (
        "ShardingTypeError: Use `.at[...].get(out_sharding=)` to provide output "
        "PartitionSpec for the gather indexing as out sharding could not be resolved "
        "unambiguously (or would require collectives on inputs). Got "
        "operand=ShapedArray(float32[16,32@y]), indices=ShapedArray(int32[8@x,1])"
    ),
    "row": (
        "ShardingTypeError: slicing on sharded dims where out dim (1) is not "
        "divisible by mesh axes (2) with spec (x) is not implemented. Got input "
        "type=f32[8@x,16] and output shape=(1, 16)"
    ),
    "sort": (
        "ShardingTypeError: Arguments to sort must be unsharded over the sorting "
        f"dimension. Got arg sharding=NamedSharding(mesh={MESH}, spec=P('x', None)) "
        "and sorting dimension=0"
    ),
    "contracting": (
        "ShardingTypeError: Contracting dimensions are sharded and it is ambiguous "
        "how the output should be sharded. Please specify the output sharding via the"
        " `out_sharding` parameter. Got lhs_contracting_spec=('y',) and "
        "rhs_contracting_spec=('y',)"
    ),
    "eager_rows": (
        "ShardingTypeError: Use `.at[...].get(out_sharding=)` to provide output "
        "PartitionSpec for the gather indexing as out sharding could not be resolved "
        "unambiguously (or would require collectives on inputs). Got "
        "operand=ShapedArray(float32[8@x,16]), indices=ShapedArray(int32[1])"
    ),
    "spec_outside_mesh": (
        "ValueError: Using PartitionSpec when you are not under a mesh context is not"
        " allowed. Please pass a NamedSharding instance or enter into a mesh context "
        "via `jax.set_mesh`. Got P('x',)"
    ),
}


@pytest.fixture(scope="module")
def seen():
    done = subprocess.run(
        [sys.executable, str(HERE / "explicit_types_program.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_training_step_types_and_layouts(seen):
    # recorded from JAX 0.10.2: loss, gradients and updated parameters
    assert seen["jaxpr_loss_out"] == "float32[]"
    assert seen["step_types"] == STEP_TYPES
    assert seen["eager_step_types"] == STEP_TYPES
    assert seen["step_specs"] == STEP_SPECS


def test_training_step_values_equal_the_unsharded_ones(seen):
    assert len(seen["step"]) == len(seen["plain_step"]) == 7
    for typed, plain in zip(seen["step"], seen["plain_step"], strict=True):
        np.testing.assert_allclose(typed, plain, rtol=1e-4, atol=1e-6)


def test_attention_block(seen):
    # recorded from JAX 0.10.2
    assert seen["attention_grad_type"] == ["float32[8@x,4,16]"]
    assert seen["attention_parts"] == ATTENTION_PARTS
    np.testing.assert_allclose(
        seen["attention_grad"][0], seen["plain_attention_grad"][0], rtol=1e-3, atol=1e-4
    )


def test_creation_functions_take_out_sharding(seen):
    # recorded from JAX 0.10.2
    assert seen["made_types"] == MADE_TYPES
    assert seen["made_specs"] == MADE_SPECS
    assert seen["traced_types"] == TRACED_TYPES
    assert seen["jaxpr_zeros"] == JAXPR_ZEROS
    # a NumPy array taken without a copy skips out_sharding in JAX 0.10.2
    assert seen["asarray"] == [
        "float32[8,4] SingleDeviceSharding",
        "float32[8@x,4] NamedSharding",
    ]
    made = {k: np.asarray(v) for k, v in seen["made_values"].items()}
    np.testing.assert_array_equal(made["zeros"], np.zeros((8, 4)))
    np.testing.assert_array_equal(made["ones"], np.ones((8, 4), np.int32))
    np.testing.assert_array_equal(made["full"], np.full((8, 4), 2.5))
    np.testing.assert_array_equal(made["full_array"], np.broadcast_to(np.arange(4.0), (8, 4)))
    np.testing.assert_array_equal(made["arange"], np.arange(8))
    np.testing.assert_array_equal(made["arange_step"], np.arange(0, 16, 2))
    np.testing.assert_array_equal(made["array"], np.ones((8, 4)))
    np.testing.assert_array_equal(made["zeros_like"], np.zeros((8, 16)))
    np.testing.assert_array_equal(made["ones_like_spec"], np.ones((8, 16)))
    np.testing.assert_array_equal(made["full_like_dtype"], np.full((8, 16), 7))


def test_shape_functions_and_products_take_out_sharding(seen):
    # types recorded from JAX 0.10.2; values against NumPy
    assert seen["shaped_types"] == SHAPED_TYPES
    x = np.random.default_rng(0).standard_normal((8, 16), np.float32)
    got = [np.asarray(v) for v in seen["shaped"]]
    expected = [
        x.reshape(4, 32),
        np.broadcast_to(x[:, None, :], (8, 4, 16)),
        (x * x).sum(1),
        x @ x.T,
        x @ x.T,
        np.argsort(x, axis=-1, kind="stable"),
        x[:, :4],
        np.pad(x, ((2, 2), (0, 0))),
        np.linalg.norm(x, axis=-1),
        x[::-1],
    ]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_eager_indexing_of_split_arrays(seen):
    # recorded from JAX 0.10.2: eagerly, an index taking part of an axis of an array
    # over several devices is a gather (x[:4] above is refused), under jit a slice
    assert seen["indexing_types"] == ["float32[8@x,8]", "float32[8@x,16]", "float32[4@x,16]"]


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_jax(seen, case):
    assert seen["errors"][case] == ERRORS[case]  # recorded from JAX 0.10.2
