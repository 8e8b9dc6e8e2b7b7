"""lamina.extend.random: PRNG implementations and seeding (values recorded from JAX 0.10.2)."""

import numpy as np

import lamina as jax
import lamina.numpy as jnp
from lamina.extend import random as xrandom


def test_seed_with_threefry():
    key = xrandom.seed_with_impl(xrandom.threefry_prng_impl, 42)
    assert str(key.dtype) == "key<fry>" and key.shape == ()
    np.testing.assert_array_equal(jax.random.key_data(key), [0, 42])
    keys = xrandom.random_seed(jnp.arange(3), xrandom.threefry_prng_impl)
    np.testing.assert_array_equal(jax.random.key_data(keys), [[0, 0], [0, 1], [0, 2]])
    assert xrandom.threefry_prng_impl.name == "threefry2x32"
    assert xrandom.threefry_prng_impl.tag == "fry"
    # the same bits as lamina.random from an equal key
    np.testing.assert_array_equal(
        jax.random.bits(key, (3,)), jax.random.bits(jax.random.key(42), (3,))
    )


def test_threefry_hash():
    out = xrandom.threefry_2x32(jnp.array([1, 2], jnp.uint32), jnp.arange(4, dtype=jnp.uint32))
    np.testing.assert_array_equal(out, [4128513521, 3192206206, 2345921600, 3057534555])
    jaxpr = jax.make_jaxpr(xrandom.threefry_2x32)(
        jnp.array([1, 2], jnp.uint32), jnp.arange(4, dtype=jnp.uint32)
    )
    assert "threefry2x32" in str(jaxpr)
    assert xrandom.threefry2x32_p.name == "threefry2x32"


def test_rbg_impls():
    # recorded from JAX 0.10.2 (CPU)
    assert {"rbg_prng_impl", "unsafe_rbg_prng_impl"} <= set(dir(xrandom))
    bits = [1713891541, 3781805453, 3159862348, 2600524760]
    k = jax.random.key(0, impl=xrandom.rbg_prng_impl)
    assert str(k.dtype) == "key<rbg>"
    np.testing.assert_array_equal(jax.random.key_data(k), [0, 0, 0, 0])
    np.testing.assert_array_equal(jax.random.bits(k, (4,)), bits)
    np.testing.assert_array_equal(
        jax.random.key_data(jax.random.split(k)),
        [[1797259609, 2579123966, 1797259609, 2579123966], [928981903, 3453687069] * 2],
    )
    np.testing.assert_array_equal(
        jax.random.key_data(jax.random.fold_in(k, 3)), [2467461003, 3840466878] * 2
    )
    u = jax.random.key(0, impl=xrandom.unsafe_rbg_prng_impl)
    assert str(u.dtype) == "key<urbg>"
    np.testing.assert_array_equal(jax.random.bits(u, (4,)), bits)
    np.testing.assert_array_equal(
        jax.random.key_data(jax.random.split(u)),
        [bits, [3614953066, 3503513258, 724076422, 3372229774]],
    )
    np.testing.assert_array_equal(
        jax.random.key_data(jax.random.fold_in(u, 3)),
        [56543296, 1826787333, 2453521982, 2503663989],
    )
