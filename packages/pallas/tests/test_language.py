"""The kernel language: the public names, masked loads and stores, atomics, helpers,
debug printing, run_state and pl.kernel (values recorded from JAX 0.10.2)."""

import inspect
import re

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina import pallas as pl
from lamina.interpreters import ShapeDtypeStruct, jit
from lamina.pallas import triton as plt

# Recorded from JAX 0.10.2: dir(jax.experimental.pallas) without underscores.
JAX_NAMES = [
    "ANY",
    "BlockDim",
    "BlockSpec",
    "Blocked",
    "BoundedSlice",
    "Buffered",
    "CompilerParams",
    "CostEstimate",
    "DeviceIdType",
    "Element",
    "GridSpec",
    "HOST",
    "Indirect",
    "MemoryRef",
    "MemorySpace",
    "RevisitMode",
    "Slice",
    "Squeezed",
    "align_to",
    "broadcast_to",
    "cdiv",
    "core_map",
    "debug_check",
    "debug_print",
    "delay",
    "ds",
    "dslice",
    "empty",
    "empty_like",
    "empty_ref_like",
    "enable_debug_checks",
    "enable_poison_buffers",
    "estimate_cost",
    "get_global",
    "kernel",
    "loop",
    "lower_as_mlir",
    "multiple_of",
    "next_power_of_2",
    "no_block_spec",
    "num_programs",
    "pallas_call",
    "pallas_call_p",
    "pallas_export_experimental",
    "program_id",
    "reciprocal",
    "run_scoped",
    "run_state",
    "select_ref",
    "semaphore",
    "semaphore_read",
    "semaphore_signal",
    "semaphore_wait",
    "squeezed",
    "strides_from_shape",
    "when",
    "with_scoped",
]
TRITON_NAMES = [
    "CompilerParams",
    "approx_tanh",
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_xchg",
    "atomic_xor",
    "debug_barrier",
    "dot",
    "elementwise_inline_asm",
    "load",
    "max_contiguous",
    "store",
]


def test_public_names_are_jaxs():
    assert len(JAX_NAMES) == 57
    assert sorted(pl.__all__) == sorted(JAX_NAMES)
    assert all(hasattr(pl, n) for n in JAX_NAMES)
    assert sorted(plt.__all__) == sorted(TRITON_NAMES)


def test_signatures_are_jaxs():
    params = inspect.signature(pl.pallas_call).parameters
    assert list(params) == [
        "kernel", "out_shape", "grid_spec", "grid", "in_specs", "out_specs", "scratch_shapes",
        "input_output_aliases", "debug", "interpret", "name", "compiler_params",
        "cost_estimate", "metadata",
    ]  # fmt: skip
    assert list(inspect.signature(plt.load).parameters) == [
        "ref", "mask", "other", "cache_modifier", "eviction_policy", "volatile",
    ]  # fmt: skip
    assert list(inspect.signature(pl.BlockSpec).parameters) == [
        "block_shape", "index_map", "pipeline_mode", "memory_space",
    ]  # fmt: skip


def test_helpers():
    # Recorded from JAX 0.10.2.
    assert pl.cdiv(7, 2) == 4
    assert pl.next_power_of_2(5) == 8
    assert pl.next_power_of_2(0) == 1
    assert pl.align_to(7, 4) == 8
    assert pl.strides_from_shape((2, 3, 4)) == (12, 4, 1)
    assert int(jit(pl.cdiv)(np.int32(9), np.int32(4))) == 3
    assert repr(pl.Element(4)) == "Element(4)"
    assert repr(pl.Blocked(4)) == "Blocked(4)"
    assert pl.squeezed == pl.Squeezed()
    assert pl.CostEstimate(1, 2, 3).remote_bytes_transferred == 0
    ref = pl.ANY((2,), np.float32)
    assert ref.shape == (2,) and ref.dtype == np.float32
    assert plt.CompilerParams(num_warps=4).num_warps == 4


def test_masked_load_and_store_at_ragged_edges():
    def kernel(x_ref, o_ref):
        i = pl.program_id(0)
        mask = i * 4 + jnp.arange(4) < 10
        v = plt.load(x_ref.at[pl.ds(i * 4, 4)], mask=mask, other=-1.0)
        plt.store(o_ref.at[pl.ds(i * 4, 4)], v * 2, mask=mask)

    f = pl.pallas_call(
        kernel, out_shape=ShapeDtypeStruct((12,), np.float32), grid=(3,), interpret=True
    )
    # Recorded from JAX 0.10.2: masked-off elements are never written (NaN).
    expected = [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, np.nan, np.nan]
    np.testing.assert_array_equal(f(np.arange(12.0, dtype=np.float32)), expected)


