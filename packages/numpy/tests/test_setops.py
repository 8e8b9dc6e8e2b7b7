"""lamina.numpy set operations against NumPy: unique (every return_*, axis, NaNs with
and without equal_nan, complex), unique_all / unique_counts / unique_inverse /
unique_values, isin with every method, intersect1d (with indices), union1d,
setdiff1d, setxor1d; size= and fill_value= padding under jit (recorded from JAX
0.10.2), the ConcretizationTypeError without size, and errors."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, enable_x64, jit, vmap

RNG = np.random.default_rng(3)


def assert_same(got, want, dtype=None):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == (want.dtype if dtype is None else dtype), got.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


CASES = [
    (RNG.integers(0, 5, (4, 3)).astype(np.int32), None),
    (np.array([2.0, np.nan, 1.0, np.nan, 2.0, -0.0, 0.0], np.float32), None),
    (RNG.integers(0, 2, (6, 3)).astype(np.int8), 0),
    (RNG.integers(0, 2, (2, 5, 2)).astype(np.uint8), 1),
    (np.array([True, False, True]), None),
    (np.array([1 + 1j, 1 - 1j, 1 + 1j, 0j], np.complex64), None),
    (np.zeros((0,), np.float32), None),
]


@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: str(CASES[i][0].dtype))
def test_unique_matches_numpy(case):
    x, axis = CASES[case]
    got = jnp.unique(x, True, True, True, axis=axis)
    want = np.unique(x, True, True, True, axis=axis, equal_nan=True)
    assert_same(got[0], want[0])
    for g, w in zip(got[1:], want[1:], strict=True):
        assert_same(g, w.astype(np.int32))


def test_unique_nans_and_array_api_forms():
    x = np.array([np.nan, 1.0, np.nan, 3.0, 1.0], np.float32)
    assert_same(jnp.unique(x), np.array([1.0, 3.0, np.nan], np.float32))
    assert_same(jnp.unique(x, equal_nan=False), np.unique(x, equal_nan=False))
    assert_same(jnp.unique_values(x), np.unique_values(x))
    for got, want in zip(jnp.unique_all(x), np.unique_all(x), strict=True):
        assert_same(got, np.asarray(want).astype(got.dtype))
    result = jnp.unique_counts(x)
    assert type(result).__name__ == "_UniqueCountsResult" and result._fields == ("values", "counts")
    assert_same(result.counts, np.unique_counts(x).counts.astype(np.int32))
    result = jnp.unique_inverse(x.reshape(5, 1))
    assert result._fields == ("values", "inverse_indices")
    assert_same(
        result.inverse_indices, np.unique_inverse(x.reshape(5, 1)).inverse_indices.astype(np.int32)
    )
    assert jnp.unique_all(x)._fields == ("values", "indices", "inverse_indices", "counts")
    # Complex NaNs group into one, printed as nan+0j (recorded from JAX 0.10.2).
    z = np.array([1 + 1j, np.nan, complex(1, np.nan), 1 + 1j], np.complex64)
    got = np.asarray(jnp.unique(z))
    assert got.shape == (2,) and got[0] == 1 + 1j and np.isnan(got[1].real) and got[1].imag == 0


def test_unique_with_size_under_jit():
    x = np.array([3, 1, 1, 4, 3, 3], np.int32)

    def padded(x):
        return (
            jnp.unique(x, True, True, True, size=5),
            jnp.unique(x, size=2),
            jnp.unique(x, size=4, fill_value=-1),
            jnp.unique_counts(x, size=4, fill_value=0),
        )

    full, short, filled, counts = jit(padded)(x)
    # Recorded from JAX 0.10.2: padding repeats the smallest value, counts pad with 0.
    assert full[0].tolist() == [1, 3, 4, 1, 1]
    assert full[1].tolist() == [1, 0, 3, 1, 1]
    assert full[2].tolist() == [1, 0, 0, 2, 1, 1]
    assert full[3].tolist() == [2, 3, 1, 0, 0]
    assert short.tolist() == [1, 3]
    assert filled.tolist() == [1, 3, 4, -1]
    assert counts.values.tolist() == [1, 3, 4, 0] and counts.counts.tolist() == [2, 3, 1, 0]
    empty = jnp.unique(np.zeros(0, np.float32), True, True, True, size=2, fill_value=1)
    assert empty[0].tolist() == [1.0, 1.0] and [e.shape for e in empty[1:]] == [(0,)] * 3
    rows = jnp.unique(np.array([[1, 2], [0, 5], [1, 2]], np.int32), axis=0, size=3, fill_value=7)
    assert rows.tolist() == [[0, 5], [1, 2], [7, 7]]
    got = vmap(lambda r: jnp.unique(r, size=3, fill_value=-1))(np.array([[2, 2, 1], [5, 6, 7]]))
    assert got.tolist() == [[1, 2, -1], [5, 6, 7]]
    with pytest.raises(ConcretizationTypeError, match="specify a concrete value for the size"):
        jit(jnp.unique)(x)
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(np.zeros(0), size=2)


METHODS = ["auto", "compare_all", "binary_search", "sort"]


@pytest.mark.parametrize("method", METHODS)
def test_isin(method):
    element = np.array([[1.0, 5.0, np.nan], [3.0, 2.0, 2.0]], np.float32)
    test = np.array([2, 3, 3, 9, 0], np.int32)
    nan_test = np.array([np.nan, 1.0], np.float32)

    def run(element, test, nan_test):
        return (
            jnp.isin(element, test, method=method),
            jnp.isin(element, test, invert=True, method=method),
            jnp.isin(element, nan_test, method=method),
            jnp.isin(element, np.zeros(0, np.float32), method=method),
        )

    found, missing, nans, empty = jit(run)(element, test, nan_test)
    assert_same(found, np.isin(element, test))
    assert_same(missing, np.isin(element, test, invert=True))
    assert_same(nans, np.isin(element, nan_test))
    assert_same(empty, np.zeros(element.shape, bool))


def test_isin_errors_and_scalars():
    assert jnp.isin(2, np.array([1, 2])).shape == ()
    with pytest.raises(ValueError, match=r"method='x' is not implemented"):
        jnp.isin(1, 2, method="x")
    with pytest.raises(TypeError, match="isin requires ndarray"):
        jnp.isin([1], 2)


A = np.array([5, 3, 1, 1, 7, 3], np.int32)
B = np.array([3, 9, 1, 1, 0], np.int32)


def test_set_functions_match_numpy():
    assert_same(jnp.union1d(A, B), np.union1d(A, B))
    assert_same(jnp.setdiff1d(A, B), np.setdiff1d(A, B))
    assert_same(jnp.setxor1d(A, B), np.setxor1d(A, B))
    got = jnp.intersect1d(A, B, return_indices=True)
    for g, w in zip(got, np.intersect1d(A, B, return_indices=True), strict=True):
        assert_same(g, w.astype(g.dtype))
    ua, ub = np.unique(A), np.unique(B)
    assert_same(jnp.setdiff1d(ua, ub, assume_unique=True), np.setdiff1d(ua, ub, True))
    assert_same(jnp.setxor1d(ua, ub, assume_unique=True), np.setxor1d(ua, ub, True))
    got = jnp.intersect1d(ua, ub, assume_unique=True, return_indices=True)
    for g, w in zip(got, np.intersect1d(ua, ub, True, return_indices=True), strict=True):
        assert_same(g, w.astype(g.dtype))
    floats = np.array([3.0, 1.5], np.float32)
    assert_same(jnp.intersect1d(floats, A), np.array([3.0], np.float32))
    assert_same(jnp.setdiff1d(np.zeros(0, np.int32), B), np.zeros(0, np.int32))


def test_set_functions_with_size_under_jit():
    def padded(a, b):
        return (
            jnp.union1d(a, b, size=9, fill_value=-1),
            jnp.setdiff1d(a, b, size=4),
            jnp.setxor1d(a, b, size=6),
            jnp.intersect1d(a, b, size=4),
            jnp.intersect1d(a, b, return_indices=True, size=4),
            jnp.setdiff1d(a, b, size=1, fill_value=8),
        )

    union, diff, xor, inter, (values, ia, ib), short = jit(padded)(A, B)
    # Recorded from JAX 0.10.2 (defaults: union pads with its smallest value, setdiff1d
    # with 0, setxor1d and intersect1d with their smallest value; missing indices with
    # the arrays' lengths).
    assert union.tolist() == [0, 1, 3, 5, 7, 9, -1, -1, -1]
    assert diff.tolist() == [5, 7, 0, 0]
    assert xor.tolist() == [0, 5, 7, 9, 0, 0]
    assert inter.tolist() == [1, 3, 1, 1]
    assert values.tolist() == [1, 3, 1, 1]
    assert ia.tolist() == [2, 1, 6, 6] and ib.tolist() == [2, 0, 5, 5]
    assert short.tolist() == [5]
    for fun in (jnp.union1d, jnp.setdiff1d, jnp.setxor1d, jnp.intersect1d):
        with pytest.raises(ConcretizationTypeError, match="size"):
            jit(fun)(A, B)


def test_x64_index_dtypes_and_weak_values():
    weak = jnp.where(np.array([True, False, True]), 1.0, 2.0)
    assert jnp.unique(weak).weak_type and jnp.union1d(weak, weak).weak_type
    with enable_x64(True):
        x = np.array([3, 1, 1, 2])
        values, index, inverse, counts = jnp.unique(x, True, True, True)
        assert values.dtype == np.int64
        assert index.dtype == inverse.dtype == counts.dtype == np.int64
        assert jnp.intersect1d(x, x[:2], return_indices=True)[1].dtype == np.int64
        # Recorded from JAX 0.10.2: inputs promised unique give int32 indices.
        ua = np.array([1, 2, 3])
        _, ia, ib = jnp.intersect1d(ua, ua[1:], assume_unique=True, return_indices=True)
        assert ia.dtype == ib.dtype == np.int32 and ia.tolist() == [1, 2] and ib.tolist() == [0, 1]
