"""lamina.random keys: typed key arrays (dtype ``key<fry>``) and raw ``uint32[2]`` keys,
their printed forms, the key functions, keys through jit/vmap/scan, and the errors JAX
raises for bad keys, seeds and shapes."""

import re

import numpy as np
import pytest

import lamina.random as random
from lamina import lax
from lamina.interpreters import enable_x64, jit, vmap
from lamina.ir import dtypes
from lamina.lax import scan


def test_key_repr_dtype_and_shape():
    k = random.key(0)
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert str(k.dtype) == "key<fry>" and k.dtype.name == "key<fry>"
    assert k.shape == () and k.ndim == 0 and k.size == 1 and k.itemsize == 8
    assert dtypes.issubdtype(k.dtype, dtypes.prng_key)
    assert dtypes.issubdtype(k.dtype, dtypes.extended)
    assert k.dtype == random.key_dtype() == random.key_dtype("threefry2x32")
    assert random.key_impl(k) == "threefry2x32"
    assert random.key_impl(random.PRNGKey(0)) == "threefry2x32"


def test_split_keys_repr_indexing_and_iteration():
    ks = random.split(random.key(0), 3)
    assert ks.shape == (3,) and len(ks) == 3
    assert repr(ks[1:]) == (
        "Array((2,), dtype=key<fry>) overlaying:\n"
        "[[ 928981903 3453687069]\n [4146024105 2718843009]]"
    )
    data = np.asarray(random.key_data(ks))
    np.testing.assert_array_equal(random.key_data(ks[-1]), data[2])
    assert [tuple(np.asarray(random.key_data(k))) for k in ks] == [tuple(r) for r in data]
    grid = random.split(random.key(0), (2, 3))
    assert grid.shape == (2, 3) and grid.reshape(6).shape == (6,) and grid[1, 2].shape == ()
    np.testing.assert_array_equal(random.key_data(grid.reshape(-1)[5]), random.key_data(grid[1, 2]))


def test_raw_and_typed_keys_agree():
    raw, typed = random.PRNGKey(5), random.key(5)
    assert raw.dtype == np.uint32 and raw.shape == (2,)
    np.testing.assert_array_equal(raw, random.key_data(typed))
    # Functions returning keys return the kind they were given.
    assert random.split(raw).dtype == np.uint32
    assert str(random.split(typed).dtype) == "key<fry>"
    np.testing.assert_array_equal(random.split(raw, 4), random.key_data(random.split(typed, 4)))
    np.testing.assert_array_equal(random.normal(raw, (3,)), random.normal(typed, (3,)))
    assert random.fold_in(raw, 3).dtype == np.uint32
    np.testing.assert_array_equal(random.key_data(random.fold_in(typed, 3)), random.fold_in(raw, 3))
    np.testing.assert_array_equal(random.key_data(raw), raw)


def test_wrap_key_data_and_clone():
    k = random.wrap_key_data(np.array([1, 2], np.uint32))
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[1 2]"
    assert repr(random.wrap_key_data(np.zeros((2, 2), np.uint32), impl="threefry2x32")).startswith(
        "Array((2,), dtype=key<fry>)"
    )
    c = random.clone(k)
    np.testing.assert_array_equal(random.key_data(c), [1, 2])
    assert random.clone(random.PRNGKey(1)).dtype == np.uint32
    assert bool(random.key(3) == random.key(3)) and not bool(random.key(3) == random.key(4))


def test_seeds():
    np.testing.assert_array_equal(random.PRNGKey(-1), [0, 4294967295])
    np.testing.assert_array_equal(random.PRNGKey(2**40), [0, 0])  # int32 without x64
    np.testing.assert_array_equal(random.PRNGKey(np.int32(-1)), [0, 4294967295])
    np.testing.assert_array_equal(random.PRNGKey(np.uint32(7)), [0, 7])


def test_seeds_x64():

    with enable_x64(True):
        np.testing.assert_array_equal(random.PRNGKey(-1), [4294967295, 4294967295])
        np.testing.assert_array_equal(random.PRNGKey(2**40), [256, 0])
        np.testing.assert_array_equal(random.PRNGKey(np.int32(-1)), [0, 4294967295])
        assert random.uniform(random.key(0), (2,)).dtype == np.float64
        assert random.randint(random.key(0), (2,), 0, 5).dtype == np.int64
        assert random.bits(random.key(0), (2,), np.uint64).dtype == np.uint64