def test_masked_load_past_the_end_takes_other():
    def kernel(x_ref, o_ref):
        start = pl.program_id(0) + 4
        o_ref[...] = plt.load(x_ref.at[pl.ds(start, 4)], mask=jnp.arange(4) < 2, other=-1.0)

    x = np.arange(6.0, dtype=np.float32)
    f = pl.pallas_call(
        kernel, out_shape=ShapeDtypeStruct((4,), np.float32), grid=(1,), interpret=True
    )
    # Recorded from JAX 0.10.2, which also refuses a static start past the end.
    np.testing.assert_array_equal(f(x), [4, 5, -1, -1])

    def static(x_ref, o_ref):
        o_ref[...] = plt.load(x_ref.at[pl.ds(4, 4)], mask=jnp.arange(4) < 2, other=-1.0)

    g = pl.pallas_call(static, out_shape=ShapeDtypeStruct((4,), np.float32), interpret=True)
    message = "Out of bound slice: start=4, size=4, stride=1, dim=6."
    with pytest.raises(ValueError, match=re.escape(message)):
        g(x)


def test_atomics_return_the_old_values():
    def kernel(x_ref, o_ref, old_ref):
        o_ref[...] = jnp.zeros_like(o_ref)
        old_ref[...] = plt.atomic_add(o_ref, (pl.ds(0, 4),), x_ref[...])
        plt.atomic_add(o_ref, (pl.ds(0, 4),), x_ref[...])
        plt.atomic_max(o_ref, (pl.ds(4, 4),), x_ref[...])

    f = pl.pallas_call(
        kernel,
        out_shape=(ShapeDtypeStruct((8,), np.float32), ShapeDtypeStruct((4,), np.float32)),
        interpret=True,
    )
    out, old = f(np.arange(4.0, dtype=np.float32) - 1)
    np.testing.assert_array_equal(out, [-2, 0, 2, 4, 0, 0, 1, 2])
    np.testing.assert_array_equal(old, [0, 0, 0, 0])


def test_atomic_cas():
    def kernel(o_ref):
        o_ref[...] = jnp.arange(4, dtype=np.int32)
        plt.atomic_cas(o_ref, 2, 7)

    f = pl.pallas_call(kernel, out_shape=ShapeDtypeStruct((4,), np.int32), interpret=True)
    np.testing.assert_array_equal(f(), [0, 1, 7, 3])


def test_triton_dot_and_hints():
    def kernel(x_ref, y_ref, o_ref):
        x = pl.multiple_of(x_ref[...], 8)
        o_ref[...] = plt.dot(x, plt.max_contiguous(y_ref[...], 8), trans_b=True)

    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    f = pl.pallas_call(kernel, out_shape=ShapeDtypeStruct((3, 3), np.float32), interpret=True)
    np.testing.assert_allclose(f(x, x), x @ x.T)


def test_debug_print_runs_per_grid_point(capsys):
    def kernel(x_ref, o_ref):
        pl.debug_print("x={} i={}", x_ref[0], pl.program_id(0))
        o_ref[...] = x_ref[...]

    f = pl.pallas_call(
        kernel,
        out_shape=ShapeDtypeStruct((8,), np.float32),
        grid=(2,),
        in_specs=[pl.BlockSpec((4,), lambda i: (i,))],
        out_specs=pl.BlockSpec((4,), lambda i: (i,)),
        interpret=True,
    )
    np.asarray(f(np.arange(8.0, dtype=np.float32)))
    assert capsys.readouterr().out.splitlines() == ["x=0.0 i=0", "x=4.0 i=1"]


def test_run_state():
    # Recorded from JAX 0.10.2.
    out = pl.run_state(lambda r: r.__setitem__(..., r[...] + 1))(jnp.ones(3))
    np.testing.assert_array_equal(out, [2, 2, 2])


def test_kernel_over_a_mesh():
    class Mesh:
        def __init__(self):
            self.shape = {"x": 2}

    def body(x_ref, o_ref):
        i = pl.program_id(0)

        @pl.when(i == 0)
        def _():
            o_ref[...] = x_ref[...] * 3

    f = pl.kernel(body, ShapeDtypeStruct((4,), np.float32), mesh=Mesh(), interpret=True)
    np.testing.assert_array_equal(f(np.arange(4.0, dtype=np.float32)), [0, 3, 6, 9])


def test_estimate_cost_and_lowering_text():
    cost = pl.estimate_cost(lambda a, b: a @ b, np.ones((4, 8), np.float32),
                            np.ones((8, 2), np.float32))  # fmt: skip
    assert cost.flops == 2 * 4 * 8 * 2
    assert cost.bytes_accessed == (32 + 16 + 8) * 4
    assert "stablehlo" in pl.lower_as_mlir(lambda a: a + 1, np.ones(3, np.float32))


def test_tpu_only_names_say_so():
    with pytest.raises(NotImplementedError, match="TPU"):
        pl.semaphore_read(None)


def test_debug_prints_the_discharged_kernel(capsys):
    def k(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2

    f = pl.pallas_call(k, out_shape=ShapeDtypeStruct((8,), np.float32), interpret=True,
                       debug=True)  # fmt: skip
    np.asarray(f(np.arange(8.0, dtype=np.float32)))
    lines = capsys.readouterr().out.splitlines()
    # Recorded from JAX 0.10.2 (which also returns the unchanged input block).
    assert lines[1].startswith("Jaxpr of the kernel in pallas_call k at ")
    assert lines[2].startswith("{ lambda ; a:f32[8] b:f32[8]. let c:f32[8] = mul a 2.0:f32[] in")
