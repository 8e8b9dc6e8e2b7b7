"""``zeros_like``, ``ones_like``, ``empty_like`` and ``full_like`` take anything with a
``shape`` and a ``dtype`` as the prototype (a ``ShapeDtypeStruct``, ``eval_shape``'s
output), as JAX 0.10.2 does; other non-arrays get JAX's TypeError."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import ShapeDtypeStruct, eval_shape, jit
from lamina.ir import tree_util


class ShapeAndDtype:
    shape = (2,)
    dtype = np.dtype("int8")


@pytest.mark.parametrize(
    "make,fill",
    [
        (jnp.zeros_like, 0),
        (jnp.ones_like, 1),
        (jnp.empty_like, 0),
        (lambda p, **k: jnp.full_like(p, 7, **k), 7),
    ],
)
def test_shape_dtype_prototypes(make, fill):
    for prototype in (
        ShapeDtypeStruct((2, 3), np.float32),
        eval_shape(lambda x: x * 2, np.ones((2, 3), np.float32)),
    ):
        out = make(prototype)
        assert out.shape == (2, 3) and out.dtype == np.float32
        np.testing.assert_array_equal(out, np.full((2, 3), fill, np.float32))
        assert make(prototype, dtype=np.int8).dtype == np.int8
        assert make(prototype, shape=(4,)).shape == (4,)
    out = make(ShapeAndDtype())
    assert out.shape == (2,) and out.dtype == np.int8


def test_prototypes_under_jit_and_tree_map():
    structs = {"a": ShapeDtypeStruct((3,), np.int32), "b": ShapeDtypeStruct((), np.float32)}
    zeros = jit(lambda: tree_util.tree_map(jnp.zeros_like, structs))()
    assert zeros["a"].dtype == np.int32 and zeros["a"].shape == (3,)
    assert zeros["b"].dtype == np.float32 and zeros["b"].shape == ()


def test_shape_dtype_prototypes_are_never_weakly_typed():
    # recorded from JAX 0.10.2: a ShapeDtypeStruct's weak_type is not looked at
    weak = ShapeDtypeStruct((2,), np.float32, weak_type=True)
    assert not jnp.zeros_like(weak).weak_type
    assert not lax.full_like(weak, 1.0).weak_type
    assert jnp.zeros_like(jnp.asarray(1.0) + 1).weak_type


def test_non_arrays_still_get_jax_errors():
    # recorded from JAX 0.10.2
    with pytest.raises(
        TypeError,
        match=r"zeros_like requires ndarray or scalar arguments, got <class 'list'> at position 0",
    ):
        jnp.zeros_like([1, 2])
    with pytest.raises(
        TypeError,
        match=r"full_like requires ndarray or scalar arguments, got <class 'str'> at position 1",
    ):
        jnp.full_like(ShapeDtypeStruct((2,), np.float32), "a")
