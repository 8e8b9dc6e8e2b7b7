"""`lamina.experimental.pallas` (and its short name `lamina.pallas`) as JAX users import
it: `from jax.experimental import pallas as pl`, `...pallas import triton as plgpu`."""

import subprocess
import sys

import numpy as np

import lamina as jax
import lamina.numpy as jnp
from lamina.experimental import pallas as pl
from lamina.experimental.pallas import triton as plgpu


def test_short_name_and_jax_path_are_the_same_layer():
    assert pl.pallas_call is jax.pallas.pallas_call
    assert plgpu.load is jax.pallas.triton.load
    assert "pallas" not in jax.__all__  # as JAX's top level has none


def test_a_kernel_under_jit_as_jax_users_write_it():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2 + pl.program_id(0).astype(jnp.float32)

    f = jax.jit(
        pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct((8,), jnp.float32),
            grid=(2,),
            in_specs=[pl.BlockSpec((4,), lambda i: (i,))],
            out_specs=pl.BlockSpec((4,), lambda i: (i,)),
            interpret=True,
        )
    )
    x = np.arange(8.0, dtype=np.float32)
    np.testing.assert_array_equal(f(x), x * 2 + np.repeat([0.0, 1.0], 4))


def test_import_in_a_fresh_process():
    code = "import lamina.experimental.pallas.triton as t; print(t.CompilerParams(num_warps=2))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "CompilerParams(num_warps=2, num_stages=None)", result.stderr
