"""lamina.numpy joining and splitting (concatenate, stack, h/v/dstack, column_stack,
block, split and friends, unstack) and repeat/tile/append/insert/delete against
NumPy and recorded JAX results: dtypes and weak types, traced arguments, jit, vmap,
derivatives and JAX's errors."""

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina.interpreters import ConcretizationTypeError, jit, vmap
from lamina.interpreters.test_util import check_grads

RNG = np.random.default_rng(1)


def _data(shape, dtype="float32"):
    return RNG.integers(-9, 10, shape).astype(dtype)


def _check(result, expected, dtype=None, weak=False):
    expected = np.asarray(expected)
    assert result.shape == expected.shape
    assert result.dtype == (dtype or expected.dtype)
    assert result.weak_type == weak
    np.testing.assert_array_equal(np.asarray(result), expected)


def test_concatenate_promotes_and_flattens():
    x, i = _data((2, 3)), _data((3,), "int32")
    _check(jnp.concatenate([x, i], axis=None), np.concatenate([x, i], axis=None), np.float32)
    _check(jnp.concatenate([x, x], 1), np.concatenate([x, x], 1))
    _check(jnp.concatenate([x, x[:0]], -2), x)
    _check(jnp.concatenate([1.0, 2.0], axis=None), np.array([1, 2], np.float32), weak=True)
    _check(jnp.concatenate([i, 2.0], axis=None), np.array([*i, 2], np.float32), weak=True)
    _check(jnp.concatenate([np.array([True]), np.array([2], np.int8)]), np.array([1, 2], "i1"))
    _check(jnp.concatenate([x, x], dtype="int32"), np.concatenate([x, x]).astype("int32"))
    _check(jnp.concatenate(x), np.concatenate(list(x)))
    cube = _data((2, 3, 4))
    _check(jnp.concatenate(cube, axis=1), np.concatenate(list(cube), 1))
    _check(jnp.concat([x, x], axis=None), np.concatenate([x, x], axis=None))


def test_concatenate_errors():
    x = _data((2, 3))
    with pytest.raises(ValueError, match="Need at least one array to concatenate"):
        jnp.concatenate([])
    with pytest.raises(ValueError, match="Zero-dimensional arrays cannot be concatenated"):
        jnp.concatenate([np.float32(1), np.float32(2)])
    with pytest.raises(TypeError, match="different numbers of dimensions"):
        jnp.concatenate([x, x[0]])
    with pytest.raises(TypeError, match="differ in dimensions other than"):
        jnp.concatenate([x, x.T])
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        jnp.concatenate([x, x], axis=2)
    with pytest.raises(TypeError, match="concatenate requires ndarray or scalar"):
        jnp.concatenate(([1, 2], [3]))
    with pytest.raises(ValueError, match="Need at least one array"):
        jnp.concatenate(np.float32(1))


def test_stack_family():
    x, i = _data((2, 3)), _data((3,), "int32")
    _check(jnp.stack([x, x], -1), np.stack([x, x], -1))
    _check(jnp.stack([1.0, 2.0]), np.array([1, 2], np.float32), weak=True)
    _check(jnp.stack(x, 1), np.stack(list(x), 1))
    _check(jnp.stack([x, x], dtype="float16"), np.stack([x, x]).astype("float16"))
    _check(jnp.hstack([i, i]), np.hstack([i, i]))
    _check(jnp.hstack([x, x]), np.hstack([x, x]))
    _check(jnp.hstack([1, 2]), np.array([1, 2], np.int32), weak=True)
    _check(jnp.hstack(x), np.hstack(list(x)))
    _check(jnp.vstack([i, i]), np.vstack([i, i]))
    _check(jnp.vstack([1, 2]), np.array([[1], [2]], np.int32), weak=True)
    _check(jnp.vstack(x), np.vstack(list(x)))
    _check(jnp.dstack([i, i]), np.dstack([i, i]))
    _check(jnp.dstack([x, x]), np.dstack([x, x]))
    cube = _data((2, 3, 4))
    _check(jnp.dstack(cube), np.dstack(list(cube)))
    _check(jnp.column_stack([i, x.T]), np.column_stack([i, x.T]).astype(np.float32))
    _check(jnp.column_stack([1, 2]), np.array([[1, 2]], np.int32), weak=True)
    _check(jnp.column_stack(x), np.column_stack(list(x)))
    _check(jnp.hstack([i, i], dtype="float32"), np.hstack([i, i]).astype("float32"))


