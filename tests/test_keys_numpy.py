"""lamina.numpy functions on typed PRNG keys, as JAX 0.10.2 has them."""

import numpy as np

import lamina as jax
import lamina.numpy as jnp

KEYS = jax.random.split(jax.random.key(0), 3)


def test_filled_like_keys_hold_their_fill_in_the_key_data():
    for fun, fill in ((jnp.zeros_like, 0), (jnp.ones_like, 1), (jnp.empty_like, 0)):
        out = fun(KEYS)
        assert out.dtype == KEYS.dtype and out.shape == (3,)
        np.testing.assert_array_equal(jax.random.key_data(out), np.full((3, 2), fill, np.uint32))
    full = jnp.full_like(KEYS, 5, shape=(2, 2))
    np.testing.assert_array_equal(jax.random.key_data(full), np.full((2, 2, 2), 5, np.uint32))


def test_zeros_like_of_keys_prints_as_jax():
    assert str(jax.make_jaxpr(jnp.zeros_like)(KEYS)) == (
        "{ lambda ; a:key<fry>[3]. let\n"
        "    b:u32[3,2] = broadcast_in_dim 0:u32[]\n"
        "    c:key<fry>[3] = random_wrap[impl=fry] b\n"
        "  in (c,) }"
    )


def test_selection_and_stacking_of_keys():
    data = np.asarray(jax.random.key_data(KEYS))
    picked = jnp.where(jnp.array([True, False, True]), KEYS, KEYS[::-1])
    want = np.where([[True], [False], [True]], data, data[::-1])
    np.testing.assert_array_equal(jax.random.key_data(picked), want)
    stacked = jnp.stack([KEYS, KEYS])
    assert stacked.shape == (2, 3) and stacked.dtype == KEYS.dtype
    taken = jnp.take(KEYS, jnp.array([2, 0]))
    np.testing.assert_array_equal(jax.random.key_data(taken), data[[2, 0]])


def test_new_axes_are_inserted_as_jax_inserts_them():
    # Recorded from JAX 0.10.2: `None` in an index is expand_dims (broadcast_in_dim).
    assert str(jax.make_jaxpr(lambda k: k[None].reshape(1, 1))(jax.random.key(0))) == (
        "{ lambda ; a:key<fry>[]. let\n"
        "    b:key<fry>[1] = broadcast_in_dim a\n"
        "    c:key<fry>[1,1] = reshape[dimensions=None new_sizes=(1, 1) sharding=None] b\n"
        "  in (c,) }"
    )
    x = np.ones((2, 3), np.float32)
    assert str(jax.make_jaxpr(lambda a: a[None])(x)) == (
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[1,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n"
        "  in (b,) }"
    )
