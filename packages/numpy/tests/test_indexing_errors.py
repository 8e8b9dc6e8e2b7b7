"""The errors of ``x[idx]`` and ``x.at[idx]``: JAX 0.10.2's exception types, with
messages that say what went wrong (texts recorded from JAX where lamina matches them)."""

import warnings

import numpy as np
import pytest

import lamina.numpy  # noqa: F401  (installs x[idx], x.at and the methods on arrays)
from lamina.interpreters import JAXIndexError, NonConcreteBooleanIndexError, device_put, jit

X = device_put(np.arange(12.0, dtype=np.float32).reshape(3, 4))


def _index(idx):
    return lambda: X[idx]


@pytest.mark.parametrize(
    "make, error, message",
    [
        (_index(1.5), TypeError, "Indexer must have integer or boolean type, got indexer with "
         "type float64"),
        (_index((0, 1.5)), TypeError, "got indexer with type float64"),
        (_index(1j), TypeError, "got indexer with type complex128"),
        (_index(np.float32(1)), TypeError, "got indexer with type float32"),
        (_index(np.array([0.0, 1.0])), TypeError, "got indexer with type float64"),
        (_index(device_put(np.float32(1))), TypeError, "got indexer with type float32"),
        (_index((0, [0, 1.5])), TypeError, "got indexer with type float32"),
        (_index((1, 2, 3)), IndexError, "Too many indices: array is 2-dimensional, but 3 were "
         "indexed"),
        (_index(np.ones((3, 4, 1), bool)), IndexError, "but 3 were indexed"),
        (_index([0, 1]), TypeError, "Using a non-tuple sequence for multidimensional indexing "
         "is not allowed"),
        (_index("a"), TypeError, "JAX does not support string indexing; got idx='a'"),
        (_index((0, "a")), TypeError, "does not support string indexing"),
        (_index((..., 0, ...)), IndexError, "an index can only have a single ellipsis ('...')"),
        (_index({0: 1}), IndexError, "only integers, slices (`:`), ellipsis (`...`), newaxis "
         "(`None`) and integer or boolean arrays are valid indices. Got {0: 1}"),
        (_index(np.array([True, False])), IndexError, "boolean index did not match shape of "
         "indexed array in index 0: got (2,), expected [3]"),
        (_index((np.array([0, 1, 2]), np.array([0, 1]))), ValueError,
         "Incompatible shapes for broadcasting: shapes=[(3,), (2,)]"),
        (_index(slice(0, 2.5)), TypeError, "'float' object cannot be interpreted as an integer"),
        (_index(slice(None, None, 0)), ValueError, "slice step cannot be zero"),
        (lambda: device_put(np.zeros((0, 3), np.float32))[0], IndexError,
         "index is out of bounds for axis 0 with size 0"),
        (lambda: device_put(np.float32(1))[0], IndexError, "array is 0-dimensional, but 1"),
    ],
)  # fmt: skip
def test_indexing_errors(make, error, message):
    with pytest.raises(error) as info:
        make()
    assert message in str(info.value)


def test_traced_boolean_mask_raises_non_concrete_boolean_index_error():
    with pytest.raises(NonConcreteBooleanIndexError) as info:
        jit(lambda x: x[x > 3])(X)
    assert isinstance(info.value, IndexError) and isinstance(info.value, JAXIndexError)
    text = str(info.value)
    assert text.startswith("Array boolean indices must be concrete; got bool[3,4]")
    assert "jnp.where" in text and "errors.html#jax.errors.NonConcreteBooleanIndexError" in text
    with pytest.raises(NonConcreteBooleanIndexError, match=r"got bool\[\]"):
        jit(lambda x, m: x[m])(X, True)
    with pytest.raises(NonConcreteBooleanIndexError):
        jit(lambda x: x.at[x > 3].set(0.0))(X)


def test_traced_slice_bounds_raise_index_error():
    with pytest.raises(IndexError, match=r"Slice entries must be static integers\. Got slice"):
        jit(lambda x, i: x[i:])(X, 1)
    # a concrete array is a static bound, as in JAX
    np.testing.assert_array_equal(np.asarray(X[device_put(np.int32(2)) :]), np.asarray(X)[2:])


def test_item_assignment_is_refused():
    with pytest.raises(TypeError, match="JAX arrays are immutable") as info:
        X[0] = 1.0
    assert "x.at[idx].set(y)" in str(info.value)

    def assign(x):
        x[0] = 1.0
        return x

    with pytest.raises(TypeError, match="do not support in-place item assignment"):
        jit(assign)(X)


@pytest.mark.parametrize(
    "update, error, message",
    [
        (lambda: X.at[0, 0].set(np.ones(2, np.float32)), ValueError,
         "Cannot broadcast to shape with fewer dimensions: arr_shape=(2,) shape=()"),
        (lambda: X.at[:2].set(np.ones(3, np.float32)), ValueError,
         "do not broadcast to the indexed shape (2, 4)"),
        (lambda: X.at[1].get(mode="bad"), ValueError, 'Unknown gather mode "bad"'),
        (lambda: X.at[1].add(1.0, mode="bad"), ValueError, 'Unknown gather mode "bad"'),
        (lambda: device_put(np.ones(3, bool)).at[0].add(True), TypeError,
         "add does not accept dtype bool"),
        (lambda: X.at[[0, 1]].set(1.0), TypeError, "non-tuple sequence"),
        (lambda: X.at[0].set("a"), TypeError, "requires ndarray or scalar arguments"),
    ],
)  # fmt: skip
def test_update_errors(update, error, message):
    with pytest.raises(error) as info:
        update()
    assert message in str(info.value)


def test_lossy_update_casts_warn_like_jax():
    ints = device_put(np.arange(3, dtype=np.int32))
    with pytest.warns(FutureWarning, match="cannot safely cast value from dtype=float32 to "
                      "dtype=int32") as record:  # fmt: skip
        out = ints.at[0].set(2.5)
    assert record[0].filename == __file__  # points at the caller
    np.testing.assert_array_equal(np.asarray(out), [2, 1, 2])
    with pytest.warns(FutureWarning, match="from dtype=int32 to dtype=int8"):
        device_put(np.ones(3, np.int8)).at[0].add(np.int32(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ints.at[0].set(7)  # a weak Python int fits: no warning
        X.at[0].add(np.float16(1))