def test_stack_errors():
    x = _data((2, 3))
    with pytest.raises(ValueError, match="Need at least one array to stack"):
        jnp.stack([])
    with pytest.raises(ValueError, match="must have the same shape"):
        jnp.stack([x, x.T])
    with pytest.raises(ValueError, match="axis 3 is out of bounds"):
        jnp.stack([x, x], 3)
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.stack([x, x], out=x)


def test_block():
    x, col = _data((2, 3)), _data((2, 1), "int32")
    _check(jnp.block([[x, x], [x, x]]), np.block([[x, x], [x, x]]))
    _check(jnp.block([[x, col], [np.zeros((1, 4), np.float32)]]),
           np.block([[x, col], [np.zeros((1, 4), np.float32)]]).astype(np.float32))  # fmt: skip
    _check(jnp.block([[[x]], [[x]]]), np.block([[[x]], [[x]]]))
    _check(jnp.block([1, 2]), np.array([1, 2], np.int32), weak=True)
    _check(jnp.block([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]], np.int32), weak=True)
    _check(jnp.block(1.0), np.float32(1), weak=True)
    _check(jnp.block(x), x)
    with pytest.raises(ValueError, match="Mismatched list depths"):
        jnp.block([[1, 2], 3])
    with pytest.raises(ValueError, match="empty list"):
        jnp.block([[]])
    with pytest.raises(ValueError, match="does not allow tuples"):
        jnp.block((x, x))


@pytest.mark.parametrize(
    "fun, shape, arg, axis",
    [
        ("split", (6,), 3, 0),
        ("split", (6, 2), [1, 4], 0),
        ("split", (2, 6), np.array([2, 2, 5]), 1),
        ("split", (4, 6), 2.0, -1),
        ("split", (0, 3), 2, 0),
        ("array_split", (7,), 3, 0),
        ("array_split", (2,), 4, 0),
        ("array_split", (3, 7), [2, 6], 1),
        ("hsplit", (6,), 2, None),
        ("hsplit", (2, 6), [1, 3], None),
        ("vsplit", (4, 3), 2, None),
        ("dsplit", (2, 2, 4), 2, None),
    ],
)
def test_splits_match_numpy(fun, shape, arg, axis):
    x = _data(shape, "int32")
    args = (arg,) if axis is None else (arg, axis)
    np_arg = int(arg) if isinstance(arg, float) else arg
    np_args = (np_arg,) if axis is None else (np_arg, axis)
    pieces = getattr(jnp, fun)(x, *args)
    assert isinstance(pieces, list)
    expected = getattr(np, fun)(x, *np_args)
    assert len(pieces) == len(expected)
    for piece, reference in zip(pieces, expected, strict=True):
        _check(piece, reference)


def test_split_errors_and_unstack():
    x = np.arange(6, dtype=np.int32)
    with pytest.raises(ValueError, match="does not result in an equal division: rest is 2"):
        jnp.split(x, 4)
    with pytest.raises(ValueError, match="Sizes passed to split must be nonnegative"):
        jnp.split(x, [4, 1])
    with pytest.raises(ValueError, match="larger than 0"):
        jnp.split(x, 0)
    with pytest.raises(IndexError):
        jnp.dsplit(x.reshape(2, 3), 2)
    with pytest.raises(TypeError, match="split requires ndarray"):
        jnp.split([1, 2], 1)
    with pytest.raises(ConcretizationTypeError, match=r"jax\.numpy\.split"):
        jit(jnp.split)(x, np.array([2]))
    y = _data((2, 3, 4))
    pieces = jnp.unstack(y, axis=1)
    assert isinstance(pieces, tuple) and len(pieces) == 3
    for k, piece in enumerate(pieces):
        _check(piece, y[:, k])
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.unstack(np.float32(1))


def test_joining_under_jit_vmap_and_grad():
    x, y = _data((2, 3)), _data((2, 3))

    def joined(a, b):
        return [
            jnp.concatenate([a, b], 1),
            jnp.stack([a, b], 1),
            jnp.hstack([a, b]),
            jnp.vstack([a, b]),
            jnp.block([[a], [b]]),
            *jnp.array_split(a, 2, 1),
        ]

    for result, eager in zip(jit(joined)(x, y), joined(x, y), strict=True):
        np.testing.assert_array_equal(np.asarray(result), np.asarray(eager))
    batched = vmap(lambda a, b: jnp.stack([a, b], -1))(x, y)
    for k in range(2):
        np.testing.assert_array_equal(np.asarray(batched)[k], np.stack([x[k], y[k]], -1))
    check_grads(lambda a, b: jnp.concatenate([a, 2 * b], 0), (x, y), order=2, eps=1e-3)
    check_grads(lambda a, b: jnp.stack([a, b], 1), (x, y), order=1, eps=1e-3)
    check_grads(lambda a: jnp.split(a, [1], 1)[1], (x,), order=1, eps=1e-3)


