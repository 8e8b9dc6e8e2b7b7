"""The compiled GPU lowering, read as text (no GPU is needed): pallas_call lowered for
"cuda" is the ``__gpu$xla.gpu.triton`` custom call JAX 0.10.2 emits, carrying the
kernel's Triton module."""

import re

import numpy as np
import pytest
from kernels import flash_attention, matmul

import lamina.numpy as jnp
from lamina import lax
from lamina import pallas as pl
from lamina.interpreters import ShapeDtypeStruct, lower_jaxpr, make_jaxpr, mlir_builders
from lamina.pallas import triton as plgpu
from lamina.pallas.call.triton_lowering import lower_kernel_to_triton

A = np.zeros((64, 64), np.float32)
Q = np.zeros((2, 64, 16), np.float32)


def _add(x, y, **kw):
    def add_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...] * 2

    spec = pl.BlockSpec((4,), lambda i: (i,))
    return pl.pallas_call(
        add_kernel, out_shape=ShapeDtypeStruct((10,), np.float32), grid=(3,),
        in_specs=[spec, spec], out_specs=spec, **kw,
    )(x, y)  # fmt: skip


def _triton_text(fun, *args) -> str:
    eqn = make_jaxpr(fun)(*args).jaxpr.eqns[0]
    module = lower_kernel_to_triton(
        eqn.params["jaxpr"], eqn.params["grid_mapping"], "k", mlir_builders.make_context()
    )
    assert module.operation.verify()
    return str(module)


def test_custom_call_as_jax_emits_it():
    x = np.zeros(10, np.float32)
    text = lower_jaxpr(make_jaxpr(_add)(x, x), platform="cuda").as_text()
    # The whole operation (the bytecode string may hold line breaks).
    call = text[text.index("stablehlo.custom_call") : text.index("-> tensor<10xf32>") + 17]
    assert "stablehlo.custom_call @__gpu$xla.gpu.triton(%arg0, %arg1)" in call
    assert "api_version = 4 : i32" in call
    for attr in ("grid_x = 3 : i32", "grid_y = 1 : i32", "grid_z = 1 : i32",
                 "num_stages = 3 : i32", "num_warps = 4 : i32", 'name = "add_kernel"',
                 "debug = false"):  # fmt: skip
        assert attr in call, attr
    assert re.search(r'ir = "ML\\EFR', call)  # the Triton module's MLIR bytecode
    assert "-> tensor<10xf32>" in call


def test_compiler_params_reach_the_call():
    x = np.zeros(10, np.float32)
    f = lambda x, y: _add(x, y, compiler_params=plgpu.CompilerParams(num_warps=8, num_stages=2))  # noqa: E731
    text = lower_jaxpr(make_jaxpr(f)(x, x), platform="cuda").as_text()
    assert "num_warps = 8 : i32" in text and "num_stages = 2 : i32" in text


def test_elementwise_kernel_masks_the_ragged_block():
    x = np.zeros(10, np.float32)
    text = _triton_text(_add, x, x)
    assert "tt.get_program_id x : i32" in text
    # Blocks of 4 over 10 elements: every access is masked against the array's end.
    assert text.count("arith.cmpi slt") == 3
    assert re.search(r"tt.load %\d+, %\d+, %\d+ : tensor<4x!tt.ptr<f32>>", text)
    assert re.search(r"tt.store %\d+, %\d+, %\d+ : tensor<4x!tt.ptr<f32>>", text)


def test_matmul_kernel():
    text = _triton_text(lambda x, y: matmul(x, y, interpret=False), A, A)
    for op in ("tt.get_program_id x", "tt.get_program_id y", "tt.get_program_id z", "scf.if",
               "tt.dot", "tt.load", "tt.store"):  # fmt: skip
        assert op in text, op
    # Whole blocks: no masks.
    assert "arith.cmpi slt" not in text


def test_flash_attention_kernel():
    text = _triton_text(lambda q, k, v: flash_attention(q, k, v, 32, 32, interpret=False),
                        Q, Q, Q)  # fmt: skip
    for op in ("scf.for", "tt.reduce", "math.exp", "tt.dot", "tt.trans"):
        assert op in text, op


def test_unsupported_primitive_is_named():
    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.cumsum(x_ref[...])

    f = pl.pallas_call(kernel, out_shape=ShapeDtypeStruct((8,), np.float32))
    x = np.zeros(8, np.float32)
    with pytest.raises(NotImplementedError, match="Unimplemented primitive in Pallas GPU lowering"):
        _triton_text(f, x)


