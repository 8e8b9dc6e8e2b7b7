"""Kernels in interpret mode against NumPy: elementwise, reductions, a blocked matmul
over a K grid axis, softmax, layer norm, flash attention; ragged edges, scratch
buffers, aliasing, Element blocks, run_scoped."""

import functools

import numpy as np
import pytest
from kernels import attention_reference, flash_attention, matmul

import lamina.numpy as jnp
from lamina import pallas as pl
from lamina.interpreters import ShapeDtypeStruct, jit

RNG = np.random.default_rng(0)


def _normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _blocked(kernel, shape, block, grid, n_in=1, **kw):
    spec = pl.BlockSpec(block, lambda i: (i,) + (0,) * (len(block) - 1))
    return pl.pallas_call(
        kernel,
        out_shape=ShapeDtypeStruct(shape, np.float32),
        grid=grid,
        in_specs=[spec] * n_in,
        out_specs=spec,
        interpret=True,
        **kw,
    )


def test_elementwise_whole_array():
    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = jnp.sin(x_ref[...]) * y_ref[...] + 1

    x, y = _normal(8, 16), _normal(8, 16)
    f = pl.pallas_call(kernel, out_shape=ShapeDtypeStruct(x.shape, x.dtype), interpret=True)
    np.testing.assert_allclose(f(x, y), np.sin(x) * y + 1, rtol=1e-6, atol=1e-6)


def test_elementwise_over_a_grid():
    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    x, y = _normal(64, 8), _normal(64, 8)
    f = _blocked(kernel, x.shape, (16, 8), (4,), n_in=2)
    np.testing.assert_array_equal(f(x, y), x + y)


def test_ragged_edge_is_padded_and_cut_off():
    # Recorded from JAX 0.10.2: the last block reads past the end, and only the
    # array's elements come back.
    f = _blocked(lambda a, o: o.__setitem__(..., a[...] + 1), (10,), (4,), (3,))
    np.testing.assert_array_equal(f(np.arange(10.0, dtype=np.float32)), np.arange(1.0, 11.0))


def test_out_of_bounds_reads_are_nan():
    def kernel(a, o):
        o[...] = jnp.sum(a[...], keepdims=True) * jnp.ones((4,))

    f = _blocked(kernel, (10,), (4,), (3,))
    # Recorded from JAX 0.10.2: the padding of the last block is NaN.
    expected = [6, 6, 6, 6, 22, 22, 22, 22, np.nan, np.nan]
    np.testing.assert_array_equal(f(np.arange(10.0, dtype=np.float32)), expected)


def test_row_reduction():
    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.sum(x_ref[...], axis=1)

    x = _normal(32, 64)
    f = pl.pallas_call(
        kernel,
        out_shape=ShapeDtypeStruct((32,), np.float32),
        grid=(4,),
        in_specs=[pl.BlockSpec((8, 64), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8,), lambda i: (i,)),
        interpret=True,
    )
    np.testing.assert_allclose(f(x), x.sum(1), rtol=1e-5, atol=1e-5)


def test_reduction_over_a_grid_axis_with_scratch():
    def kernel(x_ref, o_ref, acc_ref):
        @pl.when(pl.program_id(0) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)

        acc_ref[...] += x_ref[...]

        @pl.when(pl.program_id(0) == pl.num_programs(0) - 1)
        def _():
            o_ref[...] = acc_ref[...]

    x = _normal(40, 8)
    f = pl.pallas_call(
        kernel,
        out_shape=ShapeDtypeStruct((8, 8), np.float32),
        grid=(5,),
        in_specs=[pl.BlockSpec((8, 8), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, 8), lambda i: (0, 0)),
        scratch_shapes=[pl.ANY((8, 8), np.float32)],
        interpret=True,
    )
    np.testing.assert_allclose(f(x), x.reshape(5, 8, 8).sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(64, 96, 64), (48, 80, 40)])
def test_blocked_matmul_accumulates_over_k(shape):
    m, k, n = shape
    x, y = _normal(m, k), _normal(k, n)
    bk = 32 if k % 32 == 0 else 16
    out = matmul(x, y, bm=16, bn=8 if n % 16 else 16, bk=bk)
    np.testing.assert_allclose(out, x @ y, rtol=1e-4, atol=1e-4)


def test_softmax():
    def kernel(x_ref, o_ref):
        x = x_ref[...]
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        o_ref[...] = e / jnp.sum(e, axis=-1, keepdims=True)

    x = _normal(16, 32)
    out = _blocked(kernel, x.shape, (4, 32), (4,))(x)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_layer_norm():
    def kernel(x_ref, w_ref, b_ref, o_ref, *, eps):
        x = x_ref[...]
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        o_ref[...] = (x - mean) * lax_rsqrt(var + eps) * w_ref[...] + b_ref[...]

    def lax_rsqrt(v):
        return 1 / jnp.sqrt(v)

    x, w, b = _normal(24, 16), _normal(16), _normal(16)
    f = pl.pallas_call(
        functools.partial(kernel, eps=1e-5),
        out_shape=ShapeDtypeStruct(x.shape, x.dtype),
        grid=(3,),
        in_specs=[
            pl.BlockSpec((8, 16), lambda i: (i, 0)),
            pl.BlockSpec((16,), lambda i: (0,)),
            pl.BlockSpec((16,), lambda i: (0,)),
        ],
        out_specs=pl.BlockSpec((8, 16), lambda i: (i, 0)),
        interpret=True,
    )
    mean = x.mean(-1, keepdims=True)
    expected = (x - mean) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(f(x, w, b), expected, rtol=1e-4, atol=1e-5)