def test_typed_keys_through_jit_vmap_and_scan():
    k = random.key(1)
    out = jit(lambda k: random.split(k))(k)
    assert isinstance(out, lax.PRNGKeyArray) and out.shape == (2,)
    np.testing.assert_array_equal(random.key_data(out), random.key_data(random.split(k)))
    made = jit(lambda s: random.key(s))(np.int32(7))
    np.testing.assert_array_equal(random.key_data(made), [0, 7])
    ks = random.split(k, 4)
    batched = vmap(lambda k: random.uniform(k, (2,)))(ks)
    looped = np.stack([np.asarray(random.uniform(ks[i], (2,))) for i in range(4)])
    np.testing.assert_array_equal(batched, looped)

    def step(key, _):
        key, sub = random.split(key)
        return key, random.normal(sub)

    _, draws = scan(step, k, None, length=3)
    key, want = k, []
    for _ in range(3):
        key, sub = random.split(key)
        want.append(np.asarray(random.normal(sub)))
    np.testing.assert_array_equal(draws, want)


KEY_DATA_SHAPE = re.escape(
    "JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); got "
    "shape=(3,)"
)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: random.normal(np.zeros(3, np.uint32)), TypeError, KEY_DATA_SHAPE),
        (
            lambda: random.normal(np.zeros(2, np.float32)),
            TypeError,
            "expected key_data.dtype = uint32; got dtype=float32",
        ),
        (
            lambda: random.normal(np.zeros((2, 2), np.uint32)),
            ValueError,
            r"normal accepts a single key, but was given a key array of shape \(2, 2\) != \(\)",
        ),
        (
            lambda: random.split(random.split(random.key(0))),
            ValueError,
            r"split accepts a single key, but was given a key array of shape \(2,\)",
        ),
        (lambda: random.normal([0, 0]), TypeError, "unexpected PRNG key type <class 'list'>"),
        (lambda: random.normal(5), TypeError, "expected key_data to have ndim, shape, and dtype"),
        (lambda: random.normal(random.key(0), (2.5,)), TypeError, "Shapes must be 1D sequences"),
        (lambda: random.normal(random.key(0), (-1,)), ValueError, "negative dimensions"),
        (
            lambda: random.uniform(random.key(0), (2,), np.int32),
            ValueError,
            "dtype argument to `uniform` must be a float dtype, got int32",
        ),
        (
            lambda: random.randint(random.key(0), (2,), 0, 3, np.float32),
            TypeError,
            "randint only accepts integer dtypes, got float32",
        ),
        (
            lambda: random.bits(random.key(0), (2,), np.int32),
            ValueError,
            "dtype argument to `bits` must be an unsigned int dtype, got int32",
        ),
        (
            lambda: random.PRNGKey(np.zeros(2, np.int32)),
            TypeError,
            r"PRNGKey accepts a scalar seed, but was given an array of shape \(2,\)",
        ),
        (lambda: random.PRNGKey(1.5), TypeError, "PRNG key seed must be an integer"),
        (
            lambda: random.key(random.key(0)),
            TypeError,
            "key accepts a scalar seed, but was given a PRNG key",
        ),
        (
            lambda: random.fold_in(random.key(0), np.arange(2)),
            TypeError,
            "fold_in accepts a scalar",
        ),
        (lambda: random.fold_in(random.key(0), -3), OverflowError, "out of bounds for uint32"),
        (lambda: random.key(0, impl="foo"), ValueError, 'unrecognized PRNG implementation "foo"'),
        (lambda: random.wrap_key_data(np.zeros(3, np.uint32)), TypeError, KEY_DATA_SHAPE),
        (
            lambda: random.bernoulli(random.key(0), 1),
            TypeError,
            "bernoulli probability `p` must have a floating dtype, got int32",
        ),
        (
            lambda: random.choice(random.key(0), 3, (5,), replace=False),
            ValueError,
            r"Cannot take a larger sample \(size 5\) than population \(size 3\)",
        ),
        (
            lambda: random.uniform(random.key(0), (2,), minval=np.zeros(3, np.float32)),
            TypeError,
            r"mul got incompatible shapes for broadcasting: \(2,\), \(3,\)",
        ),
        (
            lambda: random.multivariate_normal(random.key(0), np.zeros(2), np.eye(2), method="qr"),
            ValueError,
            "method must be one of",
        ),
        (
            lambda: random.gamma(random.key(0), np.ones(2, np.float32), (3,)),
            ValueError,
            "Incompatible shapes for broadcasting",
        ),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