@pytest.mark.parametrize(
    "shape, repeats, axis",
    [
        ((2, 3), 2, None),
        ((2, 3), 2, 1),
        ((2, 3), np.array([1, 0, 2]), 1),
        ((2, 3), np.array([3, 1]), 0),
        ((2, 3), np.array([2]), -1),
        ((), 3, None),
        ((0, 3), 2, 0),
        ((4,), np.array([2, 2, 2, 2]), 0),
        ((3,), np.int64(0), None),
    ],
)
def test_repeat_matches_numpy(shape, repeats, axis):
    x = _data(shape, "int32")
    _check(jnp.repeat(x, repeats, axis), np.repeat(x, repeats, axis))


def test_repeat_total_length_and_traced_repeats():
    i = np.arange(3, dtype=np.int32)
    counts = np.array([1, 1, 2])
    # Recorded from JAX 0.10.2: the result is cut at total_repeat_length, or extended
    # with the last element.
    _check(jnp.repeat(i, counts, total_repeat_length=6), np.array([0, 1, 2, 2, 2, 2], np.int32))
    _check(jnp.repeat(i, counts, total_repeat_length=2), np.array([0, 1], np.int32))
    _check(jnp.repeat(i, 2, total_repeat_length=5), np.array([0, 0, 1, 1, 2], np.int32))
    _check(jnp.repeat(i, 2, total_repeat_length=8), np.array([0, 0, 1, 1, 2, 2, 2, 2], np.int32))
    traced = jit(lambda r: jnp.repeat(i, r, total_repeat_length=6))
    _check(traced(counts), np.array([0, 1, 2, 2, 2, 2], np.int32))
    _check(traced(np.array([0, 3, 0])), np.array([1, 1, 1, 2, 2, 2], np.int32))
    _check(
        jit(lambda r: jnp.repeat(i, r, total_repeat_length=5))(2),
        np.array([0, 0, 1, 1, 2], np.int32),
    )
    x = _data((2, 3))
    by_row = jit(lambda r: jnp.repeat(x, r, axis=1, total_repeat_length=4))(np.array([2, 0, 2]))
    _check(by_row, np.repeat(x, [2, 0, 2], axis=1))
    _check(jnp.repeat(2.0, 3), np.full(3, 2, np.float32), weak=True)
    with pytest.raises(ConcretizationTypeError, match="total_repeat_length"):
        jit(lambda r: jnp.repeat(i, r))(counts)
    with pytest.raises(TypeError, match="repeat requires ndarray"):
        jnp.repeat(i, [1, 2, 3])
    with pytest.raises(ValueError, match="negative"):
        jnp.repeat(i, -1)
    with pytest.raises(ValueError, match="repeat counts"):
        jnp.repeat(i, np.array([1, 2]))
    with pytest.raises(TypeError, match="integers"):
        jnp.repeat(i, 2.0)


def test_repeat_and_tile_grads_and_vmap():
    x = _data((2, 3))
    check_grads(lambda a: jnp.repeat(a, 2, 0), (x,), order=2, eps=1e-3)
    check_grads(lambda a: jnp.repeat(a, np.array([1, 0, 3]), 1), (x,), order=1, eps=1e-3)
    check_grads(lambda a: jnp.tile(a, (2, 1, 2)), (x,), order=1, eps=1e-3)
    batched = vmap(lambda a: jnp.repeat(a, np.array([2, 1, 0])))(x)
    np.testing.assert_array_equal(np.asarray(batched), np.repeat(x, [2, 1, 0], axis=1))
    batched = vmap(lambda a: jnp.tile(a, 2))(x)
    np.testing.assert_array_equal(np.asarray(batched), np.tile(x, 2))


@pytest.mark.parametrize(
    "shape, reps",
    [((3,), 2), ((3,), (2, 2)), ((2, 3), 2), ((2, 3), 0), ((), (2, 3)), ((2, 3), np.array([2, 1]))],
)
def test_tile_matches_numpy(shape, reps):
    x = _data(shape, "float32")
    _check(jnp.tile(x, reps), np.tile(x, reps))


def test_tile_weak_and_errors():
    _check(jnp.tile(1.0, (2,)), np.ones(2, np.float32), weak=True)
    _check(jnp.tile(1.0, ()), np.float32(1), weak=True)
    with pytest.raises(ValueError, match="non-negative"):
        jnp.tile(_data(3), -1)
    with pytest.raises(TypeError, match="tile requires ndarray"):
        jnp.tile([1], 2)


