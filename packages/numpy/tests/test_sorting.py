"""lamina.numpy sorting against NumPy: sort, argsort (stable, descending), lexsort,
sort_complex, partition / argpartition (JAX's output order, recorded from JAX 0.10.2)
and searchsorted with every method; NaN ordering, empty arrays, dtypes, jit, vmap,
gradients and errors."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import enable_x64, jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(1)
WITH_NAN = np.array([3.0, np.nan, 1.0, 2.0, np.nan, -1.0, 2.0, -np.inf], np.float32)

ARRAYS = [
    WITH_NAN,
    RNG.integers(-5, 5, (3, 7)).astype(np.int32),
    RNG.integers(0, 4, (2, 3, 5)).astype(np.uint8),
    RNG.integers(0, 2, (9,)).astype(np.bool_),
    RNG.standard_normal((4, 6)).astype(np.float16),
    (RNG.integers(0, 3, (5,)) + 1j * RNG.integers(0, 3, (5,))).astype(np.complex64),
    np.zeros((0, 3), np.float32),
    np.zeros((2, 0), np.int32),
]


def _desc_stable_argsort(x, axis):
    """NumPy reference of JAX's stable descending argsort: equal elements keep their
    original order."""
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    out = (n - 1 - np.argsort(x[..., ::-1], axis=-1, kind="stable"))[..., ::-1]
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize(
    "case", range(len(ARRAYS)), ids=lambda i: f"{ARRAYS[i].dtype}{ARRAYS[i].shape}"
)
def test_sort_and_argsort_match_numpy(case):
    x = ARRAYS[case]
    axis = (-1, 0, None)[case % 3]
    along = 0 if axis is None else axis

    def sorts(x):
        return (
            jnp.sort(x, axis=axis),
            jnp.argsort(x, axis=axis),
            jnp.sort(x, axis=along, descending=True),
            jnp.argsort(x, axis=along, descending=True),
        )

    ascending, order, descending, desc_order = jit(sorts)(x)
    assert ascending.dtype == x.dtype and order.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(ascending), np.sort(x, axis=axis))
    np.testing.assert_array_equal(np.asarray(order), np.argsort(x, axis=axis, kind="stable"))
    want = np.flip(np.sort(x, axis=along), axis=along)
    np.testing.assert_array_equal(np.asarray(descending), want)
    np.testing.assert_array_equal(np.asarray(desc_order), _desc_stable_argsort(x, along))


def test_recorded_descending_order_and_index_dtype():
    # Recorded from JAX 0.10.2: NaNs first, equal elements in their original order.
    x = np.array([3.0, np.nan, 1.0, 2.0, np.nan, -1.0], np.float32)
    assert jnp.argsort(x, descending=True).tolist() == [1, 4, 0, 3, 2, 5]
    assert jnp.argsort(x).tolist() == [5, 2, 3, 0, 1, 4]
    assert jnp.argsort(x, dtype=np.int16).dtype == np.int16
    unstable = jnp.argsort(x, stable=False)
    np.testing.assert_array_equal(np.sort(x)[:4], x[np.asarray(unstable)][:4])


def test_lexsort_and_sort_complex():
    keys = [RNG.integers(0, 3, (4, 6)) for _ in range(3)]
    for axis in (0, -1):
        got = jnp.lexsort([k.astype(np.int32) for k in keys], axis=axis)
        np.testing.assert_array_equal(np.asarray(got), np.lexsort(keys, axis=axis))
    assert jnp.lexsort([np.array(1)]).shape == ()
    stacked = np.stack(keys)[:, 0].astype(np.int32)  # a 2-d array: rows are the keys
    np.testing.assert_array_equal(np.asarray(jnp.lexsort(stacked)), np.lexsort(stacked))
    x = np.array([3, 1, 2], np.int32)
    got = jnp.sort_complex(x)
    assert got.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(got), np.sort_complex(x))
    z = np.array([1 + 2j, 1 - 1j, -3 + 0j], np.complex64)
    np.testing.assert_array_equal(np.asarray(jnp.sort_complex(z)), np.sort_complex(z))


def test_partition_recorded_from_jax():
    # JAX's layout: the kth+1 smallest ascending, then the rest in descending order.
    x = np.array([3.0, np.nan, 1.0, 2.0, np.nan, -1.0], np.float32)
    np.testing.assert_array_equal(
        np.asarray(jnp.partition(x, 2)), np.array([-1.0, 1.0, 2.0, np.nan, np.nan, 3.0], np.float32)
    )
    assert jnp.argpartition(x, 2).tolist() == [5, 2, 3, 0, 1, 4]
    ints = np.array([5, 1, 4, 2, 3, 0], np.int32)
    assert jnp.partition(ints, 2).tolist() == [0, 1, 2, 5, 4, 3]
    assert jnp.argpartition(ints, 2).tolist() == [5, 1, 3, 0, 2, 4]
    y = np.array([0.3, -1.2, 2.5, 0.7, 1.9, -0.4, 3.3], np.float32)
    np.testing.assert_array_equal(
        np.asarray(jnp.partition(y, 2)), np.array([-1.2, -0.4, 0.3, 3.3, 2.5, 1.9, 0.7], np.float32)
    )
    assert jnp.argpartition(y, 2).tolist() == [1, 5, 0, 2, 3, 4, 6]
    assert jnp.partition(ints.astype(np.uint8), 2).dtype == np.uint8
    assert jnp.partition(ints.astype(np.uint8), 2).tolist() == [0, 1, 2, 5, 4, 3]


@pytest.mark.parametrize("kth, axis", [(0, 0), (3, -1), (-1, 1), (2, 0)])
def test_partition_properties(kth, axis):
    x = RNG.standard_normal((5, 6, 4)).astype(np.float32)
    got = np.asarray(jnp.partition(x, kth, axis=axis))
    idx = np.asarray(jnp.argpartition(x, kth, axis=axis))
    k = kth % x.shape[axis]
    by_index = np.take_along_axis(x, idx, axis=axis)
    np.testing.assert_array_equal(
        np.take(by_index, range(k + 1), axis=axis), np.take(got, range(k + 1), axis=axis)
    )
    # The rest: partition's in descending order, argpartition's in increasing index order.
    rest = np.take(got, range(k + 1, x.shape[axis]), axis=axis)
    np.testing.assert_array_equal(rest, np.flip(np.sort(rest, axis=axis), axis=axis))
    rest_idx = np.take(idx, range(k + 1, x.shape[axis]), axis=axis)
    np.testing.assert_array_equal(rest_idx, np.sort(rest_idx, axis=axis))
    pivot = np.take(got, [k], axis=axis)
    np.testing.assert_array_equal(pivot, np.take(np.sort(x, axis=axis), [k], axis=axis))
    assert np.all(np.take(got, range(k), axis=axis) <= pivot)
    assert np.all(np.take(got, range(k + 1, x.shape[axis]), axis=axis) >= pivot)
    np.testing.assert_array_equal(np.sort(idx, axis=axis), np.indices(x.shape)[axis % 3])


METHODS = ["scan", "scan_unrolled", "sort", "compare_all"]


@pytest.mark.parametrize("method", METHODS)
def test_searchsorted_matches_numpy(method):
    a = np.sort(np.array([1.0, 2.0, 2.0, np.nan, -np.inf, 5.0, 2.0], np.float32))
    v = np.array([[np.nan, 2.0, 0.0], [7.0, -np.inf, 2.5]], np.float32)
    ints = np.array([4, 3, 5, 1, 2], np.int32)
    sorter = np.argsort(ints).astype(np.int32)
    vals = np.array([0, 3, 8, 1.5, 2], np.float32)

    def searches(a, v, ints, sorter, vals):
        return (
            jnp.searchsorted(a, v, side="left", method=method),
            jnp.searchsorted(a, v, side="right", method=method),
            jnp.searchsorted(ints, vals, sorter=sorter, method=method),
            jnp.searchsorted(jnp.sort(ints), 2.5, method=method),
        )

    left, right, sorted_by, scalar = jit(searches)(a, v, ints, sorter, vals)
    assert left.dtype == np.int32 and left.shape == v.shape and scalar.shape == ()
    np.testing.assert_array_equal(np.asarray(left), np.searchsorted(a, v, side="left"))
    np.testing.assert_array_equal(np.asarray(right), np.searchsorted(a, v, side="right"))
    np.testing.assert_array_equal(np.asarray(sorted_by), np.searchsorted(ints, vals, sorter=sorter))
    assert int(scalar) == np.searchsorted(np.sort(ints), 2.5)


def test_searchsorted_complex_empty_and_lengths():
    a = np.sort(np.array([1 + 1j, 1 - 1j, 0j, 2 + 0j], np.complex64))
    v = np.array([1 + 0j, 1 + 1j, 3j], np.complex64)
    for method in ("scan", "sort"):
        got = jnp.searchsorted(a, v, method=method)
        np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, v))
    empty = jnp.searchsorted(np.zeros(0, np.float32), v.real)
    np.testing.assert_array_equal(np.asarray(empty), np.zeros(v.shape, np.int32))
    for n, method in ((1, "scan"), (8, "scan_unrolled"), (9, "compare_all")):
        a = np.arange(n, dtype=np.int32)
        v = np.arange(-1, n + 1, dtype=np.int32)
        got = jnp.searchsorted(a, v, side="right", method=method)
        np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, v, side="right"))


def test_jit_and_vmap_match_eager():
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    sort_jit = jit(lambda x: jnp.sort(x, axis=0, descending=True))
    np.testing.assert_array_equal(
        np.asarray(sort_jit(x)), np.asarray(jnp.sort(x, 0, descending=True))
    )
    batched = vmap(lambda r: jnp.argsort(r))(x)
    np.testing.assert_array_equal(np.asarray(batched), np.stack([np.argsort(r) for r in x]))
    a = np.sort(x, axis=1)
    v = RNG.standard_normal((3, 4)).astype(np.float32)
    want = np.stack([np.searchsorted(ai, vi) for ai, vi in zip(a, v, strict=True)])
    for method in ("scan", "sort"):
        got = vmap(lambda a, v, m=method: jnp.searchsorted(a, v, method=m))(a, v)
        np.testing.assert_array_equal(np.asarray(got), want)
    got = vmap(lambda r: jnp.partition(r, 2))(x)
    np.testing.assert_array_equal(np.asarray(got)[:, 2], np.sort(x, axis=1)[:, 2])


def test_gradients():
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    check_grads(lambda x: jnp.sort(x, axis=0), (x,), order=1, modes=("rev",))
    check_grads(lambda x: jnp.sort(x, descending=True), (x,), order=1, modes=("fwd",))
    check_grads(lambda x: jnp.partition(x, 2), (x,), order=1, modes=("rev",))


def test_errors():
    with pytest.raises(TypeError, match="'kind' argument to sort is not supported"):
        jnp.sort(np.ones(3), kind="stable")
    with pytest.raises(TypeError, match="'order' argument to argsort"):
        jnp.argsort(np.ones(3), order="x")
    with pytest.raises(TypeError, match="sort requires ndarray or scalar arguments"):
        jnp.sort([3, 1])
    with pytest.raises(ValueError, match="axis -1 is out of bounds for array of dimension 0"):
        jnp.sort(3.0)
    with pytest.raises(NotImplementedError, match="complex dtype"):
        jnp.partition(np.ones(3, np.complex64), 1)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.partition(np.ones(3), 3)
    with pytest.raises(ValueError, match="a should be 1-dimensional"):
        jnp.searchsorted(np.ones((2, 2)), 1.0)
    with pytest.raises(ValueError, match="invalid argument method='x'"):
        jnp.searchsorted(np.ones(2), 1.0, method="x")
    with pytest.raises(ValueError, match="invalid argument side='x'"):
        jnp.searchsorted(np.ones(2), 1.0, side="x")
    with pytest.raises(TypeError, match="need sequence of keys"):
        jnp.lexsort([])
    with pytest.raises(ValueError, match="same shape"):
        jnp.lexsort([np.ones(2), np.ones(3)])


def test_weak_types_and_x64_dtypes():
    weak = jnp.where(np.array([True, False, True]), 1.0, 2.0)
    assert weak.weak_type
    # Recorded from JAX 0.10.2: sorted values stay weakly typed, indices never are.
    assert jnp.sort(weak).weak_type and jnp.partition(weak, 1).weak_type
    assert not jnp.argsort(weak).weak_type
    with enable_x64(True):
        x = np.array([3.0, 1.0, 2.0])
        assert jnp.sort(x).dtype == np.float64
        assert jnp.argsort(x).dtype == jnp.lexsort([x]).dtype == np.int64
        # ... but searchsorted and argpartition keep int32 indices, as in JAX.
        assert jnp.searchsorted(np.sort(x), 2.0).dtype == np.int32
        assert jnp.argpartition(x, 1).dtype == np.int32
