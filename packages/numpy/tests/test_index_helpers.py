"""lamina.numpy index helpers against NumPy: tril/triu indices (and their _from
forms), diag_indices(_from), mask_indices, indices, ix_, unravel_index (JAX's
clipping of out-of-range indices, recorded from JAX 0.10.2), ravel_multi_index with
every mode and order, packbits / unpackbits; dtypes, jit and errors."""

import numpy as np
import pytest

import lamina.lax as lax
import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, jit

RNG = np.random.default_rng(4)


def assert_same(got, want, dtype=None):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == (want.dtype if dtype is None else dtype), got.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def assert_tuple(got, want, dtype=np.int32):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert_same(g, w, dtype)


@pytest.mark.parametrize(
    "n, k, m", [(3, 0, None), (4, 1, 6), (5, -2, 2), (0, 0, None), (3, 5, None)]
)
def test_triangle_indices(n, k, m):
    assert_tuple(jnp.tril_indices(n, k, m), np.tril_indices(n, k, m))
    assert_tuple(jnp.triu_indices(n, k, m), np.triu_indices(n, k, m))
    arr = np.zeros((n, n if m is None else m))
    assert_tuple(jnp.tril_indices_from(arr, k), np.tril_indices_from(arr, k))
    assert_tuple(jnp.triu_indices_from(arr, k), np.triu_indices_from(arr, k))


def test_triangle_and_diagonal_errors():
    with pytest.raises(ValueError, match="Only 2-D inputs are accepted"):
        jnp.tril_indices_from(np.zeros(3))
    with pytest.raises(ConcretizationTypeError):
        jit(lambda n: jnp.triu_indices(n))(3)
    with pytest.raises(ValueError, match="must be nonnegative"):
        jnp.diag_indices(-1)
    with pytest.raises(ValueError, match="at least 2-d"):
        jnp.diag_indices_from(np.zeros(3))
    with pytest.raises(ValueError, match="equal length"):
        jnp.diag_indices_from(np.zeros((2, 3)))


def test_diag_and_mask_indices():
    assert_tuple(jnp.diag_indices(4, 3), np.diag_indices(4, 3))
    assert_tuple(jnp.diag_indices_from(np.zeros((3, 3))), np.diag_indices_from(np.zeros((3, 3))))

    def upper(m, k):
        n = m.shape[0]
        rows, cols = (
            lax.broadcasted_iota(np.int32, (n, n), 0),
            lax.broadcasted_iota(np.int32, (n, n), 1),
        )
        return jnp.where(cols - rows >= k, m, 0.0)

    assert_tuple(jnp.mask_indices(4, upper, 1), np.mask_indices(4, np.triu, 1))
    rows, cols = jnp.mask_indices(3, upper, 2, size=3)
    assert rows.tolist() == [0, 0, 0] and cols.tolist() == [2, 0, 0]


def test_indices_and_ix():
    assert_same(jnp.indices((2, 3)), np.indices((2, 3)).astype(np.int32))
    assert_same(jnp.indices((2, 0, 1), dtype=np.int8), np.indices((2, 0, 1), dtype=np.int8))
    assert_tuple(jnp.indices((3, 2), sparse=True), np.indices((3, 2), sparse=True))
    assert_same(jnp.indices(()), np.indices(()).astype(np.int32))
    a, b = np.array([0, 2], np.int32), np.array([1, 0, 3], np.int32)
    assert_tuple(jnp.ix_(a, b), np.ix_(a, b))
    assert_tuple(jnp.ix_(a, np.zeros(0, np.int32)), np.ix_(a, np.zeros(0, np.int32)))
    with pytest.raises(ValueError, match="must be 1-dimensional"):
        jnp.ix_(np.zeros((2, 2), np.int32))
    with pytest.raises(NotImplementedError, match="Boolean arguments"):
        jnp.ix_(np.array([True]))


def test_unravel_and_ravel_multi_index():
    shape = (3, 4, 5)
    flat = RNG.integers(0, 60, (2, 5)).astype(np.int32)
    assert_tuple(jnp.unravel_index(flat, shape), np.unravel_index(flat, shape))
    assert_tuple(jnp.unravel_index(np.int32(7), 10), np.unravel_index(7, 10))
    # Recorded from JAX 0.10.2: negative indices count from the end, the rest clip.
    got = jnp.unravel_index(np.array([5, -1, 9, -7], np.int32), (2, 3))
    assert [g.tolist() for g in got] == [[1, 1, 1, 0], [2, 2, 2, 0]]
    index = tuple(RNG.integers(0, d, (6,)).astype(np.int32) for d in shape)
    for order in ("C", "F"):
        want = np.ravel_multi_index(index, shape, order=order)
        assert_same(jnp.ravel_multi_index(index, shape, order=order), want.astype(np.int32))
    far = (np.array([-1, 3, 9], np.int32), np.array([4, -6, 2], np.int32))
    for mode in ("clip", "wrap"):
        want = np.ravel_multi_index(far, (3, 4), mode=mode).astype(np.int32)
        assert_same(
            jit(lambda i, j, m=mode: jnp.ravel_multi_index((i, j), (3, 4), mode=m))(*far), want
        )
    assert jnp.ravel_multi_index(index, shape, dtype=np.int16).dtype == np.int16
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        jnp.ravel_multi_index(far, (3, 4))
    with pytest.raises(ConcretizationTypeError, match="mode='wrap' or mode='clip'"):
        jit(lambda i: jnp.ravel_multi_index((i,), (4,)))(np.array([1], np.int32))
    with pytest.raises(TypeError, match="only int indices permitted"):
        jnp.ravel_multi_index((np.ones(2, np.float32),), (4,), mode="clip", dtype=np.int32)
    with pytest.raises(ValueError, match="dtype=float32 is not an integer type"):
        jnp.ravel_multi_index((np.ones(2, np.float32),), (4,), mode="clip")
    with pytest.raises(ValueError, match="not large enough"):
        jnp.ravel_multi_index((np.ones(2, np.int8),) * 2, (100, 100), mode="clip")
    with pytest.raises(ValueError, match="invalid order"):
        jnp.ravel_multi_index(index, shape, order="X", mode="clip")


@pytest.mark.parametrize(
    "shape, axis, bitorder",
    [((11,), None, "big"), ((3, 10), 1, "little"), ((17, 2), 0, "big"), ((2, 3, 4), -1, "little")],
)
def test_packbits_roundtrip(shape, axis, bitorder):
    bits = RNG.integers(0, 2, shape)
    for dtype in (np.bool_, np.int32):
        packed = jnp.packbits(bits.astype(dtype), axis=axis, bitorder=bitorder)
        assert_same(packed, np.packbits(bits.astype(dtype), axis=axis, bitorder=bitorder))
    packed = np.packbits(bits, axis=axis, bitorder=bitorder)
    for count in (None, 3, -2, 30):
        want = np.unpackbits(packed, axis=axis, count=count, bitorder=bitorder)
        assert_same(jnp.unpackbits(packed, axis=axis, count=count, bitorder=bitorder), want)


def test_packbits_errors():
    assert jnp.packbits(np.array([2, 0, -1], np.int8)).tolist() == [160]
    with pytest.raises(TypeError, match="integer or boolean"):
        jnp.packbits(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="unsigned byte"):
        jnp.unpackbits(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="'order' must be either 'little' or 'big'"):
        jnp.packbits(np.ones(3, np.int32), bitorder="middle")