def test_masked_load_and_store_keep_their_masks():
    def kernel(x_ref, o_ref):
        i = pl.program_id(0)
        mask = i * 4 + jnp.arange(4) < 10
        v = plgpu.load(x_ref.at[pl.ds(i * 4, 4)], mask=mask, other=-1.0)
        plgpu.store(o_ref.at[pl.ds(i * 4, 4)], v * 2, mask=mask)

    f = pl.pallas_call(kernel, out_shape=ShapeDtypeStruct((12,), np.float32), grid=(3,))
    text = _triton_text(f, np.zeros(12, np.float32))
    # The user's mask, and the reference's bounds for the dynamic slice.
    assert re.search(r"tt.load %\d+, %\d+, %\d+ : tensor<4x!tt.ptr<f32>>", text)
    assert re.search(r"tt.store %\d+, %\d+, %\d+ : tensor<4x!tt.ptr<f32>>", text)
    assert "arith.constant -1.000000e+00 : f32" in text


def test_atomics_are_atomic_instructions():
    def kernel(x_ref, o_ref):
        plgpu.atomic_add(o_ref, (pl.ds(0, 4),), x_ref[...])
        plgpu.atomic_max(o_ref, (pl.ds(4, 4),), x_ref[...], mask=jnp.arange(4) < 3)
        plgpu.atomic_cas(o_ref, 0, 1)

    f = pl.pallas_call(kernel, out_shape=ShapeDtypeStruct((8,), np.int32))
    text = _triton_text(f, np.zeros(4, np.int32))
    assert "tt.atomic_rmw add, acq_rel, gpu" in text
    assert "tt.atomic_rmw max, acq_rel, gpu" in text
    assert "tt.atomic_cas acq_rel, gpu" in text


def test_loop_with_a_traced_bound_is_a_while():
    def kernel(x_ref, o_ref):
        n = pl.program_id(0) + 1

        def body(t, acc):
            return acc + x_ref[pl.ds(t * 4, 4)]

        o_ref[...] = lax.fori_loop(0, n, body, jnp.zeros((4,), np.float32))

    f = pl.pallas_call(
        kernel, out_shape=ShapeDtypeStruct((8,), np.float32), grid=(2,),
        in_specs=[pl.BlockSpec((16,), lambda i: (0,))],
        out_specs=pl.BlockSpec((4,), lambda i: (i,)),
    )  # fmt: skip
    x = np.arange(16.0, dtype=np.float32)
    text = _triton_text(f, x)
    assert "scf.while" in text and "scf.condition" in text
    # The same kernel in interpret mode: block i sums the first i + 1 rows of 4.
    g = pl.pallas_call(
        kernel, out_shape=ShapeDtypeStruct((8,), np.float32), grid=(2,),
        in_specs=[pl.BlockSpec((16,), lambda i: (0,))],
        out_specs=pl.BlockSpec((4,), lambda i: (i,)), interpret=True,
    )  # fmt: skip
    np.testing.assert_array_equal(g(x), np.concatenate([x[:4], x[:4] + x[4:8]]))


def test_softmax_and_layer_norm_kernels():
    def softmax_kernel(x_ref, o_ref):
        x = x_ref[...]
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        o_ref[...] = e / jnp.sum(e, axis=-1, keepdims=True)

    def layer_norm_kernel(x_ref, w_ref, o_ref):
        x = x_ref[...]
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        o_ref[...] = (x - mean) * (1 / jnp.sqrt(var + 1e-5)) * w_ref[...]

    x = np.zeros((16, 32), np.float32)
    rows = pl.BlockSpec((4, 32), lambda i: (i, 0))
    f = pl.pallas_call(softmax_kernel, out_shape=ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
                       in_specs=[rows], out_specs=rows)  # fmt: skip
    text = _triton_text(f, x)
    assert text.count('"tt.reduce"') == 2 and "arith.maximumf" in text
    g = pl.pallas_call(
        layer_norm_kernel, out_shape=ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
        in_specs=[rows, pl.BlockSpec((32,), lambda i: (0,))], out_specs=rows,
    )  # fmt: skip
    text = _triton_text(g, x, np.zeros(32, np.float32))
    assert "math.sqrt" in text and "tt.expand_dims" in text