def test_flash_attention_forward():
    q, k, v = _normal(2, 64, 16), _normal(2, 64, 16), _normal(2, 64, 16)
    out = flash_attention(q, k, v, block_q=16, block_k=16)
    np.testing.assert_allclose(out, attention_reference(q, k, v), rtol=1e-4, atol=1e-5)


def test_jit_of_a_kernel_is_one_program():
    x, y = _normal(32, 32), _normal(32, 32)
    f = jit(functools.partial(matmul, bm=16, bn=16, bk=16))
    np.testing.assert_allclose(f(x, y), x @ y, rtol=1e-4, atol=1e-4)
    text = f.lower(x, y).as_text()
    # The grid is a loop in the program, not Python unrolling it.
    assert text.count("stablehlo.while") == 1
    assert text.count("stablehlo.dot_general") == 1


def test_input_output_aliases():
    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    f = pl.pallas_call(
        kernel,
        out_shape=ShapeDtypeStruct((4,), np.float32),
        input_output_aliases={1: 0},
        interpret=True,
    )
    np.testing.assert_array_equal(f(np.arange(4.0, dtype=np.float32), np.ones(4, np.float32)),
                                  [1, 2, 3, 4])  # fmt: skip


def test_element_block_with_padding():
    # Recorded from JAX 0.10.2: Element offsets index the padded array, whose padding
    # is NaN.
    def kernel(x, o):
        o[...] = x[1:3] + x[0] + x[3]

    f = pl.pallas_call(
        kernel,
        out_shape=ShapeDtypeStruct((6,), np.float32),
        grid=(3,),
        in_specs=[pl.BlockSpec((pl.Element(4, (1, 1)),), lambda i: (i * 2,))],
        out_specs=pl.BlockSpec((2,), lambda i: (i,)),
        interpret=True,
    )
    expected = [np.nan, np.nan, 7, 8, np.nan, np.nan]
    np.testing.assert_array_equal(f(np.arange(6.0, dtype=np.float32)), expected)


def test_squeezed_dimension():
    def kernel(x_ref, o_ref):
        assert x_ref.shape == (8,)
        o_ref[...] = x_ref[...] * 2

    x = _normal(3, 8)
    f = pl.pallas_call(
        kernel,
        out_shape=ShapeDtypeStruct(x.shape, x.dtype),
        grid=(3,),
        in_specs=[pl.BlockSpec((pl.squeezed, 8), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((None, 8), lambda i: (i, 0)),
        interpret=True,
    )
    np.testing.assert_array_equal(f(x), x * 2)


def test_run_scoped_and_views():
    def kernel(x_ref, o_ref):
        def body(s_ref):
            s_ref[...] = x_ref[...] + 1
            o_ref[...] = jnp.zeros_like(o_ref)
            o_ref.at[1:5][...] = s_ref.at[2:6][...] * 2

        pl.run_scoped(body, pl.ANY((8,), np.float32))

    f = pl.pallas_call(kernel, out_shape=ShapeDtypeStruct((8,), np.float32), interpret=True)
    np.testing.assert_array_equal(f(np.arange(8.0, dtype=np.float32)), [0, 6, 8, 10, 12, 0, 0, 0])


def test_loop_and_program_ids_in_nested_control_flow():
    def kernel(o_ref):
        i = pl.program_id(0)

        @pl.loop(0, 4)
        def _(t):
            @pl.when(t == i)
            def _():
                o_ref[t] = (i * 10).astype(np.float32)

    f = pl.pallas_call(
        kernel,
        out_shape=ShapeDtypeStruct((2, 4), np.float32),
        grid=(2,),
        out_specs=pl.BlockSpec((None, 4), lambda i: (i, 0)),
        interpret=True,
    )
    out = np.asarray(f())
    np.testing.assert_array_equal(out[0, 0], 0)
    np.testing.assert_array_equal(out[1, 1], 10)


@pytest.mark.parametrize(
    "dtype, unwritten", [(np.int32, np.iinfo(np.int32).min), (np.bool_, False)]
)
def test_unwritten_output_blocks_hold_the_uninitialized_value(dtype, unwritten):
    def kernel(o_ref):
        @pl.when(pl.program_id(0) == 0)
        def _():
            o_ref[...] = jnp.ones(o_ref.shape, o_ref.dtype)

    f = pl.pallas_call(
        kernel, out_shape=ShapeDtypeStruct((4,), dtype), grid=(2,),
        out_specs=pl.BlockSpec((2,), lambda i: (i,)), interpret=True,
    )  # fmt: skip
    # Recorded from JAX 0.10.2.
    np.testing.assert_array_equal(f(), np.array([1, 1, unwritten, unwritten], dtype))
