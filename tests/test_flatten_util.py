"""``lamina.flatten_util.ravel_pytree`` as ``jax.flatten_util``'s (JAX 0.10.2): one
vector of the promoted dtype, and an unravel function that restores shapes and dtypes;
results and messages recorded from JAX 0.10.2."""

import numpy as np
import pytest

import lamina
import lamina.numpy as jnp
from lamina.flatten_util import ravel_pytree

TREE = {"a": jnp.ones((2, 3)), "b": (jnp.arange(3), 2.0), "c": np.float16(1)}


def test_ravel_and_unravel():
    flat, unravel = ravel_pytree(TREE)
    assert flat.dtype == np.float32 and flat.shape == (11,)
    np.testing.assert_array_equal(flat, [1, 1, 1, 1, 1, 1, 0, 1, 2, 2, 1])
    back = unravel(flat)
    assert lamina.tree.structure(back) == lamina.tree.structure(TREE)
    assert [x.dtype for x in lamina.tree.leaves(back)] == [
        np.float32,
        np.int32,
        np.float32,
        np.float16,
    ]
    np.testing.assert_array_equal(back["b"][0], [0, 1, 2])
    assert back["a"].shape == (2, 3) and not back["b"][1].weak_type


def test_empty_and_single_dtype_trees():
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and flat.dtype == np.float32 and unravel(flat) == {}
    flat, _ = ravel_pytree([jnp.ones(2, jnp.int32)])
    assert flat.dtype == np.int32


def test_unravel_checks_dtype_and_shape():
    _, unravel = ravel_pytree(TREE)
    with pytest.raises(
        TypeError, match="unravel function given array of dtype int32, but expected dtype float32"
    ):
        unravel(jnp.ones(11, jnp.int32))
    with pytest.raises(ValueError, match=r"expected shape \(11,\)"):
        unravel(jnp.ones(3))


def test_under_jit_and_grad():
    params = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.ones(3)}
    flat, unravel = ravel_pytree(params)
    assert unravel == ravel_pytree(params)[1] and hash(unravel) == hash(ravel_pytree(params)[1])

    def loss(flat):
        p = unravel(flat)
        return jnp.sum(p["w"] ** 2) + jnp.sum(p["b"])

    g = lamina.jit(lamina.grad(loss))(flat)
    np.testing.assert_allclose(g, np.concatenate([np.ones(3), 2 * np.arange(6.0)]))
    gtree = lamina.grad(lambda p: jnp.sum(ravel_pytree(p)[0] ** 2))(params)
    np.testing.assert_allclose(gtree["w"], 2 * params["w"])