def test_append():
    x, i = _data((2, 3)), _data((3,), "int32")
    _check(jnp.append(x, i), np.append(x, i).astype(np.float32))
    _check(jnp.append(x, x, axis=0), np.append(x, x, axis=0))
    _check(jnp.append(1.0, 2), np.array([1, 2], np.float32), weak=True)
    with pytest.raises(TypeError, match="different numbers of dimensions"):
        jnp.append(x, i, axis=0)


@pytest.mark.parametrize(
    "shape, obj, values, axis",
    [
        ((3,), -1, 9, None),
        ((3,), 3, 9, None),
        ((3,), np.array([2, 0]), np.array([7, 8]), None),
        ((3,), np.array([1, 1]), np.array([7, 8]), None),
        ((3,), slice(0, 2), np.array([7, 8]), None),
        ((2, 3), 1, np.array([7, 8]), 1),
        ((2, 3), 1, np.array([7, 8, 9]), 0),
        ((2, 3), np.array([1]), np.array([7, 8]), 1),
        ((2, 3), np.array([0, 2]), np.array([[7, 8], [1, 2]]), 1),
        ((2, 3), np.array([5, -5]), 4, 1),
    ],
)
def test_insert_matches_numpy_and_traced(shape, obj, values, axis):
    x = _data(shape, "int32")
    expected = np.insert(x, np.clip(obj, -shape[-1], shape[-1]) if np.ndim(obj) else obj, values,
                         axis)  # fmt: skip
    if isinstance(obj, np.ndarray) and (obj >= 4).any():
        expected = np.insert(x, np.clip(obj, -3, 3), values, axis)
    _check(jnp.insert(x, obj, values, axis), expected)
    if np.ndim(obj) == 1 or obj == -1:  # a sample, with the index traced
        _check(jit(lambda o: jnp.insert(x, o, values, axis))(obj), expected)


def test_insert_converts_values_and_errors():
    i = np.arange(3, dtype=np.int32)
    _check(jnp.insert(i, 1, 9.7), np.array([0, 9, 1, 2], np.int32))
    _check(jnp.insert(np.float32(1), 0, 9), np.array([9, 1], np.float32))
    with pytest.raises(ValueError, match="must be integer typed"):
        jnp.insert(i, 1.0, 9)
    with pytest.raises(ValueError, match="must be integer typed"):
        jnp.insert(i, np.array([True, False]), 9)
    with pytest.raises(ValueError, match="one-dimensional array"):
        jnp.insert(i, np.array([[1]]), 7)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        jnp.insert(i, np.array([0, 2]), np.array([5, 6, 7]))
    with pytest.raises(TypeError, match="insert requires ndarray"):
        jnp.insert(i, [1], 7)


@pytest.mark.parametrize(
    "shape, obj, axis",
    [
        ((3,), 1, None),
        ((3,), -1, None),
        ((3,), np.array([0, 0, -1]), None),
        ((3,), np.array([], np.int32), None),
        ((3,), np.array([True, False, True]), None),
        ((10,), slice(1, 8, 2), None),
        ((2, 3), 1, 1),
        ((2, 3), 1, None),
        ((4, 3), np.array([[0], [3]]), 0),
    ],
)
def test_delete_matches_numpy(shape, obj, axis):
    x = _data(shape, "float32")
    _check(jnp.delete(x, obj, axis), np.delete(x, obj, axis))


def test_delete_traced_unique_and_errors():
    x = _data((3, 4), "float32")
    unique = jit(lambda o: jnp.delete(x, o, 1, assume_unique_indices=True))
    _check(unique(np.array([3, 0])), np.delete(x, [3, 0], 1))
    _check(unique(np.int32(-1)), np.delete(x, -1, 1))
    check_grads(lambda a: jnp.delete(a, np.array([0, 2]), 1), (x,), order=1)
    check_grads(lambda a: jnp.insert(a, 1, 5.0, 1), (x,), order=1)
    with pytest.raises(ConcretizationTypeError, match="assume_unique_indices"):
        jit(lambda o: jnp.delete(x, o))(1)
    with pytest.raises(IndexError, match="out of bounds"):
        jnp.delete(x, np.array([0, 5]), 1)
    with pytest.raises(ValueError, match="boolean indices"):
        jnp.delete(x, np.array([True, False]), 1)
    with pytest.raises(ValueError, match="must be integer or bool"):
        jnp.delete(x, 1.0)
    with pytest.raises(TypeError, match="delete requires ndarray"):
        jnp.delete(x, [0])
