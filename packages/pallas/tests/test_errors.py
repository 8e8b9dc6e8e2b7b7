"""Bad kernels and specs raise JAX's errors (types and messages recorded from JAX 0.10.2)."""

import re

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina import pallas as pl
from lamina.interpreters import ShapeDtypeStruct

X = np.arange(8.0, dtype=np.float32)
OUT = ShapeDtypeStruct((8,), np.float32)


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def _call(kernel, in_spec, **kw):
    return pl.pallas_call(
        kernel,
        out_shape=OUT,
        grid=(2,),
        in_specs=[in_spec],
        out_specs=pl.BlockSpec((4,), lambda i: (i,)),
        interpret=True,
        **kw,
    )


def test_block_shape_of_the_wrong_rank():
    f = _call(_copy, pl.BlockSpec((4, 4), lambda i: (i,)))
    message = (
        "Block shape for args[0] (= (Blocked(block_size=4), Blocked(block_size=4))) must "
        "have the same number of dimensions as the array shape (8,)."
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        f(X)


def test_index_map_returning_the_wrong_number_of_indices():
    f = _call(_copy, pl.BlockSpec((4,), lambda i: (i, 0)))
    with pytest.raises(ValueError) as info:
        f(X)
    text = str(info.value)
    assert text.startswith("Index map function <lambda> at ")
    assert text.endswith(
        " for args[0] must return 1 values to match block_shape=(Blocked(block_size=4),). "
        "Currently returning 2 values:"
    )


def test_index_map_taking_the_wrong_number_of_indices():
    f = _call(_copy, pl.BlockSpec((4,), lambda i, j: (i,)))
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'j'"):
        f(X)


def test_writing_a_value_bigger_than_the_block():
    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.zeros((8,))

    f = _call(kernel, pl.BlockSpec((4,), lambda i: (i,)))
    message = (
        "Invalid shape for `swap`. Ref shape: (4,). Expected shape: (4,). Value shape: (8,). "
        "Transforms: (). "
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        f(X)


def test_writing_outside_the_block():
    def kernel(x_ref, o_ref):
        o_ref[pl.ds(2, 4)] = x_ref[...]

    f = _call(kernel, pl.BlockSpec((4,), lambda i: (i,)))
    with pytest.raises(ValueError, match=re.escape("Out of bound slice: start=2, size=4, "
                                                   "stride=1, dim=4.")):  # fmt: skip
        f(X)


def test_compiled_mode_on_cpu():
    f = pl.pallas_call(_copy, out_shape=OUT)
    with pytest.raises(
        ValueError, match=re.escape("Only interpret mode is supported on CPU backend.")
    ):
        f(X)


def test_kernel_returning_a_value():
    def kernel(x_ref, o_ref):
        return 1

    f = pl.pallas_call(kernel, out_shape=OUT, interpret=True)
    with pytest.raises(
        ValueError, match=re.escape("should return None. It returns a PyTree: PyTreeDef")
    ):
        f(X)


def test_in_specs_not_matching_the_inputs():
    f = _call(_copy, pl.BlockSpec((4,), lambda i: (i,)))
    message = (
        "Pytree for `in_specs` and `inputs` do not match. There are 1 mismatches, including:\n"
        "    * `in_specs` is a tuple of length 1 but `inputs` is a tuple of length 2, so the "
        "lengths do not match"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        f(X, X)


def test_program_id_of_a_missing_axis():
    def kernel(o_ref):
        o_ref[...] = jnp.zeros(o_ref.shape) + pl.program_id(3)

    f = pl.pallas_call(
        kernel, out_shape=OUT, grid=(2,), out_specs=pl.BlockSpec((4,), lambda i: (i,)),
        interpret=True,
    )  # fmt: skip
    with pytest.raises(ValueError, match=re.escape("Axis 3 is out of bounds for grid (2,)")):
        f()
